"""Larger fixtures (thousands of elements), so kernels that block, tile, vectorize or split
work are exercised past their first block, on contiguous and strided inputs."""

import numpy as np

from .core import default_sampler, make_input, uniform
from .elementwise import UNARY_INEXACT, binary_case, unary_case
from .lax_ops import conv_ref, pool_ref, reduce_window_ref
from .linalg import contract_case
from .reductions import arg_case, cum_case, red_case
from .core import tol_accum, tol_transcendental


def gen_large(fam):
    rng = fam.rng
    f = lambda shp, view=None, lo=-2, hi=2: make_input(rng, "float32", shp, uniform(lo, hi, 2), view=view)
    binary_case(fam, "add", np.add, f((33, 65), "T"), f((65,)), cid="large_add_T_bcast")
    binary_case(fam, "multiply", np.multiply, f((67, 33), "step"), f((67, 33), "flip"), cid="large_multiply_step_flip")
    binary_case(fam, "maximum", np.maximum, make_input(rng, "int32", (3000,), default_sampler("int32")),
                make_input(rng, "int32", (3000,), default_sampler("int32")), cid="large_maximum_i32")
    fn = UNARY_INEXACT["exp"][0]
    unary_case(fam, "exp", fn, f((2100,)), "float32", tol_transcendental("float32"), cid="large_exp_2100")
    unary_case(fam, "tanh", UNARY_INEXACT["tanh"][0], f((45, 50), "T"), "float32", tol_transcendental("float32"),
               cid="large_tanh_T")
    red_case(fam, "sum", f((257, 31), lo=0, hi=1), 0, False).id = "large_sum_axis0"
    red_case(fam, "sum", f((60, 90), lo=0, hi=1), None, False).id = "large_sum_all"
    red_case(fam, "max", f((31, 257)), 1, False).id = "large_max_axis1"
    red_case(fam, "mean", f((64, 96), "T"), 1, True).id = "large_mean_T_axis1"
    red_case(fam, "var", f((30, 250), lo=5, hi=7), 1, False, 1).id = "large_var_axis1"
    red_case(fam, "sum", make_input(rng, "int32", (50, 80), default_sampler("int32")), (0, 1), False).id = "large_sum_i32"
    arg_case(fam, "argmax", make_input(rng, "float32", (50, 77), lambda r, s: r.integers(-20, 20, s) / 4.0), 1,
             False).id = "large_argmax_axis1"
    cum_case(fam, "cumsum", f((1000,)), 0).id = "large_cumsum_1000"
    cum_case(fam, "cumsum", f((40, 60), "T"), 1).id = "large_cumsum_T_axis1"
    contract_case(fam, "matmul", "large_matmul_65x70x33", [f((65, 70)), f((70, 33))], np.matmul, 70)
    contract_case(fam, "matmul", "large_matmul_batched", [f((3, 17, 20)), f((20, 19))], np.matmul, 20)
    contract_case(fam, "matmul", "large_matmul_T_T", [f((48, 64), "T"), f((64, 40), "T")], np.matmul, 64)
    contract_case(fam, "matmul", "large_matmul_i32", [make_input(rng, "int32", (40, 50), default_sampler("int32")),
                                                     make_input(rng, "int32", (50, 30), default_sampler("int32"))],
                  np.matmul, 50)
    contract_case(fam, "einsum", "large_einsum_bij_bjk", [f((4, 16, 24)), f((4, 24, 8))],
                  lambda a, b: np.einsum("bij,bjk->bik", a, b), 24, [("subscripts", "bij,bjk->bik")])
    for name, ls, rs, kw in (("large_conv_same", (1, 8, 14, 14), (12, 8, 3, 3), dict(strides=[1, 1], padding="SAME")),
                             ("large_conv_depthwise_s2", (1, 16, 12, 12), (16, 1, 3, 3),
                              dict(strides=[2, 2], padding="SAME", fgc=16)),
                             ("large_conv_nhwc", (2, 12, 12, 6), (3, 3, 6, 10),
                              dict(strides=[1, 1], padding="VALID", dn=("NHWC", "HWIO", "NHWC")))):
        lhs, rhs = f(ls, lo=-1, hi=1), f(rs, lo=-1, hi=1)
        lv, rv = lhs.value().astype(np.float64), rhs.value().astype(np.float64)
        c = fam.case(name, "conv_general_dilated")
        c.param("window_strides", *kw["strides"]).param("padding", kw["padding"])
        c.param("lhs_dilation").param("rhs_dilation")
        if "dn" in kw:
            c.param("dimension_numbers", *kw["dn"])
        c.param("feature_group_count", kw.get("fgc", 1)).param("batch_group_count", 1)
        c.inputs = [lhs, rhs]
        c.expect(conv_ref(lv, rv, **kw).astype(np.float32), "float32", weak=False)
        n = int(np.prod(rs)) // (rs[-1] if "dn" in kw else rs[0])
        c.tol = tol_accum("float32", n, float(conv_ref(np.abs(lv), np.abs(rv), **kw).max()))
    x = f((2, 4, 24, 24), "T")
    c = fam.case("large_max_pool_3x3_s2_same", "max_pool").param("window", 3, 3).param("strides", 2, 2)
    c.param("padding", "SAME")
    c.inputs = [x]
    c.expect(pool_ref(x.value(), "max", (3, 3), (2, 2), "SAME").astype(np.float32), "float32", weak=False)
    x = f((2, 4, 16, 16))
    c = fam.case("large_avg_pool_3x3_s2_same_nopad", "avg_pool").param("window", 3, 3).param("strides", 2, 2)
    c.param("padding", "SAME").param("count_include_pad", 0)
    c.inputs = [x]
    c.expect(pool_ref(x.value(), "avg", (3, 3), (2, 2), "SAME", False).astype(np.float32), "float32", weak=False)
    c.tol = tol_accum("float32", 9, 2.0)
    x = f((40, 50))
    c = fam.case("large_reduce_window_sum_5x5", "reduce_window").param("op", "sum")
    c.param("window_dimensions", 5, 5).param("window_strides", 1, 2).param("padding", "SAME")
    c.param("base_dilation").param("window_dilation")
    c.inputs = [x]
    c.expect(reduce_window_ref(x.value(), "sum", (5, 5), (1, 2), "SAME").astype(np.float32), "float32", weak=False)
    c.tol = tol_accum("float32", 25, 50.0)
    x = f((2, 3, 4, 5, 6))
    perm = [3, 0, 4, 2, 1]
    c = fam.case("large_transpose_5d", "transpose").param("axes", "list", *perm)
    c.inputs = [x]
    c.expect(np.transpose(x.value(), perm), weak=False)
    x = f((40, 50), "T")
    c = fam.case("large_index_steps", "index").param("index", "-3:2:-3", "1::7")
    c.inputs = [x]
    c.expect(np.array(x.value()[-3:2:-3, 1::7]), weak=False)
