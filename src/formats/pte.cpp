// `.pte` reading: the extended header, the Program table and its execution plans (field
// numbers from ExecuTorch's schema/program.fbs), then the cross-checks between them.
#include "formats/pte.h"

#include <algorithm>

#include "formats/flatbuffer_reader.h"
#include "ir/error.h"

namespace kiln::formats {

namespace {

constexpr const char* kOp = "pte";
// Rank limit: ExecuTorch's own is 16 (kTensorDimensionLimit).
constexpr size_t kMaxRank = 16;

struct ScalarTypeRow {
  PteScalarType type;
  const char* name;
  size_t size;
};
constexpr ScalarTypeRow kScalarTypes[] = {
    {PteScalarType::Byte, "uint8", 1},      {PteScalarType::Char, "int8", 1},
    {PteScalarType::Short, "int16", 2},     {PteScalarType::Int, "int32", 4},
    {PteScalarType::Long, "int64", 8},      {PteScalarType::Half, "float16", 2},
    {PteScalarType::Float, "float32", 4},   {PteScalarType::Double, "float64", 8},
    {PteScalarType::Bool, "bool", 1},       {PteScalarType::BFloat16, "bfloat16", 2},
    {PteScalarType::UInt16, "uint16", 2},   {PteScalarType::UInt32, "uint32", 4},
    {PteScalarType::UInt64, "uint64", 8},
};

const ScalarTypeRow* scalar_type_row(int8_t t) {
  for (const ScalarTypeRow& r : kScalarTypes)
    if (int8_t(r.type) == t) return &r;
  return nullptr;
}

// What the Program table says about where constant tensor bytes live.
struct ConstantSource {
  const Pte* pte;
  std::vector<std::pair<uint64_t, uint64_t>> inline_buffers;  // (file offset, size)
};

// Field numbers of program.fbs (a union takes two: its type, then its value).
namespace field {
enum Program { kVersion, kExecutionPlan, kConstantBuffer, kDelegateData, kSegments, kConstantSegment };
enum Plan { kName, kContainerMeta, kValues, kInputs, kOutputs, kChains, kOperators, kDelegates,
            kBufferSizes };
enum Tensor { kScalarType, kStorageOffset, kSizes, kDimOrder, kRequiresGrad, kDataBufferIdx,
              kAllocationInfo, kLayout, kShapeDynamism, kExtraTensorInfo };
}  // namespace field

void read_constant_location(PteTensor& t, const ConstantSource& src, const FlatTable& table) {
  const Pte& pte = *src.pte;
  const uint64_t nbytes = t.data_size;
  if (!pte.constant_segment_offsets.empty()) {
    if (t.data_buffer_idx >= pte.constant_segment_offsets.size())
      table.fail(table.what() + ": data_buffer_idx " + std::to_string(t.data_buffer_idx) +
                 " >= the constant segment's " +
                 std::to_string(pte.constant_segment_offsets.size()) + " entries");
    const PteSegment& seg = pte.segments[pte.constant_segment_index];
    const uint64_t at = pte.constant_segment_offsets[t.data_buffer_idx];
    if (at > seg.size || nbytes > seg.size - at)
      table.fail(table.what() + ": its " + std::to_string(nbytes) + " bytes at " +
                 std::to_string(at) + " run past the constant segment's " +
                 std::to_string(seg.size) + " bytes");
    t.data_offset = pte.segment_base_offset + seg.offset + at;
    return;
  }
  if (t.data_buffer_idx >= src.inline_buffers.size())
    table.fail(table.what() + ": data_buffer_idx " + std::to_string(t.data_buffer_idx) +
               " >= the " + std::to_string(src.inline_buffers.size()) + " constant buffers");
  const auto [offset, size] = src.inline_buffers[t.data_buffer_idx];
  if (nbytes > size)
    table.fail(table.what() + ": " + std::to_string(nbytes) + " bytes of data, its buffer has " +
               std::to_string(size));
  t.data_offset = offset;
}

PteTensor read_tensor(const FlatTable& table, const ConstantSource& src) {
  PteTensor t;
  const int8_t type = table.scalar<int8_t>(field::kScalarType, 0, "scalar_type");
  const ScalarTypeRow* row = scalar_type_row(type);
  if (!row) table.fail(table.what() + ": unsupported scalar_type " + std::to_string(type));
  t.scalar_type = row->type;
  if (table.scalar<int32_t>(field::kStorageOffset, 0, "storage_offset") != 0)
    table.fail(table.what() + ": storage_offset is not 0");
  const FlatVector sizes = table.vector(field::kSizes, 4, "sizes");
  const FlatVector order = table.vector(field::kDimOrder, 1, "dim_order");
  if (sizes.count > kMaxRank)
    table.fail(table.what() + ": rank " + std::to_string(sizes.count) + " > 16");
  for (int32_t s : sizes.scalars<int32_t>()) {
    if (s < 0) table.fail(table.what() + ": negative size " + std::to_string(s));
    t.sizes.push_back(s);
  }
  t.dim_order = order.scalars<uint8_t>();
  if (t.dim_order.size() != t.sizes.size())
    table.fail(table.what() + ": dim_order has " + std::to_string(t.dim_order.size()) +
               " entries for rank " + std::to_string(t.sizes.size()));
  std::vector<bool> seen(t.sizes.size());
  for (uint8_t d : t.dim_order) {
    if (d >= t.sizes.size() || seen[d])
      table.fail(table.what() + ": dim_order is not a permutation of 0.." +
                 std::to_string(t.sizes.size()));
    seen[d] = true;
  }
  const int8_t dyn = table.scalar<int8_t>(field::kShapeDynamism, 0, "shape_dynamism");
  if (dyn < 0 || dyn > 2) table.fail(table.what() + ": shape_dynamism " + std::to_string(dyn));
  t.shape_dynamism = PteShapeDynamism(dyn);
  // Sizes are int32 and the rank at most 16, so the product needs a check only against
  // uint64 overflow: 2^31 per dim overflows after two dims.
  uint64_t n = row->size;
  for (int64_t s : t.sizes) {
    if (s && n > UINT64_MAX / uint64_t(s)) table.fail(table.what() + ": size overflows");
    n *= uint64_t(s);
  }
  t.data_size = n;
  t.data_buffer_idx = table.scalar<uint32_t>(field::kDataBufferIdx, 0, "data_buffer_idx");
  if (std::optional<FlatTable> alloc = table.table(field::kAllocationInfo, "allocation_info")) {
    t.memory_planned = true;
    t.memory_id = alloc->scalar<uint32_t>(0, 0, "memory_id");
    t.memory_offset = alloc->scalar<uint32_t>(1, 0, "memory_offset_low") |
                      uint64_t(alloc->scalar<uint32_t>(2, 0, "memory_offset_high")) << 32;
  }
  // ExtraTensorInfo (mutable_data_segments_idx, fully_qualified_name, location): location
  // EXTERNAL names a constant kept in named data outside the file; mutable data in a segment
  // (buffers a method writes) is not supported.
  if (std::optional<FlatTable> extra = table.table(field::kExtraTensorInfo, "extra_tensor_info")) {
    const int8_t location = extra->scalar<int8_t>(2, 0, "location");
    const std::string name = extra->string(1, "fully_qualified_name").value_or("");
    if (location != 1)
      table.fail(table.what() + ": tensors with mutable data (extra_tensor_info in a segment) "
                                "are not supported");
    if (name.empty()) table.fail(table.what() + ": an external tensor without a name");
    if (t.memory_planned) table.fail(table.what() + ": an external tensor is memory-planned");
    t.external_name = name;  // its data_buffer_idx counts external constants: no bytes here
  }
  if (t.is_constant()) read_constant_location(t, src, table);
  return t;
}

// KernelTypes union members, in order (type byte 1 = Null).
PteValue read_value(const FlatTable& evalue, const ConstantSource& src) {
  auto [type, table] = evalue.union_value(0, "val");
  PteValue v;
  switch (type) {
    case 1: v.value = PteNull{}; break;
    case 2: v.value = table->scalar<int64_t>(0, 0, "int_val"); break;
    case 3: v.value = table->scalar<uint8_t>(0, 0, "bool_val") != 0; break;
    case 4: v.value = table->scalar<double>(0, 0, "double_val"); break;
    case 5: v.value = read_tensor(*table, src); break;
    case 6: v.value = table->string(0, "string_val").value_or(""); break;
    case 7: v.value = PteIntList{table->vector(0, 8, "items").scalars<int64_t>()}; break;
    case 8: v.value = table->vector(0, 8, "items").scalars<double>(); break;
    case 9: {
      PteBoolList items;
      for (uint8_t b : table->vector(0, 1, "items").scalars<uint8_t>()) items.push_back(b != 0);
      v.value = std::move(items);
      break;
    }
    case 10: v.value = PteTensorList{table->vector(0, 4, "items").scalars<int32_t>()}; break;
    case 11:
      v.value = PteOptionalTensorList{table->vector(0, 4, "items").scalars<int32_t>()};
      break;
    default:
      evalue.fail(evalue.what() + ": value type " + std::to_string(type) +
                  (type == 0 ? " (NONE)" : " (unknown)"));
  }
  return v;
}

PteInstruction read_instruction(const FlatTable& instr) {
  auto [type, t] = instr.union_value(0, "instr_args");
  switch (type) {
    case 1:
      return PteKernelCall{t->scalar<int32_t>(0, 0, "op_index"),
                           t->vector(1, 4, "args").scalars<int32_t>()};
    case 2:
      return PteDelegateCall{t->scalar<int32_t>(0, 0, "delegate_index"),
                             t->vector(1, 4, "args").scalars<int32_t>()};
    case 3: return PteMoveCall{t->scalar<int32_t>(0, 0, "move_from"), t->scalar<int32_t>(1, 0, "move_to")};
    case 4:
      return PteJumpFalseCall{t->scalar<int32_t>(0, 0, "cond_value_index"),
                              t->scalar<int32_t>(1, 0, "destination_instruction")};
    case 5: return PteFreeCall{t->scalar<int32_t>(0, 0, "value_index")};
    default:
      instr.fail(instr.what() + ": instruction type " + std::to_string(type) +
                 (type == 0 ? " (NONE)" : " (unknown)"));
  }
}

PteChain read_chain(const FlatTable& c) {
  PteChain chain;
  chain.inputs = c.vector(0, 4, "inputs").scalars<int32_t>();
  chain.outputs = c.vector(1, 4, "outputs").scalars<int32_t>();
  chain.instructions = c.tables(2, "instructions", [](const FlatTable& i, uint32_t) {
    return read_instruction(i);
  });
  return chain;
}

// Cross-checks of one plan: every index names an existing value/operator/delegate/instruction.
class PlanChecker {
 public:
  explicit PlanChecker(const PteExecutionPlan& plan)
      : plan_(plan), where_("execution_plan '" + plan.name.substr(0, 100) + "'") {}

  void value(int64_t i, const std::string& what, bool none_ok = false) const {
    if (none_ok && i == -1) return;
    if (i < 0 || uint64_t(i) >= plan_.values.size())
      fail(kOp, where_, ": ", what, " names value ", i, ", the plan has ",
           plan_.values.size());
  }
  void values(const std::vector<int32_t>& list, const std::string& what) const {
    for (int32_t i : list) value(i, what);
  }
  void check() const {
    values(plan_.inputs, "an input");
    values(plan_.outputs, "an output");
    for (size_t v = 0; v < plan_.values.size(); ++v) {
      const std::string what = "value " + std::to_string(v);
      if (auto* l = std::get_if<PteIntList>(&plan_.values[v].value))
        for (int64_t i : l->items) {
          value(i, what + " (IntList)");
          if (!std::holds_alternative<int64_t>(plan_.values[size_t(i)].value))
            fail(kOp, where_, ": ", what, " (IntList) names value ", i, ", a ",
                 plan_.values[size_t(i)].kind_name(), ", expected an Int");
        }
      if (auto* l = std::get_if<PteTensorList>(&plan_.values[v].value))
        for (int32_t i : l->items) value(i, what + " (TensorList)");
      if (auto* l = std::get_if<PteOptionalTensorList>(&plan_.values[v].value))
        for (int32_t i : l->items) value(i, what + " (OptionalTensorList)", true);
    }
    for (size_t c = 0; c < plan_.chains.size(); ++c) chain(plan_.chains[c], c);
  }

 private:
  void chain(const PteChain& chain, size_t c) const {
    const std::string ch = "chain " + std::to_string(c);
    values(chain.inputs, ch + " input");
    values(chain.outputs, ch + " output");
    for (size_t n = 0; n < chain.instructions.size(); ++n) {
      const std::string what = ch + " instruction " + std::to_string(n);
      std::visit([&](const auto& in) { instruction(in, what, chain.instructions.size()); },
                 chain.instructions[n]);
    }
  }
  void instruction(const PteKernelCall& k, const std::string& what, size_t) const {
    if (k.op_index < 0 || size_t(k.op_index) >= plan_.operators.size())
      fail(kOp, where_, ": ", what, ": op_index ", k.op_index, ", the plan has ",
           plan_.operators.size(), " operators");
    values(k.args, what + " argument");
  }
  void instruction(const PteDelegateCall& d, const std::string& what, size_t) const {
    if (d.delegate_index < 0 || size_t(d.delegate_index) >= plan_.delegates.size())
      fail(kOp, where_, ": ", what, ": delegate_index ", d.delegate_index, ", the plan has ",
           plan_.delegates.size(), " delegates");
    values(d.args, what + " argument");
  }
  void instruction(const PteMoveCall& m, const std::string& what, size_t) const {
    value(m.move_from, what + " move_from");
    value(m.move_to, what + " move_to");
  }
  void instruction(const PteJumpFalseCall& j, const std::string& what, size_t n) const {
    value(j.cond_value_index, what + " condition");
    if (j.destination_instruction < 0 || size_t(j.destination_instruction) > n)
      fail(kOp, where_, ": ", what, ": jumps to instruction ", j.destination_instruction,
           ", the chain has ", n);
  }
  void instruction(const PteFreeCall& f, const std::string& what, size_t) const {
    value(f.value_index, what + " free");
  }

  const PteExecutionPlan& plan_;
  std::string where_;
};

PteExecutionPlan read_plan(const FlatTable& p, const ConstantSource& src) {
  PteExecutionPlan plan;
  plan.name = p.string(field::kName, "name").value_or("");
  plan.values = p.tables(field::kValues, "values", [&](const FlatTable& v, uint32_t) {
    return read_value(v, src);
  });
  plan.inputs = p.vector(field::kInputs, 4, "inputs").scalars<int32_t>();
  plan.outputs = p.vector(field::kOutputs, 4, "outputs").scalars<int32_t>();
  plan.chains = p.tables(field::kChains, "chains", [](const FlatTable& c, uint32_t) {
    return read_chain(c);
  });
  plan.operators = p.tables(field::kOperators, "operators", [](const FlatTable& o, uint32_t) {
    return PteOperator{o.string(0, "name").value_or(""), o.string(1, "overload").value_or("")};
  });
  plan.delegates = p.tables(field::kDelegates, "delegates", [](const FlatTable& d, uint32_t) {
    return PteDelegate{d.string(0, "id").value_or("")};
  });
  plan.non_const_buffer_sizes = p.vector(field::kBufferSizes, 8, "non_const_buffer_sizes")
                                    .scalars<int64_t>();
  PlanChecker(plan).check();
  return plan;
}

// The "eh00" header that follows the file identifier: program size and segment base.
void read_extended_header(std::span<const uint8_t> file, const FlatBuffer& fb, Pte& pte) {
  if (file.size() < 16 || std::string_view(reinterpret_cast<const char*>(file.data() + 8), 4) != "eh00")
    return;
  const uint32_t length = fb.read<uint32_t>(12, "extended header length");
  if (length < 24) fail(kOp, "extended header: length ", length, " < 24");
  fb.need(8, length, "extended header");
  pte.has_extended_header = true;
  pte.program_size = fb.read<uint64_t>(16, "extended header program_size");
  pte.segment_base_offset = fb.read<uint64_t>(24, "extended header segment_base_offset");
  if (pte.program_size > file.size())
    fail(kOp, "extended header: program_size ", pte.program_size, " > the file's ", file.size(),
         " bytes");
  if (pte.segment_base_offset > file.size())
    fail(kOp, "extended header: segment_base_offset ", pte.segment_base_offset,
         " > the file's ", file.size(), " bytes");
}

void read_segments(const FlatTable& root, std::span<const uint8_t> file, Pte& pte) {
  pte.segments = root.tables(field::kSegments, "segments", [&](const FlatTable& s, uint32_t i) {
    PteSegment seg{s.scalar<uint64_t>(0, 0, "offset"), s.scalar<uint64_t>(1, 0, "size")};
    const uint64_t room = file.size() - pte.segment_base_offset;
    // Without an extended header there is no segment base: only empty segments make sense.
    const bool unplaced = !pte.has_extended_header && seg.size != 0;
    if (unplaced || seg.offset > room || seg.size > room - seg.offset)
      fail(kOp, "segment ", i, ": ", seg.size, " bytes at ", seg.offset,
           " past the segment base ", pte.segment_base_offset, " do not fit in the ",
           file.size(), "-byte file");
    return seg;
  });
  if (std::optional<FlatTable> cs = root.table(field::kConstantSegment, "constant_segment")) {
    pte.constant_segment_index = cs->scalar<uint32_t>(0, 0, "segment_index");
    pte.constant_segment_offsets = cs->vector(1, 8, "offsets").scalars<uint64_t>();
    if (!pte.constant_segment_offsets.empty() &&
        pte.constant_segment_index >= pte.segments.size())
      fail(kOp, "constant_segment: segment_index ", pte.constant_segment_index, ", the file has ",
           pte.segments.size(), " segments");
  }
}

}  // namespace

uint64_t PteTensor::numel() const {
  uint64_t n = 1;
  for (int64_t s : sizes) n *= uint64_t(s);
  return n;
}

const char* pte_scalar_type_name(PteScalarType t) {
  const ScalarTypeRow* row = scalar_type_row(int8_t(t));
  return row ? row->name : "unknown";
}

size_t pte_scalar_type_size(PteScalarType t) {
  const ScalarTypeRow* row = scalar_type_row(int8_t(t));
  return row ? row->size : 0;
}

const char* PteValue::kind_name() const {
  static constexpr const char* kNames[] = {"Null",    "Int",        "Bool",       "Double",
                                           "Tensor",  "String",     "IntList",    "DoubleList",
                                           "BoolList", "TensorList", "OptionalTensorList"};
  return kNames[value.index()];
}

const PteExecutionPlan* Pte::find_method(const std::string& name) const {
  for (const PteExecutionPlan& p : execution_plan)
    if (p.name == name) return &p;
  return nullptr;
}

Pte parse_pte(std::span<const uint8_t> file) {
  if (file.size() < 8) fail(kOp, "file of ", file.size(), " bytes, expected at least 8");
  if (std::string_view(reinterpret_cast<const char*>(file.data() + 4), 4) != "ET12")
    fail(kOp, "file identifier is not ET12 (not an ExecuTorch program of this schema version)");
  // Every vector element needs at least one byte of the file unless vectors share storage;
  // 4x the file size leaves room for honest files and bounds what sharing can add.
  const FlatBuffer fb(file, kOp, 4 * uint64_t(file.size()) + 1024);
  Pte pte;
  read_extended_header(file, fb, pte);
  const FlatTable root = FlatTable::root(fb, "program");
  pte.version = root.scalar<uint32_t>(field::kVersion, 0, "version");
  read_segments(root, file, pte);
  ConstantSource src{&pte, {}};
  const FlatVector buffers = root.vector(field::kConstantBuffer, 4, "constant_buffer");
  for (uint32_t i = 0; i < buffers.count; ++i) {
    const FlatVector storage = root.table_at(buffers, i).vector(0, 1, "storage");
    src.inline_buffers.emplace_back(storage.pos, storage.count);
  }
  pte.inline_constant_buffers = src.inline_buffers.size();
  pte.backend_delegate_data = root.vector(field::kDelegateData, 4, "backend_delegate_data").count;
  pte.execution_plan = root.tables(field::kExecutionPlan, "execution_plan",
                                   [&](const FlatTable& p, uint32_t) { return read_plan(p, src); });
  return pte;
}

std::span<const uint8_t> pte_tensor_data(std::span<const uint8_t> file, const PteTensor& t) {
  if (t.data_offset > file.size() || t.data_size > file.size() - t.data_offset)
    fail(kOp, "tensor data (", t.data_size, " bytes at ", t.data_offset, ") is outside the ",
         file.size(), "-byte file");
  return file.subspan(t.data_offset, t.data_size);
}

}  // namespace kiln::formats
