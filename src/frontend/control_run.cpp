// Running the control flow primitives on concrete arrays (control.h). Each body is a
// compiled call (run_call: compiled once per argument layout) run in a C++ loop, so a loop
// of N iterations costs N dispatches of one program and no tracing. A scan runs one step
// program per iteration that reads x[i] with a gather, runs the body and writes y[i] into
// the stacked outputs (a select over the stack), with the counter i a device scalar, so no
// iteration reads anything back; a while loop reads its one-element predicate back per
// iteration (per chunk of guarded iterations on webgpu), and a cond its index once (on webgpu
// it runs every branch and selects instead).
#include "backend/blocking_read.h"
#include "frontend/control.h"
#include "frontend/control_util.h"
#include "frontend/rule_ops.h"

namespace kiln::frontend {

using namespace control_detail;

namespace {

// (consts, i, carry, xs, ys) -> (i + 1, carry, ys with row i (or length-1-i) written).
CallRef scan_step(const ControlOp& op) {
  return cached<CallJaxpr>(op, "step", [&] {
    const CallRef& body = op.bodies[0];
    const size_t nc = size_t(op.num_consts), nk = size_t(op.num_carry);
    std::vector<Aval> in = op.in_avals(), out = op.out_avals();
    const size_t nx = in.size() - nc - nk, ny = out.size() - nk;
    std::vector<Aval> av(in.begin(), in.begin() + long(nc));
    av.push_back({{}, DType::Int32, false});
    av.insert(av.end(), in.begin() + long(nc), in.end());
    av.insert(av.end(), out.begin() + long(nk), out.end());
    const int64_t length = op.length;
    const bool reverse = op.reverse;
    return trace_derived(
        [=](const std::vector<Array>& x) {
          const std::string& dev = x[nc].device();
          Array i = x[nc];
          Array idx = reverse ? ops::sub(ops::filled({}, DType::Int32, double(length - 1), dev), i) : i;
          std::vector<Array> args = slice(x, 0, nc), carry = slice(x, nc + 1, nk);
          args.insert(args.end(), carry.begin(), carry.end());
          Params take;
          take.axes = {0};
          for (size_t k = 0; k < nx; k++) args.push_back(frontend::bind(Prim::Gather, {x[nc + 1 + nk + k], idx}, take));
          std::vector<Array> r = bind_call(body, args);
          std::vector<Array> res{ops::add(i, ops::filled({}, DType::Int32, 1, dev))};
          res.insert(res.end(), r.begin(), r.begin() + long(nk));
          for (size_t k = 0; k < ny; k++) {
            const Array& ys = x[nc + 1 + nk + nx + k];
            Shape one(ys.shape().size(), 1), row = ys.shape();
            row[0] = 1;
            Array at = ops::binary(Prim::CmpEq, ops::iota(ys.shape(), 0, dev),
                                   ops::expand(ops::reshape(idx, one), ys.shape()));
            res.push_back(ops::where(at, ops::expand(ops::reshape(r[nk + k], row), ys.shape()), ys));
          }
          return res;
        },
        av, body->device, "step(" + body->name + ")");
  });
}

void check_args(const ControlOp& op, const std::vector<Array>& args) {
  std::vector<Aval> want = op.in_avals();
  const std::string name = op.kind == ControlKind::While ? "while_loop" : op.name();
  if (args.size() != want.size()) fail(name, "got ", args.size(), " operands, expected ", want.size());
  for (size_t i = 0; i < args.size(); i++) {
    if (args[i].shape() != want[i].shape || args[i].dtype() != want[i].dtype)
      fail(name, "operand ", i, " is ", dtype_name(args[i].dtype()), shape_str(args[i].shape()), ", expected ",
           want[i].str(), " (the type its body was traced with)");
    if (args[i].device() != args[0].device())
      fail(name, "got operands on devices ", args[0].device(), " and ", args[i].device(), ", expected one device");
  }
}

std::vector<Array> run_scan(const ControlOp& op, const std::vector<Array>& args) {
  const size_t nc = size_t(op.num_consts), nk = size_t(op.num_carry);
  std::vector<Aval> out = op.out_avals();
  const std::string& dev = args.empty() ? op.bodies[0]->device : args[0].device();
  std::vector<Array> consts = slice(args, 0, nc), carry = slice(args, nc, nk),
                     xs = slice(args, nc + nk, args.size() - nc - nk), ys;
  for (size_t k = nk; k < out.size(); k++) ys.push_back(ops::zeros(out[k], dev));
  if (op.length > 0) {
    CallRef step = scan_step(op);
    for (auto& c : consts) c.eval();
    for (auto& x : xs) x.eval();
    Array i = ops::filled({}, DType::Int32, 0, dev);
    for (int64_t it = 0; it < op.length; it++) {
      std::vector<Array> r = run_call(*step, join({consts, {i}, carry, xs, ys}));
      i = r[0];
      carry = slice(r, 1, nk);
      ys = slice(r, 1 + nk, r.size() - 1 - nk);
    }
  }
  return join({carry, ys});
}

// cond on a device without cheap synchronous reads (webgpu): every branch runs and the
// index selects among their outputs on the device, so nothing is read back and the work
// stays in the open command encoder. Bodies have no side effects, so running the branches
// not taken changes nothing but the time. One derived program, compiled once.
CallRef cond_select(const ControlOp& op) {
  return cached<CallJaxpr>(op, "select", [&] {
    const std::vector<CallRef> bodies = op.bodies;
    return trace_derived(
        [bodies](const std::vector<Array>& x) {
          std::vector<Array> operands = slice(x, 1, x.size() - 1);
          std::vector<std::vector<Array>> outs;
          for (const CallRef& b : bodies) outs.push_back(bind_call(b, operands));
          return select_branch(x[0], outs);
        },
        op.in_avals(), bodies[0]->device, "select(" + bodies[0]->name + ")");
  });
}

// (cond consts, body consts, carry) -> carry: one while iteration that applies the body only
// while the predicate holds (a select on the device), so a run of them needs no read back: a
// finished carry stays as it is, and its predicate stays false.
CallRef while_guarded(const ControlOp& op) {
  return cached<CallJaxpr>(op, "guarded", [&] {
    const CallRef cond = op.bodies[0], body = op.bodies[1];
    const size_t ncc = size_t(op.cond_consts), nc = size_t(op.num_consts), nk = size_t(op.num_carry);
    return trace_derived(
        [=](const std::vector<Array>& x) {
          std::vector<Array> cc = slice(x, 0, ncc), bc = slice(x, ncc, nc), carry = slice(x, ncc + nc, nk);
          Array p = bind_call(cond, join({cc, carry}))[0];
          std::vector<Array> next = bind_call(body, join({bc, carry}));
          for (size_t i = 0; i < nk; i++) {
            const Shape& s = carry[i].shape();
            next[i] = ops::where(ops::expand(ops::reshape(p, Shape(s.size(), 1)), s), next[i], carry[i]);
          }
          return next;
        },
        op.in_avals(), body->device, "guarded(" + body->name + ")");
  });
}

// On devices whose synchronous reads are slow (webgpu in browsers: a canvas round trip of a
// few ms, against ~0.1 ms for a small body's dispatches), a while loop reads its predicate
// once per chunk of iterations: the first of a chunk runs the body (its predicate was read
// true), the rest are guarded steps. Chunks double from 1 up to this many iterations, so a
// short loop wastes little and a long one reads back every kMaxWhileChunk iterations.
constexpr int64_t kMaxWhileChunk = 32;

// A while loop's predicate goes to the host once per iteration (per chunk on webgpu): cheaply
// on cpu/native/wasm, through the slow blocking read on webgpu in browsers, and not at all in
// Node.js's webgpu.
bool read_bool(const Array& p) {
  if (!can_read_blocking(get_backend(p.device())))
    fail("while_loop", "the loop's predicate must be read back on every iteration, and device ", p.device(),
         " cannot read synchronously here (webgpu does only in browsers, through a canvas copy); use scan or "
         "fori_loop with static bounds, or the wasm device");
  return p.item() != 0;
}

}  // namespace

std::vector<Array> run_control(const ControlOp& op, const std::vector<Array>& args) {
  check_args(op, args);
  if (op.kind == ControlKind::Scan) return run_scan(op, args);
  if (op.kind == ControlKind::Remat) return run_call(*op.bodies[0], args);
  if (op.kind == ControlKind::Cond) {
    if (!get_backend(args[0].device()).can_read_sync()) return run_call(*cond_select(op), args);
    const int64_t n = int64_t(op.bodies.size());
    int64_t b = std::clamp<int64_t>(int64_t(args[0].item()), 0, n - 1);
    return run_call(*op.bodies[size_t(b)], slice(args, 1, args.size() - 1));
  }
  const size_t ncc = size_t(op.cond_consts), nc = size_t(op.num_consts), nk = size_t(op.num_carry);
  std::vector<Array> cc = slice(args, 0, ncc), bc = slice(args, ncc, nc), carry = slice(args, ncc + nc, nk);
  for (auto& c : cc) c.eval();
  for (auto& c : bc) c.eval();
  const bool slow_reads = !get_backend(args.empty() ? op.bodies[0]->device : args[0].device()).can_read_sync();
  int64_t chunk = 1;
  while (read_bool(run_call(*op.bodies[0], join({cc, carry}))[0])) {
    carry = run_call(*op.bodies[1], join({bc, carry}));
    for (int64_t k = 1; k < chunk; k++) carry = run_call(*while_guarded(op), join({cc, bc, carry}));
    if (slow_reads) chunk = std::min(chunk * 2, kMaxWhileChunk);
  }
  return carry;
}

}  // namespace kiln::frontend
