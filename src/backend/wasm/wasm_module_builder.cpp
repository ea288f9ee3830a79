// The Wasm binary encoding: LEB128 integers, sections in the order the spec requires, and
// function bodies with run-length-encoded local declarations.
#include "backend/wasm/wasm_module_builder.h"

#include <cstring>

#include "ir/error.h"

namespace kiln::wasm {

void put_uleb(std::vector<uint8_t>& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    out.push_back(b);
  } while (v);
}

void put_sleb(std::vector<uint8_t>& out, int64_t v) {
  bool more = true;
  while (more) {
    uint8_t b = v & 0x7f;
    v >>= 7;  // arithmetic shift
    if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) more = false;
    else b |= 0x80;
    out.push_back(b);
  }
}

namespace {
void put_name(std::vector<uint8_t>& out, const std::string& s) {
  put_uleb(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}
void put_section(std::vector<uint8_t>& out, uint8_t id, const std::vector<uint8_t>& body) {
  out.push_back(id);
  put_uleb(out, body.size());
  out.insert(out.end(), body.begin(), body.end());
}
}  // namespace

uint32_t CodeBuilder::add_local(ValType t) {
  locals_.push_back(t);
  return nparams_ + uint32_t(locals_.size()) - 1;
}

void CodeBuilder::fc(uint32_t subop) {
  code_.push_back(op::PrefixFC);
  put_uleb(code_, subop);
}
void CodeBuilder::simd(uint32_t subop) {
  code_.push_back(op::PrefixSimd);
  put_uleb(code_, subop);
}
void CodeBuilder::simd_lane(uint32_t subop, uint8_t lane) {
  simd(subop);
  code_.push_back(lane);
}
void CodeBuilder::mem(uint8_t opcode, uint32_t align_log2, uint32_t offset) {
  code_.push_back(opcode);
  put_uleb(code_, align_log2);
  put_uleb(code_, offset);
}
void CodeBuilder::simd_mem(uint32_t subop, uint32_t align_log2, uint32_t offset) {
  simd(subop);
  put_uleb(code_, align_log2);
  put_uleb(code_, offset);
}
void CodeBuilder::blocktype(uint8_t opcode) {
  code_.push_back(opcode);
  code_.push_back(0x40);
}
void CodeBuilder::if_result(ValType t) {
  code_.push_back(op::If);
  code_.push_back(uint8_t(t));
}
void CodeBuilder::br(uint32_t depth) {
  code_.push_back(op::Br);
  put_uleb(code_, depth);
}
void CodeBuilder::br_if(uint32_t depth) {
  code_.push_back(op::BrIf);
  put_uleb(code_, depth);
}
void CodeBuilder::call(uint32_t func) {
  code_.push_back(op::Call);
  put_uleb(code_, func);
}
void CodeBuilder::local_get(uint32_t i) {
  code_.push_back(op::LocalGet);
  put_uleb(code_, i);
}
void CodeBuilder::local_set(uint32_t i) {
  code_.push_back(op::LocalSet);
  put_uleb(code_, i);
}
void CodeBuilder::local_tee(uint32_t i) {
  code_.push_back(op::LocalTee);
  put_uleb(code_, i);
}
void CodeBuilder::i32_const(int32_t v) {
  code_.push_back(op::I32Const);
  put_sleb(code_, v);
}
void CodeBuilder::i64_const(int64_t v) {
  code_.push_back(op::I64Const);
  put_sleb(code_, v);
}
void CodeBuilder::f32_const(float v) {
  code_.push_back(op::F32Const);
  uint8_t b[4];
  std::memcpy(b, &v, 4);  // little-endian hosts only (Wasm and x86/arm are)
  code_.insert(code_.end(), b, b + 4);
}
void CodeBuilder::f64_const(double v) {
  code_.push_back(op::F64Const);
  uint8_t b[8];
  std::memcpy(b, &v, 8);
  code_.insert(code_.end(), b, b + 8);
}
void CodeBuilder::v128_const(const uint8_t bytes[16]) {
  simd(simd::V128Const);
  code_.insert(code_.end(), bytes, bytes + 16);
}

std::vector<uint8_t> CodeBuilder::finish() const {
  std::vector<uint8_t> out;
  // Runs of equal types, as the encoding groups them.
  std::vector<std::pair<uint32_t, ValType>> runs;
  for (ValType t : locals_) {
    if (!runs.empty() && runs.back().second == t) runs.back().first++;
    else runs.push_back({1, t});
  }
  put_uleb(out, runs.size());
  for (auto& [n, t] : runs) {
    put_uleb(out, n);
    out.push_back(uint8_t(t));
  }
  out.insert(out.end(), code_.begin(), code_.end());
  out.push_back(op::End);
  return out;
}

uint32_t ModuleBuilder::add_type(const FuncType& t) {
  for (size_t i = 0; i < types_.size(); i++)
    if (types_[i] == t) return uint32_t(i);
  types_.push_back(t);
  return uint32_t(types_.size() - 1);
}

uint32_t ModuleBuilder::import_function(const std::string& module, const std::string& name,
                                        const FuncType& t) {
  if (!bodies_.empty()) fail("wasm.ModuleBuilder", "function import '", name, "' after a function definition");
  imports_.push_back({module, name, 0, add_type(t)});
  return nfunc_imports_++;
}

void ModuleBuilder::import_memory(const std::string& module, const std::string& name,
                                  uint32_t min_pages, bool shared, uint32_t max_pages) {
  Import im{module, name, 2};
  im.min = min_pages;
  im.max = max_pages;
  im.shared = shared;
  imports_.push_back(im);
}

uint32_t ModuleBuilder::add_function(const FuncType& t, const CodeBuilder& body) {
  func_types_.push_back(add_type(t));
  bodies_.push_back(body.finish());
  return nfunc_imports_ + uint32_t(bodies_.size()) - 1;
}

void ModuleBuilder::export_function(const std::string& name, uint32_t func) {
  exports_.push_back({name, func});
}

std::vector<uint8_t> ModuleBuilder::build() const {
  std::vector<uint8_t> out = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  std::vector<uint8_t> s;
  // 1: types.
  put_uleb(s, types_.size());
  for (auto& t : types_) {
    s.push_back(0x60);
    put_uleb(s, t.params.size());
    for (ValType v : t.params) s.push_back(uint8_t(v));
    put_uleb(s, t.results.size());
    for (ValType v : t.results) s.push_back(uint8_t(v));
  }
  put_section(out, 1, s);
  // 2: imports.
  s.clear();
  put_uleb(s, imports_.size());
  for (auto& im : imports_) {
    put_name(s, im.module);
    put_name(s, im.name);
    s.push_back(im.kind);
    if (im.kind == 0) {
      put_uleb(s, im.type);
    } else {
      // Limits flags: 0 = min only, 1 = min and max, 3 = shared with max.
      s.push_back(im.shared ? 3 : im.max ? 1 : 0);
      put_uleb(s, im.min);
      if (im.shared || im.max) put_uleb(s, im.max);
    }
  }
  put_section(out, 2, s);
  // 3: function declarations.
  s.clear();
  put_uleb(s, func_types_.size());
  for (uint32_t t : func_types_) put_uleb(s, t);
  put_section(out, 3, s);
  // 7: exports.
  s.clear();
  put_uleb(s, exports_.size());
  for (auto& [name, f] : exports_) {
    put_name(s, name);
    s.push_back(0x00);
    put_uleb(s, f);
  }
  put_section(out, 7, s);
  // 10: code.
  s.clear();
  put_uleb(s, bodies_.size());
  for (auto& b : bodies_) {
    put_uleb(s, b.size());
    s.insert(s.end(), b.begin(), b.end());
  }
  put_section(out, 10, s);
  return out;
}

}  // namespace kiln::wasm
