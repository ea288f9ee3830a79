// Batching: the vmap trace (values carry a batch axis, or none) and its rule table
// (vmap_rules.cpp). Rules move batch axes to the front and shift the params.
#pragma once
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "frontend/trace.h"

namespace kiln::frontend {

using BatchDim = std::optional<int>;  // nullopt: not batched (the same for every element)

// (value, its batch axis) from operands and their batch axes, `size` the batch size.
using VmapRule = std::function<std::pair<Array, BatchDim>(const std::vector<Array>& vals,
                                                          const std::vector<BatchDim>& dims,
                                                          const Params& params, int64_t size)>;

bool has_vmap_rule(Prim p);
const VmapRule& vmap_rule(Prim p);  // throws kiln::Error when missing

struct BatchTracer : Tracer {
  BatchTracer(std::shared_ptr<Trace> t, Array v, BatchDim d)
      : Tracer(std::move(t)), val(std::move(v)), dim(d) {}
  Array val;
  BatchDim dim;
};

class BatchTrace : public Trace {
 public:
  explicit BatchTrace(int64_t size) : size(size) {}
  Array lift(const Array& x) override;
  Array process(Prim p, const std::vector<Array>& args, const Params& params) override;
  std::vector<Array> process_custom_jvp(const CustomJvp& c,
                                        const std::vector<Array>& args) override;
  std::vector<Array> process_custom_vjp(const CustomVjp& c,
                                        const std::vector<Array>& args) override;
  std::vector<Array> process_call(const std::shared_ptr<const CallJaxpr>& c,
                                  const std::vector<Array>& args) override;
  std::vector<Array> process_control(const std::shared_ptr<const ControlOp>& op,
                                     const std::vector<Array>& args) override;
  Array make(Array val, BatchDim dim);
  const int64_t size;
};

// Maps f over axis in_dims[i] of args[i] (nullopt: not mapped). Returns the outputs and
// the batch axis of each (nullopt when an output does not depend on the mapped axis).
std::pair<std::vector<Array>, std::vector<BatchDim>> vmap_flat(const ArraysFn& f,
                                                               const std::vector<Array>& args,
                                                               const std::vector<BatchDim>& in_dims,
                                                               int64_t size);

// x with its batch axis moved to `to`; an unbatched x is broadcast to `size` there.
Array move_batch_axis(const Array& x, BatchDim from, int to, int64_t size);

}  // namespace kiln::frontend
