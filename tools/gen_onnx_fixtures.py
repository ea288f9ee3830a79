#!/usr/bin/env python3
"""Generates tests/fixtures/onnx/: small ONNX models written by the real `onnx` package, with
the parse each must give as a text dump (tests/onnx_reader_test.cpp), and models with inputs
and reference outputs from onnx's own reference evaluator (tests/onnx_graph_test.cpp).

Usage:  python3 tools/gen_onnx_fixtures.py            # (re)writes tests/fixtures/onnx
        python3 tools/gen_onnx_fixtures.py --check    # exits 1 if a file is stale
Needs tools/requirements-onnx.txt (onnx and protobuf pinned; not installed by CI). Inputs
come from numpy.random.default_rng with fixed seeds, so the files are deterministic.

FORMAT of <name>.txt for <name>.onnx (one fact a line, what onnx's protobuf classes read back):
    model ir <ir_version> producer "<name>" "<version>" domain "<d>" version <model_version>
    opset "<domain>" <version>
    meta "<key>" "<value>"
    graph "<name>"                    then, indented by two spaces per graph level:
    input|output|value_info <name> <type>
        type: tensor(<ELEM>)[d0,d1,..] (dims: a number, a dim_param name, or ? for neither;
              no [] when the shape is absent), seq(<type>), opt(<type>), map(<KEY>,<type>)
    init <tensor>
        tensor: "<name>" <DATA_TYPE> [d0,..] bytes <hex of the elements, little-endian>
                or external <key>=<value>,... when the data lives in another file
    node "<name>" <op_type> "<domain>" in [a,b] out [c]
    attr <name> <TYPE> <value>         FLOAT %.9g; INT; STRING "<s>"; FLOATS/INTS [v,..];
                                       STRINGS ["a",..]; TENSOR/TENSORS <tensor>, one a line;
                                       GRAPH/GRAPHS: the graph's lines, one level deeper;
                                       TYPE_PROTO <type>
Strings are quoted with bytes outside printable ASCII (and " \\) as \\xHH.

bad_*.onnx: models kiln refuses at load (error_models()).

Runtime fixtures <name>.onnx with <name>.in<k>_<i>.pb (input i of case k) and
<name>.out<k>_<j>.pb (output j), TensorProtos as the ONNX node tests store them. gemm and conv
take their outputs from onnx's reference evaluator; the models below from onnxruntime (CPU):
  external.onnx + external.bin   weights and a Constant's value saved by onnx.save_model with
                                 save_as_external_data (every tensor, attributes too, in one file)
  loop_while.onnx                Loops whose bodies compute their conditions, with carried values
                                 and scan outputs (one bounded by a trip count, one not)
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_dirs import sync_dirs  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "onnx")


def quote(s):
    if isinstance(s, str):
        s = s.encode()
    return '"' + "".join(chr(c) if 0x20 <= c < 0x7F and c not in (0x22, 0x5C) else "\\x%02x" % c
                         for c in s) + '"'


def dump_type(t):
    which = t.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(t, which)
        name = "tensor" if which == "tensor_type" else "sparse"
        s = f"{name}({TensorProto.DataType.Name(tt.elem_type)})"
        if tt.HasField("shape"):
            dims = [str(d.dim_value) if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param")
                    else "?" for d in tt.shape.dim]
            s += "[" + ",".join(dims) + "]"
        return s
    if which == "sequence_type":
        return f"seq({dump_type(t.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"opt({dump_type(t.optional_type.elem_type)})"
    if which == "map_type":
        return f"map({TensorProto.DataType.Name(t.map_type.key_type)},{dump_type(t.map_type.value_type)})"
    return "unknown"


def dump_tensor(t):
    head = f"{quote(t.name)} {TensorProto.DataType.Name(t.data_type)} [{','.join(map(str, t.dims))}]"
    if t.data_location == TensorProto.EXTERNAL:
        return head + " external " + ",".join(f"{e.key}={e.value}" for e in t.external_data)
    return head + " bytes " + numpy_helper.to_array(t).astype(
        numpy_helper.to_array(t).dtype.newbyteorder("<")).tobytes().hex()


def dump_attr(a, pad):
    T = onnx.AttributeProto
    kind = T.AttributeType.Name(a.type)
    lines = []
    if a.type == T.FLOAT:
        lines.append(f"{pad}attr {a.name} {kind} {a.f:.9g}")
    elif a.type == T.INT:
        lines.append(f"{pad}attr {a.name} {kind} {a.i}")
    elif a.type == T.STRING:
        lines.append(f"{pad}attr {a.name} {kind} {quote(a.s)}")
    elif a.type == T.FLOATS:
        lines.append(f"{pad}attr {a.name} {kind} [" + ",".join(f"{v:.9g}" for v in a.floats) + "]")
    elif a.type == T.INTS:
        lines.append(f"{pad}attr {a.name} {kind} [" + ",".join(map(str, a.ints)) + "]")
    elif a.type == T.STRINGS:
        lines.append(f"{pad}attr {a.name} {kind} [" + ",".join(quote(s) for s in a.strings) + "]")
    elif a.type in (T.TENSOR, T.TENSORS):
        lines.append(f"{pad}attr {a.name} {kind}")
        for t in ([a.t] if a.type == T.TENSOR else a.tensors):
            lines.append(f"{pad}  {dump_tensor(t)}")
    elif a.type in (T.GRAPH, T.GRAPHS):
        lines.append(f"{pad}attr {a.name} {kind}")
        for g in ([a.g] if a.type == T.GRAPH else a.graphs):
            lines += dump_graph(g, pad + "  ")
    elif a.type == T.TYPE_PROTO:
        lines.append(f"{pad}attr {a.name} {kind} {dump_type(a.tp)}")
    return lines


def dump_graph(g, pad):
    lines = [f"{pad}graph {quote(g.name)}"]
    for kind, items in (("input", g.input), ("output", g.output), ("value_info", g.value_info)):
        lines += [f"{pad}{kind} {v.name} {dump_type(v.type)}" for v in items]
    lines += [f"{pad}init {dump_tensor(t)}" for t in g.initializer]
    for n in g.node:
        lines.append(f"{pad}node {quote(n.name)} {n.op_type} {quote(n.domain)} in [{','.join(n.input)}] "
                     f"out [{','.join(n.output)}]")
        for a in n.attribute:
            lines += dump_attr(a, pad)
    return lines


def dump_model(m):
    lines = [f"model ir {m.ir_version} producer {quote(m.producer_name)} {quote(m.producer_version)} "
             f"domain {quote(m.domain)} version {m.model_version}"]
    lines += [f"opset {quote(o.domain)} {o.version}" for o in m.opset_import]
    lines += [f"meta {quote(p.key)} {quote(p.value)}" for p in m.metadata_props]
    return "\n".join(lines + dump_graph(m.graph, "")) + "\n"


def reader_model():
    """Every message and field kind the reader handles, including both repeated encodings."""
    rng = np.random.default_rng(24)
    f32 = rng.standard_normal((2, 3)).astype(np.float32)
    typed_float = helper.make_tensor("typed_float", TensorProto.FLOAT, [3], [1.5, -2.25, 3e-8])
    inits = [
        numpy_helper.from_array(f32, "raw_float"), typed_float,
        helper.make_tensor("typed_int64", TensorProto.INT64, [4], [1, -2, 2**40, -(2**62)]),
        helper.make_tensor("typed_int32", TensorProto.INT32, [2], [-7, 2**31 - 1]),
        helper.make_tensor("typed_uint8", TensorProto.UINT8, [3], [0, 7, 255]),
        helper.make_tensor("typed_int8", TensorProto.INT8, [2], [-128, 127]),
        helper.make_tensor("typed_int16", TensorProto.INT16, [2], [-300, 300]),
        helper.make_tensor("typed_bool", TensorProto.BOOL, [3], [True, False, True]),
        helper.make_tensor("typed_f16", TensorProto.FLOAT16, [2], np.array([1.5, -0.1], np.float16)),
        numpy_helper.from_array(np.array([0.25, -3], np.float16), "raw_f16"),
        helper.make_tensor("typed_double", TensorProto.DOUBLE, [2], [0.1, -1e300]),
        helper.make_tensor("typed_uint64", TensorProto.UINT64, [2], [1, 2**63 + 5]),
        helper.make_tensor("typed_uint32", TensorProto.UINT32, [2], [3, 2**32 - 1]),
        numpy_helper.from_array(np.int64(-9), "scalar_int64"),
        numpy_helper.from_array(np.zeros((0, 2), np.float32), "empty"),
    ]
    ext = TensorProto(name="external_weight", data_type=TensorProto.FLOAT, dims=[4],
                      data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "weights.bin"), ("offset", "64"), ("length", "16")):
        ext.external_data.add(key=k, value=v)
    inits.append(ext)

    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["y_then"])], "then_branch", [],
                               [helper.make_tensor_value_info("y_then", TensorProto.FLOAT, ["N", 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["y_else"], name="neg")], "else_branch", [],
                               [helper.make_tensor_value_info("y_else", TensorProto.FLOAT, None)])
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, [2]))
    nodes = [
        helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
        helper.make_node("Custom", ["x", "", "raw_float"], ["z", ""], name="every_kind", domain="test.domain",
                         f=0.5, i=-3, s=b"bytes\x00\xff", floats=[1.0, -2.5], ints=[0, -1, 2**40],
                         strings=[b"a", b"\"q\""], t=helper.make_tensor("t", TensorProto.INT32, [1], [5]),
                         tensors=[typed_float, numpy_helper.from_array(np.array([True]), "b")],
                         graphs=[then_g], tp=seq_type),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
              helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
              helper.make_tensor_value_info("unknown_dims", TensorProto.FLOAT16, [None, "seq", 7])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3]),
               helper.make_tensor_value_info("z", TensorProto.FLOAT, None)]
    value_info = [helper.make_value_info("s", seq_type),
                  helper.make_value_info("o", helper.make_optional_type_proto(
                      helper.make_tensor_type_proto(TensorProto.FLOAT, [1]))),
                  helper.make_value_info("m", helper.make_map_type_proto(
                      TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.DOUBLE, [])))]
    g = helper.make_graph(nodes, "reader \"all\"", inputs, outputs, inits, value_info=value_info)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                          producer_name="kiln gen_onnx_fixtures", producer_version="1", model_version=3,
                          doc_string="reader fixture")
    helper.set_model_props(m, {"author": "kiln", "note": "ünïcode"})
    return m


def gemm_model():
    """Gemm (transB, alpha, beta) + Relu over a symbolic batch N, then a Sigmoid head."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "b")
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc", transB=1, alpha=0.5, beta=2.0),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Sigmoid", ["r"], ["y"], name="head")]
    g = helper.make_graph(nodes, "gemm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])], [w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    cases = [[rng.standard_normal((2, 3)).astype(np.float32)], [rng.standard_normal((5, 3)).astype(np.float32)]]
    return m, cases


def conv_model():
    """Conv (pads, strides, group 1) + MaxPool + Reshape (shape from an initializer) + Softmax."""
    rng = np.random.default_rng(8)
    w = numpy_helper.from_array((0.3 * rng.standard_normal((4, 2, 3, 3))).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "b")
    shape = numpy_helper.from_array(np.array([0, -1], np.int64), "shape")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Reshape", ["p", "shape"], ["f"], name="flatten"),
             helper.make_node("Softmax", ["f"], ["y"], name="softmax", axis=-1)]
    g = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 36])], [w, b, shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    return m, [[rng.standard_normal((1, 2, 6, 6)).astype(np.float32)]]


def error_models():
    """Models kiln must refuse at load, before running: an unknown op, an attribute its rule
    does not read, a node reading a value defined later, and an op outside its opset range."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])

    def model(nodes, opset=13):
        return helper.make_model(helper.make_graph(nodes, "bad", [x], [y]),
                                 opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()
    return {
        "bad_op.onnx": model([helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery")]),
        "bad_attr.onnx": model([helper.make_node("Relu", ["x"], ["y"], name="r", alpha=0.5)]),
        "bad_order.onnx": model([helper.make_node("Neg", ["t"], ["y"], name="late"),
                                 helper.make_node("Neg", ["x"], ["t"], name="early")]),
        "bad_opset.onnx": model([helper.make_node("Gelu", ["x"], ["y"], name="g")], opset=17),
        # Not an error: two inputs sharing the symbolic dimension N, for the feed checks.
        "shared_dim.onnx": helper.make_model(helper.make_graph(
            [helper.make_node("Add", ["a", "b"], ["y"], name="add")], "shared_dim",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 3]) for n in ("a", "b")],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])]),
            opset_imports=[helper.make_opsetid("", 13)]).SerializeToString(),
    }


def case_files(name, model, cases, run):
    """<name>.in<k>_<i>.pb and <name>.out<k>_<j>.pb of each case; run(feeds) gives the outputs."""
    files = {}
    in_names = [i.name for i in model.graph.input]
    for k, inputs in enumerate(cases):
        outs = run(dict(zip(in_names, inputs)))
        for i, x in enumerate(inputs):
            files[f"{name}.in{k}_{i}.pb"] = numpy_helper.from_array(x, in_names[i]).SerializeToString()
        for j, y in enumerate(outs):
            files[f"{name}.out{k}_{j}.pb"] = numpy_helper.from_array(
                np.asarray(y), model.graph.output[j].name).SerializeToString()
    return files


def runtime_files(name, model, cases):
    onnx.checker.check_model(model)
    ref = ReferenceEvaluator(model)
    return {f"{name}.onnx": model.SerializeToString(), **case_files(name, model, cases, lambda f: ref.run(None, f))}


def external_model():
    """Gemm + Add of a Constant + Relu, every tensor (the Constant's value too) saved to
    external.bin by onnx.save_model(save_as_external_data=True, convert_attribute=True)."""
    rng = np.random.default_rng(9)
    w = numpy_helper.from_array(rng.standard_normal((5, 4)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((5,)).astype(np.float32), "b")
    shift = numpy_helper.from_array(rng.standard_normal((5,)).astype(np.float32), "shift_value")
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc", transB=1),
             helper.make_node("Constant", [], ["shift"], name="shift", value=shift),
             helper.make_node("Add", ["h", "shift"], ["a"], name="add"),
             helper.make_node("Relu", ["a"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "external", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], [w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    return m, [[rng.standard_normal((3, 4)).astype(np.float32)]]


def loop_body(name, limit):
    """(i, cond, y, total) -> (sum(y') < limit, y' = 1.5 y + 0.25, total + sum(y'),
    scan y', scan i as float)."""
    f = TensorProto.FLOAT
    consts = [helper.make_node("Constant", [], [n], value=numpy_helper.from_array(np.array(v, np.float32), n))
              for n, v in (("k", 1.5), ("c", 0.25), ("lim", limit))]
    nodes = consts + [
        helper.make_node("Mul", ["y_in", "k"], ["ky"]),
        helper.make_node("Add", ["ky", "c"], ["y_out"]),
        helper.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0),
        helper.make_node("Add", ["total_in", "s"], ["total_out"]),
        helper.make_node("Less", ["s", "lim"], ["cond_out"]),
        helper.make_node("Cast", ["i"], ["i_f"], to=f),
        helper.make_node("Identity", ["y_out"], ["y_scan"])]
    return helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", f, [3]), helper.make_tensor_value_info("total_in", f, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", f, [3]), helper.make_tensor_value_info("total_out", f, []),
         helper.make_tensor_value_info("y_scan", f, [3]), helper.make_tensor_value_info("i_f", f, [])])


def loop_while_model():
    """Two Loops whose bodies compute their conditions (sum of the carried vector below a
    limit): `bounded` also stops at the trip count M (a graph input), `unbounded` has none;
    both stack every step's vector and iteration number. The cases stop at M, stop early,
    stop after one step, and (go false) run no step at all."""
    f = TensorProto.FLOAT
    zero = numpy_helper.from_array(np.array(0, np.float32), "zero")
    nodes = [helper.make_node("Loop", ["M", "go", "x", "zero"], ["y1", "t1", "ys1", "is1"], name="bounded",
                              body=loop_body("bounded_body", 40.0)),
             helper.make_node("Loop", ["", "go", "x", "zero"], ["y2", "t2", "ys2", "is2"], name="unbounded",
                              body=loop_body("unbounded_body", 100.0))]
    outs = [helper.make_tensor_value_info(n, f, s) for k in "12"
            for n, s in ((f"y{k}", [3]), (f"t{k}", []), (f"ys{k}", [f"n{k}", 3]), (f"is{k}", [f"n{k}"]))]
    g = helper.make_graph(nodes, "loop_while",
                          [helper.make_tensor_value_info("M", TensorProto.INT64, []),
                           helper.make_tensor_value_info("go", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", f, [3])], outs, [zero])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

    def case(m_, go, x):
        return [np.array(m_, np.int64), np.array(go, np.bool_), np.array(x, np.float32)]
    return m, [case(4, True, [0.1, 0.2, 0.3]), case(10, True, [0.5, -0.2, 1.0]), case(10, True, [30, 5, 9]),
               case(10, False, [1, 2, 3]), case(0, True, [0.1, 0.2, 0.3])]


def onnxruntime_files(name, model, cases, external=False):
    """The model's files as onnx.save_model writes them (with external data: the .onnx and
    external.bin), and onnxruntime's outputs for each case, run from the saved files."""
    import onnxruntime as ort
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, f"{name}.onnx")
        onnx.save_model(model, path, save_as_external_data=external, all_tensors_to_one_file=True,
                        location=f"{name}.bin", size_threshold=0, convert_attribute=True)
        onnx.checker.check_model(path)
        files = {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        files.update(case_files(name, model, cases, lambda f: sess.run(None, f)))
    return files


def main():
    m = reader_model()
    files = {"reader_all.onnx": m.SerializeToString(), "reader_all.txt": dump_model(m).encode()}
    files.update(runtime_files("gemm", *gemm_model()))
    files.update(runtime_files("conv", *conv_model()))
    files.update(error_models())
    files.update(onnxruntime_files("external", *external_model(), external=True))
    files.update(onnxruntime_files("loop_while", *loop_while_model()))
    sync_dirs({OUT: files}, "gen_onnx_fixtures", "files")


if __name__ == "__main__":
    main()
