// jit and make_jaxpr: trace a function once per argument signature into a jaxpr, simplify
// and fuse it into a program of kernels, and run that program on later calls.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "frontend/transforms.h"

namespace kiln {

namespace frontend {
struct Jaxpr;
}

// A traced function: the jaxpr (constants captured at trace time included) and its text.
struct ClosedJaxpr {
  std::shared_ptr<const frontend::Jaxpr> jaxpr;
  std::string str() const;  // JAX-like: "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"
};

// Traces f on arguments of these types. Arguments at static_argnums are passed through
// unchanged (they must be trees of scalars or None) and are not inputs of the jaxpr.
ClosedJaxpr make_jaxpr(const Fn& f, const std::vector<Tree>& args, const std::vector<int>& static_argnums = {});
ClosedJaxpr make_jaxpr(const ArrayFn& f, const Array& x);

// f compiled: the first call with a new signature (argument structure, shapes, dtypes,
// weak types, device, the values of static arguments) traces f and fuses it into kernels;
// later calls with that signature dispatch the compiled kernels only. Called on traced
// values it binds the call primitive (call.h): grad, vmap and jvp of it run compiled
// derived programs; inside another jit it is inlined. It composes in any order.
Fn jit(const Fn& f, const std::vector<int>& static_argnums = {});
ArrayFn jit(const ArrayFn& f);

}  // namespace kiln
