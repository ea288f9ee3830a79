// A minimal ONNX (protobuf) writer for the bench's peer graphs: MatMul, Conv and an
// elementwise chain, with float32 inputs of fixed shapes and scalar constants as initializers.
// Also used by tools/gen_onnx_model_fixtures.mjs (TensorProto files).
export function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}
const key = (field, wire) => varint((field << 3) | wire);
const bytes = (field, b) => [...key(field, 2), ...varint(b.length), ...b];
const str = (field, s) => bytes(field, [...new TextEncoder().encode(s)]);
const int = (field, v) => [...key(field, 0), ...varint(v)];

function valueInfo(name, shape) {
  const dims = shape.flatMap((d) => bytes(1, int(1, d)));             // Dimension.dim_value
  const tensor = [...int(1, 1), ...bytes(2, dims)];                    // elem_type FLOAT, shape
  return [...str(1, name), ...bytes(2, bytes(1, tensor))];             // name, type.tensor_type
}
function node(op, inputs, outputs, attrs = []) {
  return [...inputs.flatMap((i) => str(1, i)), ...outputs.flatMap((o) => str(2, o)), ...str(4, op),
          ...attrs.flatMap((a) => bytes(5, a))];
}
// AttributeProto with INTS (type 7).
export const intsAttr = (name, vals) => [...str(1, name), ...vals.flatMap((v) => int(8, v)), ...int(20, 7)];
function scalar(name, v) {
  const f = new Uint8Array(new Float32Array([v]).buffer);
  return [...int(2, 1), ...str(8, name), ...bytes(9, [...f])];        // data_type, name, raw_data
}

// graph: {nodes: [[op, inputs, outputs, attrs]], inputs: [[name, shape]], output: [name, shape], consts: {name: v}}
export function model(g) {
  const graph = [...g.nodes.flatMap((n) => bytes(1, node(...n))), ...str(2, 'g'),
                 ...Object.entries(g.consts || {}).flatMap(([k, v]) => bytes(5, scalar(k, v))),
                 ...g.inputs.flatMap(([n, s]) => bytes(11, valueInfo(n, s))),
                 ...bytes(12, valueInfo(...g.output))];
  const opset = [...str(1, ''), ...int(2, 13)];
  return new Uint8Array([...int(1, 8), ...bytes(7, graph), ...bytes(8, opset)]);
}
