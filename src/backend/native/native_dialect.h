// C++ as a CDialect (backend/c_like_render.h): alu_eval's semantics of each legalized op in
// the kernel's C++, with plain float32 code where it equals rounding the double result (what
// g++ vectorizes) and integer arithmetic unwrapped where the value range proves it cannot wrap.
#pragma once
#include <map>
#include <string>

#include "backend/c_like_render.h"

namespace kiln::native {

// The C++ type holding a value of dtype in registers (float16 as a float holding it exactly).
const char* ctype(DType d);
// How elements sit in memory (float16 as its bits, bool as one byte).
const char* storage_type(DType d);
// A C++ constant of dtype with exactly the value v.
std::string literal(DType d, double v);

class NativeDialect : public CDialect {
 public:
  // guards: per Load node, whether its index needs a bounds check (see load_guards).
  explicit NativeDialect(const std::map<const AluNode*, bool>& guards) : guards_(guards) {}
  const char* name() const override { return "native"; }
  const char* type(DType d) const override { return ctype(d); }
  std::string literal(DType d, double v) const override { return native::literal(d, v); }
  std::string declare(DType d, const std::string& name, const std::string& expr) const override;
  std::string load(const AluNode& n, const std::string& index) const override;
  std::string select(const CValue& c, const CValue& a, const CValue& b) const override;
  std::string is_nan(const CValue& x) const override { return "(" + x.s + " != " + x.s + ")"; }
  std::string cast(DType to, const CValue& x) const override;
  std::string bitcast(DType to, const CValue& x) const override;
  std::string retype(DType d) const override { return "(" + std::string(ctype(d)) + ")"; }
  std::string int_op(AluOp op, DType d, const std::vector<CValue>& a, const CValue& res) const override;
  std::string float_op(AluOp op, DType d, const std::vector<CValue>& a) const override;

 private:
  const std::map<const AluNode*, bool>& guards_;
};

}  // namespace kiln::native
