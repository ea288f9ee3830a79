// WGSL for legalized kernel expressions (ir/legalize.h): WGSL as a CDialect of the shared
// C-like renderer (backend/c_like_render.h), one `let` per distinct AluExp node, with
// alu_eval's semantics written out where WGSL's builtins differ (integer division by zero,
// NaN-propagating max/min, saturating float->int casts, shifts of 32 or more).
#pragma once
#include <sstream>
#include <string>

#include "backend/c_like_render.h"

namespace kiln::webgpu {

// The WGSL type that holds a value of dtype in registers (float16 is computed in f32 and
// rounded to half after every op; float64 has no WGSL type and is rejected).
const char* wgsl_type(DType d);
// A WGSL constant of dtype with exactly the value v (non-finite floats as bitcasts).
std::string wgsl_const(DType d, double v);
// The helper functions generated code may call (k_fmax, k_idiv, k_erf, ...).
const char* wgsl_prelude();

// Emits the statements computing a legalized expression into `body`; returns the name
// holding it. gidx/ridx/acc are named as the surrounding function calls them.
class ExprEmitter {
 public:
  ExprEmitter(std::string* body, std::string gidx, std::string ridx, std::string acc);
  std::string emit(const AluExp& e);
  // Names node n by `text` (a value computed by a statement added with `line`): emit() uses
  // it instead of rendering the node.
  void preset(const AluNode* n, std::string text) { scope_.preset(n, std::move(text)); }
  void line(const std::string& statement) { *body_ += statement; }

 private:
  std::string* body_;
  std::ostringstream os_;
  CScope scope_;
};

// The WGSL of `combine(acc, x)` for a legalized reduction op over dtype (NaN-propagating for
// floats; Or/And for bools).
std::string wgsl_combine(AluOp op, DType d, const std::string& acc, const std::string& x);
// The expression storing value `v` of dtype as the u32 word (4-byte types) or its bits in
// the low 16 (float16) or 8 (bool) bits.
std::string wgsl_store_bits(DType d, const std::string& v);

}  // namespace kiln::webgpu
