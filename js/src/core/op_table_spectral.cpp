// The op table's spectral entries: numpy.fft (src/library/fft.cpp), the eigen/singular
// value decompositions and lax.convTranspose, kept apart from op_table.cpp so that file stays one screenful per
// concern. Complex values travel as two handles (real, imag), jax-js's ComplexPair.
#include "kiln/fft.h"
#include "kiln/lax.h"
#include "kiln/linalg.h"
#include "op_table.h"

namespace kiln::js {
namespace {

namespace fft = kiln::numpy::fft;
using Args = std::vector<Array>;

fft::Complex cx(const std::string& op, const Args& x) {
  if (x.size() != 2) fail(op, "got ", x.size(), " array arguments, expected a (real, imag) pair");
  return {x[0], x[1]};
}
const Array& one(const std::string& op, const Args& x) {
  if (x.size() != 1) fail(op, "got ", x.size(), " array arguments, expected 1");
  return x[0];
}
val out(const fft::Complex& z) { return from_arrays({z.real, z.imag}); }
int axis(const val& p) { return get_int(p, "axis", -1); }
// null or absent: every axis.
std::optional<std::vector<int>> axes(const val& p) {
  if (!is_set(p["axes"])) return std::nullopt;
  return get_ints(p, "axes");
}
std::vector<int> axes2(const val& p) { return is_set(p["axes"]) ? get_ints(p, "axes") : std::vector<int>{-2, -1}; }

}  // namespace

const std::map<std::string, OpFn>& spectral_ops() {
  static const std::map<std::string, OpFn> t = {
      {"fft.fft", [](const Args& x, const val& p) { return out(fft::fft(cx("fft", x), axis(p))); }},
      {"fft.ifft", [](const Args& x, const val& p) { return out(fft::ifft(cx("ifft", x), axis(p))); }},
      {"fft.fftn", [](const Args& x, const val& p) { return out(fft::fftn(cx("fftn", x), axes(p))); }},
      {"fft.ifftn", [](const Args& x, const val& p) { return out(fft::ifftn(cx("ifftn", x), axes(p))); }},
      {"fft.fft2", [](const Args& x, const val& p) { return out(fft::fft2(cx("fft2", x), axes2(p))); }},
      {"fft.ifft2", [](const Args& x, const val& p) { return out(fft::ifft2(cx("ifft2", x), axes2(p))); }},
      {"fft.rfft", [](const Args& x, const val& p) { return out(fft::rfft(one("rfft", x), axis(p))); }},
      {"fft.irfft", [](const Args& x, const val& p) { return from_array(fft::irfft(cx("irfft", x), axis(p))); }},
      {"fft.rfftn", [](const Args& x, const val& p) { return out(fft::rfftn(one("rfftn", x), axes(p))); }},
      {"fft.irfftn", [](const Args& x, const val& p) { return from_array(fft::irfftn(cx("irfftn", x), axes(p))); }},
      {"fft.rfft2", [](const Args& x, const val& p) { return out(fft::rfft2(one("rfft2", x), axes2(p))); }},
      {"fft.irfft2", [](const Args& x, const val& p) { return from_array(fft::irfft2(cx("irfft2", x), axes2(p))); }},
      {"fft.hfft", [](const Args& x, const val& p) { return from_array(fft::hfft(cx("hfft", x), axis(p))); }},
      {"fft.ihfft", [](const Args& x, const val& p) { return out(fft::ihfft(one("ihfft", x), axis(p))); }},
      {"fft.fftfreq", [](const Args&, const val& p) {
         return from_array(fft::fftfreq(int64_t(get_num(p, "n", 0)), get_num(p, "d", 1.0), get_dtype(p, "dtype").value_or(float32)));
       }},
      {"fft.rfftfreq", [](const Args&, const val& p) {
         return from_array(fft::rfftfreq(int64_t(get_num(p, "n", 0)), get_num(p, "d", 1.0), get_dtype(p, "dtype").value_or(float32)));
       }},
      {"fft.fftshift", [](const Args& x, const val& p) { return from_array(fft::fftshift(one("fftshift", x), get_axes(p, "axes"))); }},
      {"fft.ifftshift", [](const Args& x, const val& p) { return from_array(fft::ifftshift(one("ifftshift", x), get_axes(p, "axes"))); }},
      // ---- lax.convTranspose (lax.cpp), kept here with the other jax-js gap closers ----
      {"conv_transpose", [](const Args& x, const val& p) {
         if (x.size() != 2) fail("convTranspose", "got ", x.size(), " array arguments, expected 2");
         lax::Padding pad;
         if (p["padding"].isString()) pad = js_string(p["padding"], "option 'padding'");
         else {
           std::vector<std::pair<int64_t, int64_t>> pairs;
           val v = p["padding"];
           for (int i = 0; i < js_length(v, "option 'padding'"); i++) {
             if (js_length(v[i], "option 'padding'") != 2) fail(current_op(), "option 'padding' got a pair of ", js_length(v[i], "option 'padding'"), " entries, expected (low, high)");
             pairs.push_back({js_int64(v[i][0], "option 'padding'"), js_int64(v[i][1], "option 'padding'")});
           }
           pad = pairs;
         }
         std::vector<int64_t> dil;
         if (is_set(p["rhsDilation"])) dil = get_int64s(p, "rhsDilation");
         return from_array(lax::conv_transpose(x[0], x[1], get_int64s(p, "strides"), pad, dil, get_bool(p, "transposeKernel", false)));
       }},
      // ---- decompositions (linalg_eigen.cpp) ----
      {"eigh", [](const Args& x, const val& p) {
         auto [w, v] = linalg::eigh(one("eigh", x), get_bool(p, "lower", true), get_bool(p, "symmetrizeInput", true),
                                    get_bool(p, "sortEigenvalues", true));
         return from_arrays({w, v});
       }},
      {"eigvalsh", [](const Args& x, const val& p) {
         return from_array(linalg::eigvalsh(one("eigvalsh", x), true, get_bool(p, "symmetrizeInput", true)));
       }},
      {"svd", [](const Args& x, const val& p) {
         auto [u, s, vh] = linalg::svd(one("svd", x), get_bool(p, "fullMatrices", false));
         return from_arrays({u, s, vh});
       }},
      {"svdvals", [](const Args& x, const val&) { return from_array(linalg::svdvals(one("svdvals", x))); }},
  };
  return t;
}

}  // namespace kiln::js
