// quantized_matmul's shape, jvp and batching rules (routine.h), and its float formulation:
// the packed weight dequantized by primitives, which the straight-through jvp multiplies.
#include <string>

#include "frontend/routine.h"
#include "frontend/rule_ops.h"

namespace kiln::frontend {

namespace {

using namespace ops;

[[noreturn]] void bad(const std::string& what) { fail("quantized_matmul", what); }

void expect(const Aval& a, const char* name, DType dtype, const Shape& shape) {
  expect_routine_operand("quantized_matmul", a, name, dtype, shape);
}

}  // namespace

Aval quantized_matmul_shape(const std::vector<Aval>& in, const Params& prm) {
  const Aval& x = in[0];
  if (x.dtype != DType::Float32 || x.shape.empty()) bad("x is " + x.str() + ", expected float32[..., k]");
  const int64_t k = x.shape.back();
  if (k % kQuantBlock != 0) bad("x has k = " + std::to_string(k) + ", expected a multiple of 32");
  if (prm.rows < 0) bad("got rows = " + std::to_string(prm.rows) + ", expected >= 0");
  const Shape block = {quant_groups(prm.rows), k / kQuantBlock, kQuantRowGroup};
  Shape codes = block;
  codes.push_back(quant_block_words(prm.quant));
  expect(in[1], "codes", DType::Uint32, codes);
  expect(in[2], "d", DType::Float32, block);
  expect(in[3], "mins", DType::Float32, quant_has_mins(prm.quant) ? block : Shape{0});
  Shape out(x.shape.begin(), x.shape.end() - 1);
  out.push_back(prm.rows);
  return {out, DType::Float32, false};
}

Array dequantize_packed(const Array& codes, const Array& d, const Array& mins, QuantLayout layout, int64_t rows,
                        int64_t k) {
  const std::string dev = codes.device();
  const bool nib = layout == QuantLayout::Nibble4;
  const int64_t g = codes.shape()[0], nb = codes.shape()[1];
  // Value v of a block: its word and bit offset in the row's block words.
  Array v = iota({kQuantBlock}, 0, dev);
  auto ci = [&](double c) { return filled({kQuantBlock}, DType::Int32, c, dev); };
  Array j = nib ? binary(Prim::And, v, ci(15)) : v;
  Array word = binary(Prim::Shr, j, ci(2));
  Array shift = binary(Prim::Shl, binary(Prim::And, j, ci(3)), ci(3));
  if (nib) shift = add(shift, binary(Prim::Shl, binary(Prim::Shr, v, ci(4)), ci(2)));
  Params take;
  take.axes = {3};
  Array w = frontend::bind(Prim::Gather, {codes, word}, take);  // [g, nb, 8, 32]
  const Shape full = w.shape();
  Array sh = expand(reshape(cast(shift, DType::Uint32, false), {1, 1, 1, kQuantBlock}), full);
  Array q = binary(Prim::And, binary(Prim::Shr, w, sh), filled(full, DType::Uint32, nib ? 15 : 255, dev));
  Array qi = cast(q, DType::Int32, false);
  if (!nib)  // the byte as int8
    qi = where(binary(Prim::CmpLt, qi, filled(full, DType::Int32, 128, dev)), qi,
               sub(qi, filled(full, DType::Int32, 256, dev)));
  auto per_value = [&](const Array& a) { return expand(reshape(a, {g, nb, kQuantRowGroup, 1}), full); };
  Array val = mul(cast(qi, DType::Float32, false), per_value(d));
  if (nib) val = add(val, per_value(mins));
  Array t = reshape(transpose(val, {0, 2, 1, 3}), {g * kQuantRowGroup, k});
  return rows == g * kQuantRowGroup ? t : shrink(t, {{0, rows}, {0, k}});
}

std::pair<Array, Array> quantized_matmul_jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                                             const Params& prm) {
  Array y = frontend::bind(Prim::QuantizedMatmul, x, prm);
  if ((t[2].valid() || t[3].valid())) bad("has no derivative in its scales and mins (straight-through in x only)");
  if (!t[0].valid()) return {y, Array()};
  const int64_t k = x[0].shape().back();
  Array w = dequantize_packed(x[1], x[2], x[3], prm.quant, prm.rows, k);  // [rows, k]
  // tx [..., k] -> [..., rows, k] times w broadcast, summed over k.
  Shape lead(t[0].shape().begin(), t[0].shape().end() - 1);
  Shape one = lead, both = lead, wshape(lead.size(), 1);
  one.insert(one.end(), {1, k});
  both.insert(both.end(), {prm.rows, k});
  wshape.insert(wshape.end(), {prm.rows, k});
  Array prod = mul(expand(reshape(t[0], one), both), expand(reshape(w, wshape), both));
  return {y, reduce_sum(prod, {int(both.size()) - 1})};
}

std::pair<Array, BatchDim> quantized_matmul_vmap(const std::vector<Array>& v, const std::vector<BatchDim>& d,
                                                 const Params& prm, int64_t n) {
  if (d[1] || d[2] || d[3]) bad("vmap over the packed weight is not supported (only over x's rows)");
  Array x = move_batch_axis(v[0], d[0], 0, n);
  return {frontend::bind(Prim::QuantizedMatmul, {x, v[1], v[2], v[3]}, prm), 0};
}

}  // namespace kiln::frontend
