#include "vla/report/reference_runs.hpp"

#include <algorithm>
#include <stdexcept>

#include "vla/reference/run.hpp"

namespace vla::report {

namespace {

struct Capture {
  const std::vector<int>* steps;
  RefRun* run;
  void operator()(int b, int t, int h, const core::HeadState<double>& st, const core::Workspace<double>&,
                  const core::StepInfo<double>&) const {
    if (b != 0) return;
    const auto it = std::lower_bound(steps->begin(), steps->end(), t + 1);
    if (it == steps->end() || *it != t + 1) return;
    const std::size_t i = std::size_t(it - steps->begin());
    run->S_at[h][i] = st.S;
    if (!st.A.empty()) run->A_at[h][i] = st.A;
  }
};

template <class T>
std::vector<T> head(const std::vector<T>& v, std::size_t n) {
  return std::vector<T>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
}

}  // namespace

RefRun run_reference(const Stream& s, const Options& opt, const std::vector<int>& steps) {
  if (!std::is_sorted(steps.begin(), steps.end())) throw std::logic_error("run_reference: steps must be sorted");
  RefRun run;
  run.S_at.assign(s.dims.H, std::vector<std::vector<double>>(steps.size()));
  run.A_at.assign(s.dims.H, std::vector<std::vector<double>>(steps.size()));
  Capture cap{&steps, &run};
  auto r = ref::run_recurrent<double>(s, opt, cap);
  run.out.dims = r.dims;
  run.out.o = std::move(r.o);
  run.out.S = std::move(r.S);
  run.out.A = std::move(r.A);
  run.out.state_norm = std::move(r.state_norm);
  return run;
}

Stream prefix(const Stream& s, int T) {
  if (s.dims.B != 1) throw std::logic_error("prefix: batch of one expected");
  Stream p;
  p.dims = s.dims;
  p.dims.T = T;
  p.q = head(s.q, p.dims.qk_size());
  p.k = head(s.k, p.dims.qk_size());
  p.v = head(s.v, p.dims.v_size());
  if (s.has_u()) p.u = head(s.u, p.dims.qk_size());
  return p;
}

Outputs prefix_outputs(const Outputs& o, int T) {
  if (o.dims.B != 1) throw std::logic_error("prefix_outputs: batch of one expected");
  Outputs p;
  p.dims = o.dims;
  p.dims.T = T;
  p.o = head(o.o, p.dims.v_size());
  p.state_norm = head(o.state_norm, std::size_t(T) * o.dims.H);
  return p;
}

}  // namespace vla::report
