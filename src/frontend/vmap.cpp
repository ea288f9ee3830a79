// The vmap trace: each traced value is a (value, batch axis) pair, and each primitive goes
// through its rule in vmap_rules.cpp. Custom-rule functions are batched with their rules.
#include "frontend/vmap.h"

#include "frontend/call.h"
#include "frontend/control.h"
#include "frontend/rule_ops.h"

namespace kiln::frontend {

Array move_batch_axis(const Array& x, BatchDim from, int to, int64_t size) {
  if (!from) return ops::insert_axis(x, to, size);
  return ops::moveaxis(x, *from, to);
}

Array BatchTrace::make(Array val, BatchDim dim) {
  // Unbatched results leave this trace (as JVP's zero tangents do).
  if (!dim) return val;
  Aval av{val.shape(), val.dtype(), val.weak_type()};
  av.shape.erase(av.shape.begin() + *dim);
  std::string dev = val.device();
  return make_traced(std::make_shared<BatchTracer>(shared_from_this(), std::move(val), dim), av,
                     dev);
}

Array BatchTrace::lift(const Array& x) {
  return make_traced(std::make_shared<BatchTracer>(shared_from_this(), x, std::nullopt),
                     x.impl()->aval, x.device());
}

namespace {
void unpack(const Trace& t, const std::vector<Array>& args, std::vector<Array>& vals,
            std::vector<BatchDim>& dims) {
  for (auto& a : args) {
    auto* tr = tracer_in<BatchTracer>(a, t);
    vals.push_back(tr->val);
    dims.push_back(tr->dim);
  }
}
// Batch axes moved to the front, so batched rules of custom functions see axis 0.
std::vector<Array> to_front(const std::vector<Array>& vals, const std::vector<BatchDim>& dims,
                            std::vector<BatchDim>& front) {
  std::vector<Array> r;
  for (size_t i = 0; i < vals.size(); i++) {
    r.push_back(dims[i] ? ops::moveaxis(vals[i], *dims[i], 0) : vals[i]);
    front.push_back(dims[i] ? BatchDim(0) : std::nullopt);
  }
  return r;
}
std::vector<Array> all_front(const std::pair<std::vector<Array>, std::vector<BatchDim>>& r,
                             int64_t size) {
  std::vector<Array> out;
  for (size_t i = 0; i < r.first.size(); i++)
    out.push_back(move_batch_axis(r.first[i], r.second[i], 0, size));
  return out;
}
}  // namespace

Array BatchTrace::process(Prim p, const std::vector<Array>& args, const Params& params) {
  std::vector<Array> vals;
  std::vector<BatchDim> dims;
  unpack(*this, args, vals, dims);
  bool any = false;
  for (auto& d : dims) any = any || d.has_value();
  if (!any) return frontend::bind(p, vals, params);
  auto [v, d] = vmap_rule(p)(vals, dims, params, size);
  return make(std::move(v), d);
}

std::vector<Array> BatchTrace::process_custom_jvp(const CustomJvp& c,
                                                  const std::vector<Array>& args) {
  std::vector<Array> vals;
  std::vector<BatchDim> dims, front;
  unpack(*this, args, vals, dims);
  vals = to_front(vals, dims, front);
  const int64_t n = size;
  CustomJvp b;
  b.fun = [c, front, n](const std::vector<Array>& xs) {
    return all_front(vmap_flat(c.fun, xs, front, n), n);
  };
  b.jvp = [c, front, n](const std::vector<Array>& ps, const std::vector<Array>& ts) {
    const size_t k = ps.size();
    std::vector<Array> both = ps;
    both.insert(both.end(), ts.begin(), ts.end());
    std::vector<BatchDim> dd = front;
    dd.insert(dd.end(), front.begin(), front.end());
    auto pair_fn = [c, k](const std::vector<Array>& xs) {
      auto [o, t] = c.jvp(std::vector<Array>(xs.begin(), xs.begin() + long(k)),
                          std::vector<Array>(xs.begin() + long(k), xs.end()));
      for (size_t i = 0; i < t.size(); i++) t[i] = t[i].valid() ? t[i] : ops::full_like(o[i], 0);
      o.insert(o.end(), t.begin(), t.end());
      return o;
    };
    std::vector<Array> r = all_front(vmap_flat(pair_fn, both, dd, n), n);
    size_t m = r.size() / 2;
    return std::pair{std::vector<Array>(r.begin(), r.begin() + long(m)),
                     std::vector<Array>(r.begin() + long(m), r.end())};
  };
  std::vector<Array> outs = bind_custom_jvp(b, vals);
  std::vector<Array> r;
  for (auto& o : outs) r.push_back(make(o, 0));
  return r;
}

std::vector<Array> BatchTrace::process_custom_vjp(const CustomVjp& c,
                                                  const std::vector<Array>& args) {
  std::vector<Array> vals;
  std::vector<BatchDim> dims, front;
  unpack(*this, args, vals, dims);
  vals = to_front(vals, dims, front);
  const int64_t n = size;
  auto nout = std::make_shared<size_t>(0);
  CustomVjp b;
  b.fun = [c, front, n](const std::vector<Array>& xs) {
    return all_front(vmap_flat(c.fun, xs, front, n), n);
  };
  b.fwd = [c, front, n, nout](const std::vector<Array>& xs) {
    auto fn = [c, nout](const std::vector<Array>& a) {
      auto [o, res] = c.fwd(a);
      *nout = o.size();
      o.insert(o.end(), res.begin(), res.end());
      return o;
    };
    std::vector<Array> r = all_front(vmap_flat(fn, xs, front, n), n);
    return std::pair{std::vector<Array>(r.begin(), r.begin() + long(*nout)),
                     std::vector<Array>(r.begin() + long(*nout), r.end())};
  };
  b.bwd = [bwd = c.bwd, front, n](const std::vector<Array>& res, const std::vector<Array>& cts) {
    const size_t k = res.size();
    std::vector<Array> both = res;
    both.insert(both.end(), cts.begin(), cts.end());
    std::vector<BatchDim> dd(both.size(), BatchDim(0));
    auto fn = [bwd, k](const std::vector<Array>& a) {
      return bwd(std::vector<Array>(a.begin(), a.begin() + long(k)),
                 std::vector<Array>(a.begin() + long(k), a.end()));
    };
    std::vector<Array> g = all_front(vmap_flat(fn, both, dd, n), n);
    // Arguments that were not batched get the sum of their per-example cotangents.
    for (size_t i = 0; i < g.size() && i < front.size(); i++)
      if (!front[i]) g[i] = ops::reduce_sum(g[i], {0});
    return g;
  };
  std::vector<Array> outs = bind_custom_vjp(b, vals);
  std::vector<Array> r;
  for (auto& o : outs) r.push_back(make(o, 0));
  return r;
}

std::vector<Array> BatchTrace::process_call(const CallRef& c, const std::vector<Array>& args) {
  std::vector<Array> vals;
  std::vector<BatchDim> dims, front;
  unpack(*this, args, vals, dims);
  std::vector<bool> batched;
  for (auto& d : dims) batched.push_back(d.has_value());
  bool any = false;
  for (bool b : batched) any = any || b;
  if (!any) return bind_call(c, vals);
  // The batched call takes batch axes in front and returns every output batched at 0.
  std::vector<Array> r = bind_call(call_vmap(*c, batched, size), to_front(vals, dims, front));
  std::vector<Array> outs;
  for (auto& o : r) outs.push_back(make(o, 0));
  return outs;
}

std::vector<Array> BatchTrace::process_control(const ControlRef& op, const std::vector<Array>& args) {
  return control_vmap(*this, op, args);
}

std::pair<std::vector<Array>, std::vector<BatchDim>> vmap_flat(const ArraysFn& f,
                                                               const std::vector<Array>& args,
                                                               const std::vector<BatchDim>& in_dims,
                                                               int64_t size) {
  auto trace = std::make_shared<BatchTrace>(size);
  TraceScope scope(trace);
  std::vector<Array> in;
  for (size_t i = 0; i < args.size(); i++)
    in.push_back(in_dims[i] ? trace->make(args[i], in_dims[i]) : args[i]);
  std::vector<Array> out = f(in), vals;
  std::vector<BatchDim> dims;
  for (auto& o : out) {
    if (auto* tr = tracer_in<BatchTracer>(o, *trace)) {
      vals.push_back(tr->val);
      dims.push_back(tr->dim);
    } else {
      top_trace({o});  // throws if o escaped an inner transformation
      vals.push_back(o);
      dims.push_back(std::nullopt);
    }
  }
  return {vals, dims};
}

}  // namespace kiln::frontend
