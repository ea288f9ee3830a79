// A small WebAssembly binary module builder: types, imports (functions and the core's
// memory), functions with locals, exports, and a typed emitter incl. SIMD128 (0xFD) opcodes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::wasm {

enum class ValType : uint8_t { I32 = 0x7f, I64 = 0x7e, F32 = 0x7d, F64 = 0x7c, V128 = 0x7b };

// Single-byte opcodes of the MVP (and the sign/sat extensions' prefixes).
namespace op {
inline constexpr uint8_t Unreachable = 0x00, Block = 0x02, Loop = 0x03, If = 0x04, Else = 0x05,
                         End = 0x0b, Br = 0x0c, BrIf = 0x0d, Return = 0x0f, Call = 0x10,
                         Drop = 0x1a, Select = 0x1b, LocalGet = 0x20, LocalSet = 0x21,
                         LocalTee = 0x22;
inline constexpr uint8_t I32Load = 0x28, F32Load = 0x2a, F64Load = 0x2b, I32Load8U = 0x2d,
                         I32Load16U = 0x2f, I32Store = 0x36, F32Store = 0x38, F64Store = 0x39,
                         I32Store8 = 0x3a, I32Store16 = 0x3b;
inline constexpr uint8_t I32Const = 0x41, I64Const = 0x42, F32Const = 0x43, F64Const = 0x44;
inline constexpr uint8_t I32Eqz = 0x45, I32Eq = 0x46, I32Ne = 0x47, I32LtS = 0x48, I32LtU = 0x49,
                         I32GtS = 0x4a, I32GtU = 0x4b, I32LeS = 0x4c, I32LeU = 0x4d,
                         I32GeS = 0x4e, I32GeU = 0x4f;
inline constexpr uint8_t F32Eq = 0x5b, F32Ne = 0x5c, F32Lt = 0x5d, F32Gt = 0x5e, F32Le = 0x5f,
                         F32Ge = 0x60, F64Eq = 0x61, F64Ne = 0x62, F64Lt = 0x63, F64Gt = 0x64,
                         F64Le = 0x65, F64Ge = 0x66;
inline constexpr uint8_t I32Add = 0x6a, I32Sub = 0x6b, I32Mul = 0x6c, I32DivS = 0x6d,
                         I32DivU = 0x6e, I32RemS = 0x6f, I32RemU = 0x70, I32And = 0x71,
                         I32Or = 0x72, I32Xor = 0x73, I32Shl = 0x74, I32ShrS = 0x75,
                         I32ShrU = 0x76;
inline constexpr uint8_t F32Abs = 0x8b, F32Neg = 0x8c, F32Ceil = 0x8d, F32Floor = 0x8e,
                         F32Trunc = 0x8f, F32Nearest = 0x90, F32Sqrt = 0x91, F32Add = 0x92,
                         F32Sub = 0x93, F32Mul = 0x94, F32Div = 0x95, F32Min = 0x96,
                         F32Max = 0x97;
inline constexpr uint8_t F64Abs = 0x99, F64Neg = 0x9a, F64Ceil = 0x9b, F64Floor = 0x9c,
                         F64Trunc = 0x9d, F64Nearest = 0x9e, F64Sqrt = 0x9f, F64Add = 0xa0,
                         F64Sub = 0xa1, F64Mul = 0xa2, F64Div = 0xa3, F64Min = 0xa4,
                         F64Max = 0xa5;
inline constexpr uint8_t I32WrapI64 = 0xa7, I32TruncF64S = 0xaa, I32TruncF64U = 0xab,
                         F32ConvertI32S = 0xb2, F32ConvertI32U = 0xb3, F32DemoteF64 = 0xb6,
                         F64ConvertI32S = 0xb7, F64ConvertI32U = 0xb8, F64PromoteF32 = 0xbb,
                         I32ReinterpretF32 = 0xbc, F32ReinterpretI32 = 0xbe;
inline constexpr uint8_t PrefixFC = 0xfc, PrefixSimd = 0xfd;
}  // namespace op

// 0xFC-prefixed saturating truncations: NaN -> 0, out of range -> the nearest bound.
namespace fc {
inline constexpr uint32_t I32TruncSatF32S = 0, I32TruncSatF32U = 1, I32TruncSatF64S = 2,
                          I32TruncSatF64U = 3, I64TruncSatF64S = 6;
}

// 0xFD-prefixed SIMD128 opcodes (the subset the codegen uses).
namespace simd {
inline constexpr uint32_t V128Load = 0x00, V128Load32Splat = 0x09, V128Store = 0x0b,
                          V128Const = 0x0c, I32x4Splat = 0x11, F32x4Splat = 0x13,
                          I32x4ExtractLane = 0x1b, I32x4ReplaceLane = 0x1c,
                          F32x4ExtractLane = 0x1f, F32x4ReplaceLane = 0x20;
inline constexpr uint32_t I32x4Eq = 0x37, I32x4Ne = 0x38, I32x4LtS = 0x39, I32x4LtU = 0x3a,
                          I32x4GtS = 0x3b, I32x4GtU = 0x3c, I32x4LeS = 0x3d, I32x4LeU = 0x3e;
inline constexpr uint32_t F32x4Eq = 0x41, F32x4Ne = 0x42, F32x4Lt = 0x43, F32x4Gt = 0x44,
                          F32x4Le = 0x45;
inline constexpr uint32_t V128Not = 0x4d, V128And = 0x4e, V128Or = 0x50, V128Xor = 0x51,
                          V128Bitselect = 0x52, V128Load32Zero = 0x5c;
inline constexpr uint32_t F32x4Ceil = 0x67, F32x4Floor = 0x68, F32x4Trunc = 0x69,
                          F32x4Nearest = 0x6a;
inline constexpr uint32_t I16x8ExtendLowI8x16U = 0x89, I32x4ExtendLowI16x8U = 0xa9;
inline constexpr uint32_t I32x4Shl = 0xab, I32x4ShrS = 0xac, I32x4ShrU = 0xad, I32x4Add = 0xae,
                          I32x4Sub = 0xb1, I32x4Mul = 0xb5, I32x4MinS = 0xb6, I32x4MinU = 0xb7,
                          I32x4MaxS = 0xb8, I32x4MaxU = 0xb9;
inline constexpr uint32_t F32x4Abs = 0xe0, F32x4Neg = 0xe1, F32x4Sqrt = 0xe3, F32x4Add = 0xe4,
                          F32x4Sub = 0xe5, F32x4Mul = 0xe6, F32x4Div = 0xe7;
inline constexpr uint32_t I32x4TruncSatF32x4S = 0xf8, I32x4TruncSatF32x4U = 0xf9,
                          F32x4ConvertI32x4S = 0xfa, F32x4ConvertI32x4U = 0xfb;
// Relaxed SIMD (feature-probed at run time): a * b + c, fused or not, as the engine picks.
inline constexpr uint32_t F32x4RelaxedMadd = 0x105;
}  // namespace simd

void put_uleb(std::vector<uint8_t>& out, uint64_t v);
void put_sleb(std::vector<uint8_t>& out, int64_t v);

// The body of one function: declares locals and emits instructions. Parameters are locals
// 0..nparams-1; add_local numbers the rest in order.
class CodeBuilder {
 public:
  explicit CodeBuilder(uint32_t nparams) : nparams_(nparams) {}
  uint32_t add_local(ValType t);

  void op(uint8_t opcode) { code_.push_back(opcode); }
  void fc(uint32_t subop);
  void simd(uint32_t subop);
  void simd_lane(uint32_t subop, uint8_t lane);  // extract/replace_lane
  void mem(uint8_t opcode, uint32_t align_log2, uint32_t offset = 0);
  void simd_mem(uint32_t subop, uint32_t align_log2, uint32_t offset = 0);

  // Structured control: blocks are void-typed (0x40) unless a result is given.
  void block() { blocktype(op::Block); }
  void loop() { blocktype(op::Loop); }
  void if_() { blocktype(op::If); }
  void if_result(ValType t);
  void else_() { op(op::Else); }
  void end() { op(op::End); }
  void br(uint32_t depth);
  void br_if(uint32_t depth);
  void call(uint32_t func);

  void local_get(uint32_t i);
  void local_set(uint32_t i);
  void local_tee(uint32_t i);
  void i32_const(int32_t v);
  void i64_const(int64_t v);
  void f32_const(float v);
  void f64_const(double v);
  void v128_const(const uint8_t bytes[16]);

  // The locals declaration followed by the code and a final `end`.
  std::vector<uint8_t> finish() const;

 private:
  void blocktype(uint8_t opcode);
  uint32_t nparams_;
  std::vector<ValType> locals_;
  std::vector<uint8_t> code_;
};

struct FuncType {
  std::vector<ValType> params, results;
  bool operator==(const FuncType&) const = default;
};

// A module: imported functions come first in the function index space, so all imports
// must be added before any function is defined.
class ModuleBuilder {
 public:
  uint32_t add_type(const FuncType& t);  // deduplicated
  uint32_t import_function(const std::string& module, const std::string& name, const FuncType& t);
  // Imports the core's linear memory; `shared` (pthreads) requires a maximum.
  void import_memory(const std::string& module, const std::string& name, uint32_t min_pages,
                     bool shared = false, uint32_t max_pages = 0);
  uint32_t add_function(const FuncType& t, const CodeBuilder& body);
  void export_function(const std::string& name, uint32_t func);
  std::vector<uint8_t> build() const;

 private:
  struct Import {
    std::string module, name;
    uint8_t kind;  // 0 function, 2 memory
    uint32_t type = 0;
    uint32_t min = 0, max = 0;
    bool shared = false;
  };
  std::vector<FuncType> types_;
  std::vector<Import> imports_;
  uint32_t nfunc_imports_ = 0;
  std::vector<uint32_t> func_types_;
  std::vector<std::vector<uint8_t>> bodies_;
  std::vector<std::pair<std::string, uint32_t>> exports_;
};

}  // namespace kiln::wasm
