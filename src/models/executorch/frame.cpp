// Value slots of a traced ExecuTorch method and the typed argument reads operator rules use;
// every read checks the value's kind and names the operator and argument on a mismatch.
#include "models/executorch/frame.h"

#include "ir/error.h"
#include "library/lax.h"
#include "library/numpy.h"
#include "models/executorch/symbolic.h"

namespace kiln::executorch {

using namespace formats;

DType kiln_dtype(PteScalarType t, const std::string& where) {
  switch (t) {
    case PteScalarType::Float: return float32;
    case PteScalarType::Double: return float64;
    case PteScalarType::Half: return float16;
    case PteScalarType::Int:
    case PteScalarType::Long:
    case PteScalarType::Short:
    case PteScalarType::Char:
    case PteScalarType::Byte: return int32;
    case PteScalarType::UInt32: return uint32;
    case PteScalarType::Bool: return bool_;
    default:
      fail("executorch", where, ": scalar type ", pte_scalar_type_name(t),
           " has no kiln dtype (supported: float32, float64, float16, int8-int64, uint8, "
           "uint32, bool)");
  }
}

Frame::Frame(const PteExecutionPlan& plan, const std::vector<Array>& constants) : plan_(&plan) {
  slots_.resize(plan.values.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].value = &plan.values[i];
    if (i < constants.size()) slots_[i].array = constants[i];
  }
}

void Frame::write(int32_t i, Array a) {
  Slot& s = slot(i);
  s.array = std::move(a);
  s.axes.clear();
  if (const auto* t = std::get_if<PteTensor>(&s.value->value); t && t->memory_planned)
    memory_owner_[{t->memory_id, t->memory_offset}] = i;
}

Array Frame::read(int32_t i) {
  Slot& s = slot(i);
  if (s.array.valid()) return s.array;
  const auto* t = std::get_if<PteTensor>(&s.value->value);
  if (!t || !t->memory_planned) return Array();
  auto it = memory_owner_.find({t->memory_id, t->memory_offset});
  if (it == memory_owner_.end() || it->second == i) return Array();
  const Array base = read(it->second);
  for (int ax : slot(it->second).axes)  // a bucket's padding would move inside the view
    if (ax >= 0) throw NeedsExactShape("a planned view of a tensor with a dynamic axis");
  const Shape shape(t->sizes.begin(), t->sizes.end());
  if (!base.valid() || base.size() != int64_t(t->numel())) return Array();
  return base.reshape(shape);
}

const Slot& OpCall::arg(size_t i) const {
  if (i >= args_.size())
    fail("argument " + std::to_string(i) + " is missing (the call has " +
         std::to_string(args_.size()) + ")");
  return frame_.slot(args_[i]);
}

void OpCall::fail(const std::string& message) const {
  kiln::fail("executorch", op_, ": ", message);
}

// Argument i's declaration as kind T; a value of another kind is an error naming both.
template <typename T>
const T& OpCall::as(size_t i, const char* kind) const {
  const PteValue& v = *arg(i).value;
  const T* typed = std::get_if<T>(&v.value);
  if (!typed)
    fail("argument " + std::to_string(i) + " is a " + v.kind_name() + ", expected " + kind);
  return *typed;
}

bool OpCall::is_none(size_t i) const {
  return i >= args_.size() || std::holds_alternative<PteNull>(arg(i).value->value);
}

bool OpCall::is_int_list(size_t i) const {
  return std::holds_alternative<PteIntList>(arg(i).value->value);
}

Array OpCall::tensor(size_t i) const {
  as<PteTensor>(i, "a Tensor");
  if (auto it = overrides_.find(i); it != overrides_.end()) return it->second;
  Array a = frame_.read(args_[i]);
  if (!a.valid())
    fail("argument " + std::to_string(i) + " (value " + std::to_string(args_[i]) +
         ") is read before any instruction wrote it");
  return a;
}

std::optional<Array> OpCall::optional_tensor(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return tensor(i);
}

std::vector<Array> OpCall::tensors(size_t i) const {
  std::vector<Array> out;
  for (int32_t v : as<PteTensorList>(i, "a TensorList").items) {
    Array item = frame_.read(v);
    if (!item.valid()) fail("TensorList item (value " + std::to_string(v) + ") is unset");
    out.push_back(item);
  }
  return out;
}

// An Int's value; a symbol's physical size only while the rule reads sizes (physical_ints).
int64_t OpCall::int_item(const Slot& s) const {
  if (s.sym >= 0 && !frame_.physical_ints)
    throw NeedsExactShape(op_ + " reads a dynamic size as a value");
  return s.runtime_int ? *s.runtime_int : std::get<int64_t>(s.value->value);
}

int64_t OpCall::integer(size_t i) const {
  const Slot& s = arg(i);
  if (s.runtime_int) return int_item(s);
  if (const auto* v = std::get_if<int64_t>(&s.value->value)) return *v;
  if (const auto* b = std::get_if<bool>(&s.value->value)) return *b;
  fail("argument " + std::to_string(i) + " is a " + s.value->kind_name() + ", expected an Int");
}

double OpCall::real(size_t i) const {
  if (const auto* d = std::get_if<double>(&arg(i).value->value)) return *d;
  return double(integer(i));
}

bool OpCall::boolean(size_t i) const { return as<bool>(i, "a Bool"); }

std::string OpCall::string(size_t i) const { return as<std::string>(i, "a String"); }

std::vector<int64_t> OpCall::ints(size_t i) const {
  std::vector<int64_t> out;
  for (int64_t v : as<PteIntList>(i, "an IntList").items) {
    out.push_back(int_item(frame_.slot(int32_t(v))));
  }
  return out;
}

std::vector<double> OpCall::reals(size_t i) const {
  return as<PteDoubleList>(i, "a DoubleList");
}

Array OpCall::scalar(size_t i) const {
  if (arg(i).sym >= 0) return frame_.sym(arg(i).sym).valid;  // a dynamic size as data
  if (const auto* d = std::get_if<double>(&arg(i).value->value)) return Array(*d);
  const int64_t v = integer(i);
  if (v < INT32_MIN || v > INT32_MAX) fail("integer scalar " + std::to_string(v) + " exceeds int32");
  return Array(int(v));
}

std::vector<int32_t> OpCall::result_slots() const {
  if (args_.empty()) fail("a call without arguments has no result");
  const int32_t last = args_.back();
  if (const auto* list = std::get_if<PteTensorList>(&frame_.slot(last).value->value))
    return list->items;
  return {last};
}

DType OpCall::result_dtype(size_t k) const {
  const std::vector<int32_t> slots = result_slots();
  if (k >= slots.size()) fail("result " + std::to_string(k) + " is missing");
  const auto* t = std::get_if<PteTensor>(&frame_.slot(slots[k]).value->value);
  if (!t) fail("result " + std::to_string(k) + " is not a Tensor");
  return kiln_dtype(t->scalar_type, op_);
}

void OpCall::results(const std::vector<Array>& values) {
  const std::vector<int32_t> slots = result_slots();
  if (values.size() > slots.size())
    fail(std::to_string(values.size()) + " results, the program plans " +
         std::to_string(slots.size()));
  for (size_t k = 0; k < values.size(); ++k) {
    const DType want = result_dtype(k);
    frame_.write(slots[k], values[k].dtype() == want && !values[k].weak_type()
                               ? values[k]
                               : lax::convert_element_type(values[k], want));
  }
}

void OpCall::result_int(int64_t value) {
  Slot& s = frame_.slot(args_.back());
  if (!std::holds_alternative<int64_t>(s.value->value)) fail("the result is not an Int");
  s.runtime_int = value;
  s.sym = -1;
}

}  // namespace kiln::executorch
