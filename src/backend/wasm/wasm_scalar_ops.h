// The scalar semantics of every AluOp as Wasm instructions, reproducing alu_eval exactly:
// the one place that decides how a dtype is held in Wasm and how each op rounds.
#pragma once
#include <functional>
#include <map>
#include <vector>

#include "backend/wasm/wasm_codegen.h"

namespace kiln::wasm {

// A value the emitter can use. Storage: i32 for bool/int32/uint32 (bool as 0/1), f32 for
// float32 and float16 (a float16 is an f32 holding a representable value), f64 for
// float64. A float32/float16 value is `wide` when it holds more precision than its dtype,
// which happens only for weak constants (alu_eval keeps their full double value until an
// op rounds); wide values live in f64 and ops that read them evaluate in f64, as the cpu does.
struct Val {
  DType dtype;
  bool wide = false;
  std::function<void()> push;  // pushes the storage value; may be called several times
};
ValType storage(DType dt, bool wide = false);
// Whether a constant of dtype needs f64 storage to keep its value.
bool const_is_wide(DType dt, double v);

class OpEmitter {
 public:
  explicit OpEmitter(CodeBuilder& c) : c_(c) {}
  CodeBuilder& code() { return c_; }
  const std::vector<Builtin>& imports() const { return imports_; }
  // Continues another emitter's import list (functions of one module share its imports).
  void adopt_imports(const OpEmitter& o) { imports_ = o.imports_, import_index_ = o.import_index_; }

  // Emits a legalized `op` (result dtype dt) over srcs and leaves its storage value on the stack;
  // returns whether the result is wide (only Where passes wideness through).
  bool emit(AluOp op, DType dt, const std::vector<Val>& srcs);
  void emit_const(DType dt, double v);
  // Pushes v converted to the Wasm type t (promoting f32, converting ints by signedness).
  void push_as(const Val& v, ValType t);
  void call_builtin(Builtin b);

  // Loads element `index` of a buffer (0 outside [0, count)), leaving its storage value.
  void emit_load(DType dt, uint32_t ptr_local, uint32_t count_local, const Val& index);
  // Stores v at address (pushed by push_addr) as dt's memory representation.
  void emit_store(DType dt, const std::function<void()>& push_addr, const Val& v);

  // Scratch locals, reused across ops (an op never needs two with the same slot).
  uint32_t temp(ValType t, int slot);

 private:
  void unary_float(AluOp op, DType dt, const Val& a);
  void unary_int(AluOp op, DType dt, const Val& a);
  void binary_float(AluOp op, DType dt, const Val& a, const Val& b);
  void binary_int(AluOp op, DType dt, const Val& a, const Val& b);
  void compare(AluOp op, const Val& a, const Val& b);
  void cast(DType to, const Val& a);
  void bitcast(DType to, const Val& a);
  void int_div(AluOp op, DType dt, const Val& a, const Val& b);
  // Rounds an f32 or f64 result of evaluation type `et` to float dtype dt's storage.
  void round_float(DType dt, ValType et, bool exact);
  void normalize_bool();  // i32 -> 0/1
  void round_f64_to_int(DType dt);  // an f64 result as round_to gives an int or bool

  CodeBuilder& c_;
  std::vector<Builtin> imports_;
  std::map<Builtin, uint32_t> import_index_;
  std::map<std::pair<ValType, int>, uint32_t> temps_;
};

}  // namespace kiln::wasm
