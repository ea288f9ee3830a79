// Checks formats::parse_pte: committed ExecuTorch programs parse to what ExecuTorch's own
// deserializer dumped (tests/fixtures/pte/structure.txt); malformed files fail cleanly.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "formats/pte.h"
#include "ir/error.h"
#include "tests/model_file_dump.h"

namespace pte_test {

namespace {

using namespace kiln::formats;
using Bytes = std::vector<uint8_t>;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/pte/";

std::string list(const std::vector<int32_t>& v) {
  return v.empty() ? "-" : kiln_test::join(v, ",");
}
std::string list64(const std::vector<int64_t>& v) {
  return v.empty() ? "-" : kiln_test::join(v, ",");
}

std::string real(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The text tools/gen_pte_fixtures.py's dump_structure writes, from kiln's parse.
std::string dump_value(std::span<const uint8_t> file, const PteValue& v) {
  struct Visitor {
    std::span<const uint8_t> file;
    std::string operator()(const PteNull&) { return "Null"; }
    std::string operator()(int64_t i) { return "Int " + std::to_string(i); }
    std::string operator()(bool b) { return std::string("Bool ") + (b ? "1" : "0"); }
    std::string operator()(double d) { return "Double " + real(d); }
    std::string operator()(const std::string& s) { return "String " + s; }
    std::string operator()(const PteIntList& l) { return "IntList " + list64(l.items); }
    std::string operator()(const PteDoubleList& l) {
      std::string out;
      for (double d : l) out += (out.empty() ? "" : ",") + real(d);
      return "DoubleList " + (out.empty() ? "-" : out);
    }
    std::string operator()(const PteBoolList& l) {
      std::vector<int64_t> ints(l.begin(), l.end());
      return "BoolList " + list64(ints);
    }
    std::string operator()(const PteTensorList& l) { return "TensorList " + list(l.items); }
    std::string operator()(const PteOptionalTensorList& l) {
      return "OptionalTensorList " + list(l.items);
    }
    std::string operator()(const PteTensor& t) {
      std::vector<int64_t> order(t.dim_order.begin(), t.dim_order.end());
      std::string out = "Tensor " + std::to_string(int(t.scalar_type)) + " sizes " +
                        list64(t.sizes) + " dim_order " + list64(order) + " dynamism " +
                        std::to_string(int(t.shape_dynamism));
      if (t.is_constant())
        out += " constant " + std::to_string(t.data_buffer_idx) + " fnv " +
               kiln_test::fnv1a64(pte_tensor_data(file, t));
      if (t.memory_planned)
        out += " planned " + std::to_string(t.memory_id) + " " + std::to_string(t.memory_offset);
      return out;
    }
  };
  return std::visit(Visitor{file}, v.value);
}

std::string dump(const std::string& name, std::span<const uint8_t> file, const Pte& pte) {
  std::ostringstream out;
  out << "program " << name << " version " << pte.version << " plans "
      << pte.execution_plan.size() << "\n";
  for (const PteExecutionPlan& plan : pte.execution_plan) {
    out << "method " << plan.name << " inputs " << list(plan.inputs) << " outputs "
        << list(plan.outputs) << " buffers " << list64(plan.non_const_buffer_sizes) << "\n";
    for (size_t i = 0; i < plan.operators.size(); ++i)
      out << "operator " << i << " " << plan.operators[i].full_name() << "\n";
    for (size_t i = 0; i < plan.values.size(); ++i)
      out << "value " << i << " " << dump_value(file, plan.values[i]) << "\n";
    for (size_t c = 0; c < plan.chains.size(); ++c)
      for (size_t n = 0; n < plan.chains[c].instructions.size(); ++n) {
        out << "instruction " << c << " " << n << " ";
        const PteInstruction& in = plan.chains[c].instructions[n];
        if (auto* k = std::get_if<PteKernelCall>(&in)) out << "kernel " << k->op_index << " " << list(k->args);
        if (auto* m = std::get_if<PteMoveCall>(&in)) out << "move " << m->move_from << " " << m->move_to;
        if (auto* j = std::get_if<PteJumpFalseCall>(&in))
          out << "jump_false " << j->cond_value_index << " " << j->destination_instruction;
        if (auto* f = std::get_if<PteFreeCall>(&in)) out << "free " << f->value_index;
        if (auto* d = std::get_if<PteDelegateCall>(&in)) out << "delegate " << d->delegate_index << " " << list(d->args);
        out << "\n";
      }
  }
  return out.str();
}

std::string error_of(const Bytes& b) {
  try {
    parse_pte(b);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Pte, ParsesAsExecuTorchsDeserializerDumped) {
  std::istringstream in(kiln_test::read_text(kDir + "structure.txt"));
  std::map<std::string, std::string> want;  // program -> its lines
  std::string line, current;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("program ", 0) == 0) current = line.substr(8, line.find(' ', 8) - 8);
    want[current] += line + "\n";
  }
  ASSERT_EQ(want.size(), 5u);
  for (const auto& [name, text] : want) {
    const Bytes file = kiln_test::read_bytes(kDir + name + ".pte");
    const Pte pte = parse_pte(file);
    // ExecuTorch writes the extended header only when there are segment bytes (constants).
    EXPECT_EQ(pte.has_extended_header, pte.segments.size() && pte.segments[0].size) << name;
    EXPECT_EQ(dump(name, file, pte), text) << name;
  }
}

TEST(Pte, EveryCommittedProgramParses) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    if (entry.path().extension() != ".pte") continue;
    const Pte pte = parse_pte(kiln_test::read_bytes(entry.path().string()));
    ASSERT_NE(pte.find_method("forward"), nullptr) << entry.path();
    ++n;
  }
  EXPECT_GE(n, 39);
}

TEST(Pte, MalformedFilesNameWhatIsWrong) {
  const Bytes good = kiln_test::read_bytes(kDir + "linear.pte");
  EXPECT_EQ(error_of(Bytes(good.begin(), good.begin() + 6)), "pte: file of 6 bytes, expected at least 8");
  Bytes b = good;
  b[7] = '3';
  EXPECT_EQ(error_of(b),
            "pte: file identifier is not ET12 (not an ExecuTorch program of this schema version)");
  b = good;
  b[23] = 0x7f;  // program_size far past the file
  EXPECT_NE(error_of(b).find("pte: extended header: program_size"), std::string::npos);
  b = good;
  b[0] = 0xf0, b[1] = 0xff, b[2] = 0xff, b[3] = 0x7f;  // root offset past the end
  EXPECT_NE(error_of(b).find("run past the end"), std::string::npos) << error_of(b);
  b = good;
  b[24] = uint8_t(good.size() - 4), b[25] = uint8_t((good.size() - 4) >> 8);  // segment base
  EXPECT_NE(error_of(b).find("pte: segment 0: "), std::string::npos) << error_of(b);
}

// Every truncation and every single-byte corruption of a small program either parses or
// throws kiln::Error: nothing reads outside the bytes (the sanitizer build checks that).
TEST(Pte, TruncatedAndCorruptedFilesNeverCrash) {
  const Bytes good = kiln_test::read_bytes(kDir + "relu.pte");
  int errors = 0;
  for (size_t n = 0; n < good.size(); n += 7)
    errors += error_of(Bytes(good.begin(), good.begin() + n)) != "(no error)";
  EXPECT_GT(errors, 0);
  for (size_t i = 0; i < good.size(); ++i)
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      Bytes b = good;
      b[i] ^= flip;
      try {
        parse_pte(b);
      } catch (const kiln::Error&) {
      }
    }
}

}  // namespace

}  // namespace pte_test
