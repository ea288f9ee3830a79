// Helpers shared by the control flow rules (control_rules.cpp, control_autodiff.cpp).
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "frontend/control.h"

namespace kiln::frontend::control_detail {

inline std::string mask_key(const std::vector<bool>& m) {
  std::string s;
  for (bool b : m) s += b ? '1' : '0';
  return s;
}

inline std::vector<Aval> ins_of(const CallJaxpr& c) {
  std::vector<Aval> r;
  for (int v : c.jaxpr->invars) r.push_back(c.jaxpr->vars[size_t(v)]);
  return r;
}

inline std::vector<Aval> outs_of(const CallJaxpr& c) {
  std::vector<Aval> r;
  for (auto& a : c.jaxpr->outs) r.push_back(c.jaxpr->aval(a));
  return r;
}

inline bool same_type(const Aval& a, const Aval& b) { return a.shape == b.shape && a.dtype == b.dtype; }

inline Aval with_leading(Aval a, int64_t n) {
  a.shape.insert(a.shape.begin(), n);
  return a;
}

// A copy of c whose inputs are c's inputs `ins` in that order (an entry -1-k is a new,
// unused input of type extra[k]) and whose outputs are c's outputs `outs`.
inline CallRef remap_call(const CallRef& c, const std::vector<int>& ins, const std::vector<int>& outs,
                   const std::vector<Aval>& extra = {}) {
  auto j = std::make_shared<Jaxpr>(*c->jaxpr);
  j->invars.clear();
  for (int i : ins) j->invars.push_back(i >= 0 ? c->jaxpr->invars[size_t(i)] : j->add_var(extra[size_t(-1 - i)]));
  j->outs.clear();
  for (int o : outs) j->outs.push_back(c->jaxpr->outs[size_t(o)]);
  return make_call(j, c->device, c->name);
}

inline std::vector<int> range(int a, int b) {
  std::vector<int> r;
  for (int i = a; i < b; i++) r.push_back(i);
  return r;
}

inline std::vector<int> cat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

template <typename T, typename F>
std::shared_ptr<const T> cached(const ControlOp& op, const std::string& key, F make) {
  {
    std::lock_guard<std::mutex> lock(op.mu);
    auto it = op.cache.find(key);
    if (it != op.cache.end()) return std::static_pointer_cast<const T>(it->second);
  }
  std::shared_ptr<const T> r = make();
  std::lock_guard<std::mutex> lock(op.mu);
  return std::static_pointer_cast<const T>(op.cache.emplace(key, r).first->second);
}

// A derived body traced from a function of calls; it closes over nothing traced.
inline CallRef trace_derived(const ArraysFn& f, const std::vector<Aval>& avals, const std::string& device,
                      const std::string& name) {
  ClosedFn r = trace_closed(f, avals, device, name);
  if (!r.captured.empty()) throw Error("internal: a derived body of " + name + " captured a traced array");
  return r.call;
}

// The outputs of the branch an int32 index picks, clamped as cond/switch clamp it: a `where`
// chain from the last branch down (index <= b picks branch b). `idx` is a scalar, or [n] lanes
// that pick along the outputs' leading axis (vmap). A select passes only the picked values, so
// a NaN or inf that a branch not taken computed never reaches the result.
std::vector<Array> select_branch(const Array& idx, const std::vector<std::vector<Array>>& outs);

template <typename T>
std::vector<T> slice(const std::vector<T>& v, size_t a, size_t n) {
  return std::vector<T>(v.begin() + long(a), v.begin() + long(a + n));
}

inline std::vector<Array> join(std::initializer_list<std::vector<Array>> parts) {
  std::vector<Array> r;
  for (auto& p : parts) r.insert(r.end(), p.begin(), p.end());
  return r;
}

}  // namespace kiln::frontend::control_detail
