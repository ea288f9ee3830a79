// kiln::formats::parse_pte: ExecuTorch's `.pte` program (FlatBuffer schema "ET12" plus the
// "eh00" extended header and its data segments) read into plain structs, every index checked.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace kiln::formats {

// ExecuTorch's ScalarType numbering (schema/scalar_type.fbs).
enum class PteScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7,
  Bool = 11, BFloat16 = 15, UInt16 = 27, UInt32 = 28, UInt64 = 29,
};
const char* pte_scalar_type_name(PteScalarType t);  // "float32", "int64", ...
size_t pte_scalar_type_size(PteScalarType t);

// Whether a tensor's shape is fixed, bounded by `sizes`, or unbounded.
enum class PteShapeDynamism : int8_t { Static = 0, DynamicBound = 1, DynamicUnbound = 2 };

// A tensor value of a program: dtype, sizes, layout, and where its bytes are (a constant) or
// will be (memory-planned).
struct PteTensor {
  PteScalarType scalar_type = PteScalarType::Float;
  std::vector<int64_t> sizes;       // the upper bound where the shape is dynamic
  std::vector<uint8_t> dim_order;   // a permutation of 0..rank-1; identity = contiguous
  PteShapeDynamism shape_dynamism = PteShapeDynamism::Static;
  uint32_t data_buffer_idx = 0;     // > 0: a constant (in the file: data_offset/data_size)
  uint64_t data_offset = 0;         // from the start of the file
  uint64_t data_size = 0;           // nbytes: prod(sizes) * itemsize
  bool memory_planned = false;      // allocation_info present (a runtime buffer)
  uint32_t memory_id = 0;
  uint64_t memory_offset = 0;
  // Non-empty: a constant whose bytes are outside the file, in named data (a `.ptd` file or
  // what the caller supplies) under this fully qualified name ("features.0.0.weight").
  std::string external_name;
  // A constant with bytes in the file.
  bool is_constant() const { return data_buffer_idx != 0 && external_name.empty(); }
  bool is_external() const { return !external_name.empty(); }
  uint64_t numel() const;  // product of sizes
};

// The None value.
struct PteNull {};
// IntList: its items are value indices of Int values (ExecuTorch boxes each item, so a size
// computed at run time can stand in a list).
struct PteIntList { std::vector<int64_t> items; };
struct PteTensorList { std::vector<int32_t> items; };  // value indices
struct PteOptionalTensorList { std::vector<int32_t> items; };  // -1 = None
using PteDoubleList = std::vector<double>;
using PteBoolList = std::vector<bool>;

// One EValue, in the schema's KernelTypes order.
struct PteValue {
  std::variant<PteNull, int64_t, bool, double, PteTensor, std::string, PteIntList, PteDoubleList,
               PteBoolList, PteTensorList, PteOptionalTensorList>
      value;
  const char* kind_name() const;  // "Null", "Int", "Tensor", ...
};

// An operator a kernel call names: `name` and `overload` as ExecuTorch registers them.
struct PteOperator {
  std::string name;      // "aten::convolution"
  std::string overload;  // "out"
  // The full name: "aten::add.out" (name alone without an overload).
  std::string full_name() const { return overload.empty() ? name : name + "." + overload; }
};

// The instructions of a chain: call an operator, call a delegate, copy a value, jump when a
// value is false, free a value (all indices into the plan's values, operators or instructions).
struct PteKernelCall { int32_t op_index; std::vector<int32_t> args; };
struct PteDelegateCall { int32_t delegate_index; std::vector<int32_t> args; };
struct PteMoveCall { int32_t move_from, move_to; };
struct PteJumpFalseCall { int32_t cond_value_index, destination_instruction; };
struct PteFreeCall { int32_t value_index; };
using PteInstruction =
    std::variant<PteKernelCall, PteDelegateCall, PteMoveCall, PteJumpFalseCall, PteFreeCall>;

// A sequence of instructions with its input and output value indices.
struct PteChain {
  std::vector<int32_t> inputs, outputs;
  std::vector<PteInstruction> instructions;
};

// A backend delegate the program calls (kiln refuses programs that have any).
struct PteDelegate { std::string id; };

// One method of the program: its values, inputs, outputs, chains, operators and delegates.
struct PteExecutionPlan {
  std::string name;                     // the method: "forward"
  std::vector<PteValue> values;
  std::vector<int32_t> inputs, outputs;  // value indices
  std::vector<PteChain> chains;
  std::vector<PteOperator> operators;
  std::vector<PteDelegate> delegates;
  std::vector<int64_t> non_const_buffer_sizes;
};

struct PteSegment { uint64_t offset = 0, size = 0; };  // offset: from the segment base

// A parsed `.pte` program: its methods (execution plans) and where constant data lies in the
// file.
struct Pte {
  uint32_t version = 0;
  bool has_extended_header = false;
  uint64_t program_size = 0;         // bytes of the FlatBuffer (extended header)
  uint64_t segment_base_offset = 0;  // where segment 0's offset counts from
  std::vector<PteExecutionPlan> execution_plan;
  std::vector<PteSegment> segments;
  uint32_t constant_segment_index = 0;
  std::vector<uint64_t> constant_segment_offsets;  // per data_buffer_idx, in that segment
  size_t inline_constant_buffers = 0;              // constant_buffer entries (old files)
  size_t backend_delegate_data = 0;

  const PteExecutionPlan* find_method(const std::string& name) const;  // nullptr when absent
};

// Parses a `.pte` file held in `file`. Checked: the FlatBuffer's offsets and vtables, the
// file identifier, the extended header and segments inside the file, every value, operator,
// delegate and jump index, tensor ranks/sizes/dim orders, and each constant tensor's bytes
// inside its segment (or inline buffer). Throws kiln::Error("pte: <where>: ...").
Pte parse_pte(std::span<const uint8_t> file);

// The bytes of a constant tensor inside `file` (the buffer it was parsed from).
std::span<const uint8_t> pte_tensor_data(std::span<const uint8_t> file, const PteTensor& t);

}  // namespace kiln::formats
