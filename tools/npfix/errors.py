"""Error fixtures: calls that must throw kiln::Error whose message contains one of the
'|'-separated substrings (kiln's messages start with the operation's name)."""

import numpy as np

from .core import Input, default_sampler, make_input, weak


def gen_errors(fam):
    rng = fam.rng
    A = lambda dt, shp: make_input(rng, dt, shp, default_sampler(dt))

    def err(cid, op, inputs, msg, *params):
        c = fam.case(f"error_{cid}", op)
        for k, *v in params:
            c.param(k, *v)
        c.inputs = list(inputs)
        c.error = msg
        return c

    err("add_broadcast", "add", [A("float32", (2, 3)), A("float32", (4,))], "add|broadcast")
    err("multiply_broadcast", "multiply", [A("float32", (2, 3)), A("float32", (3, 2))], "multiply|broadcast")
    err("operator_plus_broadcast", "operator+", [A("int32", (3,)), A("int32", (2,))], "add|broadcast|+")
    err("less_broadcast", "less", [A("float32", (2, 1, 3)), A("float32", (2, 2))], "less|broadcast")
    err("where_broadcast", "where", [A("bool", (2,)), A("float32", (3,)), A("float32", (3,))], "where|broadcast")
    err("maximum_broadcast_empty", "maximum", [A("float32", (0,)), A("float32", (2,))], "maximum|broadcast")
    err("broadcast_to_incompatible", "broadcast_to", [A("float32", (3,))], "broadcast", ("shape", 2, 4))
    err("broadcast_to_fewer_dims", "broadcast_to", [A("float32", (2, 3))], "broadcast", ("shape", 3))
    err("broadcast_shapes", "broadcast_shapes", [], "broadcast", ("a", 2, 3), ("b", 4))
    err("broadcast_arrays", "broadcast_arrays", [A("float32", (2,)), A("float32", (3,))], "broadcast")
    err("sum_axis_out_of_range", "sum", [A("float32", (2, 3))], "sum|axis", ("axis", 2), ("keepdims", 0))
    err("sum_axis_negative_out_of_range", "sum", [A("float32", (2, 3))], "sum|axis", ("axis", -3), ("keepdims", 0))
    err("max_axis_duplicate", "max", [A("float32", (2, 3))], "max|axis|duplicate", ("axis", "list", 0, 0), ("keepdims", 0))
    err("mean_axis_out_of_range", "mean", [A("float32", (4,))], "mean|axis", ("axis", 1), ("keepdims", 0))
    err("argmax_axis_out_of_range", "argmax", [A("float32", (2, 3))], "argmax|axis", ("axis", 5), ("keepdims", 0))
    err("cumsum_axis_out_of_range", "cumsum", [A("float32", (2, 3))], "cumsum|axis", ("axis", -3))
    err("max_empty", "max", [A("float32", (0, 3))], "max|empty|zero-size|identity", ("axis", 0), ("keepdims", 0))
    err("argmax_empty", "argmax", [A("float32", (0,))], "argmax|empty|zero-size", ("axis", "none"), ("keepdims", 0))
    err("reshape_size", "reshape", [A("float32", (2, 3))], "reshape", ("shape", 4, 2))
    err("reshape_two_minus_one", "reshape", [A("float32", (2, 3))], "reshape", ("shape", -1, -1))
    err("reshape_minus_one_indivisible", "reshape", [A("float32", (2, 3))], "reshape", ("shape", 4, -1))
    err("method_reshape_size", "Array.reshape", [A("int32", (6,))], "reshape", ("shape", 5))
    err("transpose_bad_perm", "transpose", [A("float32", (2, 3, 4))], "transpose", ("axes", "list", 0, 0, 1))
    err("transpose_wrong_rank", "transpose", [A("float32", (2, 3))], "transpose", ("axes", "list", 1, 0, 2))
    err("swapaxes_out_of_range", "swapaxes", [A("float32", (2, 3))], "swapaxes|axis", ("axis1", 0), ("axis2", 2))
    err("moveaxis_out_of_range", "moveaxis(int)", [A("float32", (2, 3))], "moveaxis|axis", ("source", 3), ("destination", 0))
    err("moveaxis_length_mismatch", "moveaxis(vector)", [A("float32", (2, 3, 4))], "moveaxis",
        ("source", 0, 1), ("destination", 2))
    err("expand_dims_out_of_range", "expand_dims", [A("float32", (2, 3))], "expand_dims|axis", ("axis", "list", 4))
    err("squeeze_not_one", "squeeze", [A("float32", (2, 1))], "squeeze", ("axis", "list", 0))
    err("index_too_many", "index", [A("float32", (2, 3))], "index", ("index", "0", "1", "2"))
    err("index_two_ellipses", "index", [A("float32", (2, 3))], "index|ellipsis", ("index", "...", "0", "..."))
    err("index_zero_step", "index", [A("float32", (4,))], "index|step", ("index", "::0"))
    err("pad_bad_mode", "pad", [A("float32", (3,))], "pad|mode", ("pad_width", 1, 1), ("mode", "wrapped"))
    err("pad_negative", "pad", [A("float32", (3,))], "pad", ("pad_width", -1, 1), ("mode", "constant"))
    err("pad_wrong_rank", "pad", [A("float32", (3, 2))], "pad", ("pad_width", 1, 1, 1, 1, 1, 1), ("mode", "constant"))
    err("pad_reflect_empty", "pad", [A("float32", (0,))], "pad|reflect|empty", ("pad_width", 1, 1), ("mode", "reflect"))
    err("concatenate_rank", "concatenate", [A("float32", (2, 3)), A("float32", (3,))], "concatenate", ("axis", 0))
    err("concatenate_shape", "concatenate", [A("float32", (2, 3)), A("float32", (2, 4))], "concatenate", ("axis", 0))
    err("concatenate_axis", "concatenate", [A("float32", (2, 3)), A("float32", (2, 3))], "concatenate|axis", ("axis", 2))
    err("concatenate_empty_list", "concatenate", [], "concatenate", ("axis", 0))
    err("stack_shape", "stack", [A("float32", (2, 3)), A("float32", (3, 2))], "stack", ("axis", 0))
    err("stack_axis", "stack", [A("float32", (2,)), A("float32", (2,))], "stack|axis", ("axis", 3))
    err("split_uneven", "split(sections)", [A("float32", (5,))], "split", ("sections", 2), ("axis", 0))
    err("split_zero_sections", "split(sections)", [A("float32", (4,))], "split", ("sections", 0), ("axis", 0))
    err("repeat_length", "repeat(vector)", [A("float32", (3,))], "repeat", ("repeats", 1, 2), ("axis", 0))
    err("repeat_negative", "repeat(int)", [A("float32", (3,))], "repeat", ("repeats", -1), ("axis", 0))
    err("tile_negative", "tile", [A("float32", (3,))], "tile", ("reps", -2))
    err("take_axis", "take", [A("float32", (2, 3)), Input("int32", np.array([0]))], "take|axis", ("axis", 2))
    err("take_float_indices", "take", [A("float32", (3,)), Input("float32", np.array([0.0]))], "take|integer|int", ("axis", 0))
    err("take_along_axis_rank", "take_along_axis", [A("float32", (2, 3)), Input("int32", np.array([0, 1]))],
        "take_along_axis", ("axis", 1))
    err("flip_axis", "flip", [A("float32", (2, 3))], "flip|axis", ("axis", "list", 2))
    err("matmul_inner", "matmul", [A("float32", (2, 3)), A("float32", (4, 5))], "matmul")
    err("matmul_batch", "matmul", [A("float32", (2, 2, 3)), A("float32", (3, 3, 4))], "matmul|broadcast")
    err("matmul_scalar", "matmul", [A("float32", ()), A("float32", (3,))], "matmul")
    err("dot_inner", "dot", [A("float32", (2, 3)), A("float32", (2, 3))], "dot")
    err("vdot_size", "vdot", [A("float32", (3,)), A("float32", (4,))], "vdot")
    err("inner_last", "inner", [A("float32", (2, 3)), A("float32", (2, 4))], "inner")
    err("tensordot_mismatch", "tensordot(int)", [A("float32", (2, 3)), A("float32", (2, 3))], "tensordot", ("axes", 1))
    err("tensordot_pairs_mismatch", "tensordot(pairs)", [A("float32", (2, 3)), A("float32", (4, 2))], "tensordot",
        ("a_axes", 1), ("b_axes", 0))
    err("einsum_unknown_output", "einsum", [A("float32", (2, 3)), A("float32", (3, 4))], "einsum", ("subscripts", "ij,jk->il"))
    err("einsum_rank", "einsum", [A("float32", (2, 3, 4))], "einsum", ("subscripts", "ij->"))
    err("einsum_dims", "einsum", [A("float32", (2, 3)), A("float32", (4, 5))], "einsum", ("subscripts", "ij,jk->ik"))
    err("einsum_operand_count", "einsum", [A("float32", (2, 3))], "einsum", ("subscripts", "ij,jk->ik"))
    err("einsum_repeated_output", "einsum", [A("float32", (2, 2))], "einsum", ("subscripts", "ij->ii"))
    err("einsum_two_arrows", "einsum", [A("float32", (2,))], "einsum", ("subscripts", "i->i->i"))
    err("conv_channels", "conv_general_dilated", [A("float32", (1, 3, 5, 5)), A("float32", (2, 4, 3, 3))], "conv",
        ("window_strides", 1, 1), ("padding", "VALID"), ("lhs_dilation",), ("rhs_dilation",),
        ("feature_group_count", 1), ("batch_group_count", 1))
    err("conv_groups", "conv_general_dilated", [A("float32", (1, 4, 5, 5)), A("float32", (3, 2, 3, 3))], "conv",
        ("window_strides", 1, 1), ("padding", "VALID"), ("lhs_dilation",), ("rhs_dilation",),
        ("feature_group_count", 2), ("batch_group_count", 1))
    err("conv_rank", "conv_general_dilated", [A("float32", (1, 3, 5, 5)), A("float32", (2, 3, 3))], "conv",
        ("window_strides", 1, 1), ("padding", "VALID"), ("lhs_dilation",), ("rhs_dilation",),
        ("feature_group_count", 1), ("batch_group_count", 1))
    err("conv_strides_length", "conv_general_dilated", [A("float32", (1, 3, 5, 5)), A("float32", (2, 3, 3, 3))], "conv",
        ("window_strides", 1), ("padding", "VALID"), ("lhs_dilation",), ("rhs_dilation",),
        ("feature_group_count", 1), ("batch_group_count", 1))
    err("conv_bad_padding", "conv_general_dilated", [A("float32", (1, 3, 5, 5)), A("float32", (2, 3, 3, 3))], "conv|padding",
        ("window_strides", 1, 1), ("padding", "FULL"), ("lhs_dilation",), ("rhs_dilation",),
        ("feature_group_count", 1), ("batch_group_count", 1))
    err("conv_layout", "conv_general_dilated", [A("float32", (1, 5, 5, 3)), A("float32", (3, 3, 3, 2))], "conv",
        ("window_strides", 1, 1), ("padding", "VALID"), ("lhs_dilation",), ("rhs_dilation",),
        ("dimension_numbers", "NHWX", "HWIO", "NHWC"), ("feature_group_count", 1), ("batch_group_count", 1))
    err("conv_simple_channels", "conv", [A("float32", (1, 3, 5)), A("float32", (2, 2, 3))], "conv",
        ("window_strides", 1), ("padding", "SAME"))
    err("reduce_window_rank", "reduce_window", [A("float32", (4, 4))], "reduce_window",
        ("op", "max"), ("window_dimensions", 2), ("window_strides", 1), ("padding", "VALID"),
        ("base_dilation",), ("window_dilation",))
    err("max_pool_rank", "max_pool", [A("float32", (4, 4))], "max_pool|pool", ("window", 2, 2, 2), ("strides", 1, 1, 1),
        ("padding", "VALID"))
    err("bitcast_itemsize", "bitcast_convert_type", [A("float32", (3,))], "bitcast", ("dtype", "float16"))
    err("bitwise_and_float", "bitwise_and", [A("float32", (3,)), A("float32", (3,))], "bitwise_and|bitwise|integer")
    err("left_shift_float", "left_shift", [A("float32", (3,)), A("int32", (3,))], "left_shift|shift|integer")
    err("linspace_negative_num", "linspace", [], "linspace", ("start", 0.0), ("stop", 1.0), ("num", -1), ("endpoint", 1),
        ("dtype", "float32"))
    err("zeros_negative_dim", "zeros", [], "zeros|negative|shape", ("shape", 2, -1))
    err("full_fill_not_broadcastable", "full", [A("float32", (3,))], "full|broadcast", ("shape", 2, 2))
    err("array_vector_size", "array(vector)", [Input("float32", np.zeros(3))], "array", ("shape_override", 2, 2))
    err("clip_broadcast", "clip", [A("float32", (2, 3)), A("float32", (2,))], "clip|maximum|broadcast", ("bounds", "min"))
    err("add_weak_scalar_and_bad_shapes", "add", [A("float32", (2, 3)), A("float32", (2,))], "add|broadcast")
    err("add_weak_then_error", "where", [A("bool", (2, 3)), weak(1.5), A("float32", (4,))], "where|broadcast")
