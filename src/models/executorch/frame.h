// kiln::executorch::Frame and OpCall: the values of one ExecuTorch method while it is traced
// (tensors as kiln Arrays, Ints computed at run time), and typed access for operator rules.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "formats/pte.h"
#include "frontend/array.h"

namespace kiln::executorch {

// kiln's dtype for an ExecuTorch scalar type: Long becomes int32 (kiln, like JAX by default,
// has no 64-bit integers), Double float64; types kiln lacks throw naming `where`.
DType kiln_dtype(formats::PteScalarType t, const std::string& where);

// One value slot: the program's constant as parsed, overwritten as instructions run.
// Tensors hold an Array once computed (constants are loaded before the first instruction).
struct Slot {
  const formats::PteValue* value = nullptr;  // the program's declaration of this value
  Array array;                               // tensors: the current contents
  std::optional<int64_t> runtime_int;        // Ints written by an instruction (sym_size)
  // Bucketed traces (symbolic.h): tensors' symbolic axes (a symbol id per axis, -1 static;
  // empty: all static) and an Int's symbol (-1: the Int is the static runtime_int).
  std::vector<int> axes;
  int sym = -1;
};

// A dynamic extent in a bucketed trace: `physical` is the array's size on the axis (the
// bucket's), `valid` the run-time extent, a 0-d int32 traced value (symbolic.h).
struct Sym {
  int64_t physical = 0;
  Array valid;
};

class Frame {
 public:
  Frame(const formats::PteExecutionPlan& plan, const std::vector<Array>& constants);
  Slot& slot(int32_t i) { return slots_.at(size_t(i)); }
  const Slot& slot(int32_t i) const { return slots_.at(size_t(i)); }
  const formats::PteExecutionPlan& plan() const { return *plan_; }

  // Stores a tensor value and notes which planned memory now holds it.
  void write(int32_t i, Array a);
  // A tensor's current contents. A planned tensor no instruction wrote is a view that export
  // resolved statically (a reshape sharing its base's memory): it reads the value last
  // written at the same planned memory location, reshaped. Empty when there is none.
  Array read(int32_t i);

  // Bucketed traces: the symbols so far and the tensor values' symbolic axes.
  bool symbolic() const { return symbolic_; }
  void set_symbolic(bool on) { symbolic_ = on; }
  int add_sym(Sym s) {
    syms_.push_back(std::move(s));
    return int(syms_.size()) - 1;
  }
  const Sym& sym(int id) const { return syms_.at(size_t(id)); }
  // While set, Int reads of symbols give their physical value (a rule using them as sizes);
  // otherwise such a read throws NeedsExactShape (the rule would use a bucket's size as data).
  bool physical_ints = false;

 private:
  const formats::PteExecutionPlan* plan_;
  std::vector<Slot> slots_;
  std::map<std::pair<uint32_t, uint64_t>, int32_t> memory_owner_;  // (id, offset) -> value
  bool symbolic_ = false;
  std::vector<Sym> syms_;
};

// The arguments of one KernelCall, in the operator schema's order: inputs, then the `out`
// arguments, then the returned values (the out tensors again, or a TensorList of them).
class OpCall {
 public:
  OpCall(Frame& frame, const std::vector<int32_t>& args, std::string op)
      : frame_(frame), args_(args), op_(std::move(op)) {}

  const std::string& op() const { return op_; }
  size_t size() const { return args_.size(); }
  bool is_none(size_t i) const;
  bool is_int_list(size_t i) const;
  Array tensor(size_t i) const;  // an override (set_input) if any, else the frame's value
  std::optional<Array> optional_tensor(size_t i) const;
  std::vector<Array> tensors(size_t i) const;  // a TensorList
  int64_t integer(size_t i) const;
  double real(size_t i) const;  // a Double, or an Int
  bool boolean(size_t i) const;
  std::string string(size_t i) const;
  std::vector<int64_t> ints(size_t i) const;  // an IntList, its items read now
  std::vector<double> reals(size_t i) const;  // a DoubleList
  // An Int or Double argument as a weakly typed kiln scalar.
  Array scalar(size_t i) const;
  // The dtype of the call's k-th result (the planned output tensor).
  DType result_dtype(size_t k = 0) const;
  // Stores the results, each cast to its planned dtype: one tensor, or a TensorList.
  void results(const std::vector<Array>& values);
  void result(const Array& value) { results({value}); }
  void result_int(int64_t value);  // a scalar result (sym_size)
  [[noreturn]] void fail(const std::string& message) const;

  // Bucketed traces (symbolic.cpp): the frame, argument i's slot, and inputs a symbolic
  // rule replaces (masked operands) before running the plain rule.
  Frame& frame() const { return frame_; }
  int32_t arg_index(size_t i) const { return args_.at(i); }
  void set_input(size_t i, Array a) { overrides_[i] = std::move(a); }
  std::vector<int32_t> result_slots() const;

 private:
  const Slot& arg(size_t i) const;
  template <typename T>
  const T& as(size_t i, const char* kind) const;
  int64_t int_item(const Slot& s) const;

  Frame& frame_;
  const std::vector<int32_t>& args_;
  std::string op_;
  std::map<size_t, Array> overrides_;
};

}  // namespace kiln::executorch
