// Planted defects in the twin's driver: what the kernel reads and writes, at
// which batch, head, step and layout, and which options it honours. Each is the
// production CPU twin (vla::impl::run) composed at build time with a re-indexing
// of its inputs or outputs, which is exactly what a kernel with that indexing
// bug computes; the maths of the step is untouched.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "candidates_internal.hpp"

namespace vla::gate {

namespace {

using impl::Kind;

Outputs twin(const Stream& s, const Options& o, Kind kind) { return impl::run(s, o, kind, impl::Device::cpu); }

// Copies row (b, t, h) of a [B,T,H,D] tensor from (b2, t2, h2).
void copy_row(std::vector<double>& x, const Dims& d, int D, int b, int t, int h, int b2, int t2, int h2) {
  if (x.empty()) return;
  const std::vector<double> src(x.begin() + d.off(b2, t2, h2, D), x.begin() + d.off(b2, t2, h2, D) + D);
  std::copy(src.begin(), src.end(), x.begin() + d.off(b, t, h, D));
}

template <class F>
Runner with_options(Kind kind, F change) {
  return [kind, change](const Stream& s, const Options& o) {
    Options m = o;
    change(m);
    return twin(s, m, kind);
  };
}

template <class F>
Runner with_inputs(Kind kind, F change) {
  return [kind, change](const Stream& s, const Options& o) {
    Stream m = s;
    change(m);
    return twin(m, o, kind);
  };
}

template <class F>
Runner with_outputs(Kind kind, F change) {
  return [kind, change](const Stream& s, const Options& o) {
    Outputs out = twin(s, o, kind);
    change(out);
    return out;
  };
}

// The state of head (b, h) is not reset: it starts from the previous head's
// final S, A and n. Equivalent to one head running all B*H streams back to back.
Outputs state_carry(const Stream& s, const Options& o, Kind kind) {
  const Dims& d = s.dims;
  Stream one;
  one.dims = Dims{1, d.B * d.H * d.T, 1, d.Dk, d.Dv};
  auto append = [&](const std::vector<double>& x, std::vector<double>& y, int D) {
    if (x.empty()) return;
    for (int b = 0; b < d.B; ++b)
      for (int h = 0; h < d.H; ++h)
        for (int t = 0; t < d.T; ++t) y.insert(y.end(), x.begin() + d.off(b, t, h, D), x.begin() + d.off(b, t, h, D) + D);
  };
  append(s.q, one.q, d.Dk);
  append(s.k, one.k, d.Dk);
  append(s.v, one.v, d.Dv);
  append(s.u, one.u, d.Dk);
  const Outputs r = twin(one, o, kind);
  Outputs out;
  out.allocate(d, true);
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h) {
      const int head = b * d.H + h;
      for (int t = 0; t < d.T; ++t) {
        const int tt = head * d.T + t;
        std::copy_n(r.o.begin() + std::size_t(tt) * d.Dv, d.Dv, out.o.begin() + d.off(b, t, h, d.Dv));
        out.state_norm[(std::size_t(b) * d.T + t) * d.H + h] = r.state_norm[tt];
      }
    }
  // Only the last head's final state is that of the single long run; the others
  // are the states at the end of their own segment, which the long run passes
  // through but does not output: rerun the prefix up to each segment's end.
  for (int head = 0; head < d.B * d.H; ++head) {
    Stream pre = one;
    const int T2 = (head + 1) * d.T;
    pre.dims.T = T2;
    for (auto* x : {&pre.q, &pre.k, &pre.u}) x->resize(x->empty() ? 0 : std::size_t(T2) * d.Dk);
    pre.v.resize(std::size_t(T2) * d.Dv);
    const Outputs p = twin(pre, o, kind);
    std::copy(p.S.begin(), p.S.end(), out.S.begin() + std::size_t(head) * p.S.size());
    std::copy(p.A.begin(), p.A.end(), out.A.begin() + std::size_t(head) * p.A.size());
  }
  return out;
}

}  // namespace

std::vector<Candidate> make_driver_mutants() {
  std::vector<Candidate> v;
  auto add = [&](const char* name, Kind kind, const char* defect, const char* what, Runner r) {
    v.push_back(Candidate{std::string("mutant:") + name, kind, Role::mutant, defect, what, std::move(r)});
  };

  add("gate-unnormalised", Kind::fp32, "maths", "the gate a^ is left unnormalised (a = A k^)", with_options(Kind::fp32, [](Options& o) {
        if (o.normalize == Normalize::both) o.normalize = Normalize::key;
        if (o.normalize == Normalize::gate) o.normalize = Normalize::none;
      }));
  add("lambda0-fixed", Kind::bf16, "maths", "A_0 = I whatever lambda0 is (the parameter is ignored)",
      with_options(Kind::bf16, [](Options& o) { o.lambda0 = 1.0; }));
  add("ridge-late", Kind::bf16, "rare", "the vla-v3 ridge is added every 21 steps instead of every 20 (first wrong at t = 20)",
      with_options(Kind::bf16, [](Options& o) {
        if (o.ridge_every > 0) o.ridge_every += 1;
      }));

  add("batch-stride", Kind::fp32, "indexing", "every batch entry reads batch 0's keys (batch stride 0 for k)",
      with_inputs(Kind::fp32, [](Stream& s) {
        const Dims& d = s.dims;
        for (int b = 1; b < d.B; ++b)
          for (int t = 0; t < d.T; ++t)
            for (int h = 0; h < d.H; ++h) copy_row(s.k, d, d.Dk, b, t, h, 0, t, h);
      }));
  add("head-offset", Kind::bf16, "indexing", "v is read from head (h + 1) mod H", with_inputs(Kind::bf16, [](Stream& s) {
        const Dims& d = s.dims;
        const std::vector<double> v0 = s.v;
        for (int b = 0; b < d.B; ++b)
          for (int t = 0; t < d.T; ++t)
            for (int h = 0; h < d.H; ++h)
              std::copy_n(v0.begin() + d.off(b, t, (h + 1) % d.H, d.Dv), d.Dv, s.v.begin() + d.off(b, t, h, d.Dv));
      }));
  add("query-lag", Kind::fp32, "indexing", "the readout of step t uses q_{t-1} (q_0 at t = 0)", with_inputs(Kind::fp32, [](Stream& s) {
        const Dims& d = s.dims;
        for (int b = 0; b < d.B; ++b)
          for (int t = d.T - 1; t >= 1; --t)
            for (int h = 0; h < d.H; ++h) copy_row(s.q, d, d.Dk, b, t, h, b, t - 1, h);
      }));
  add("prefetch-wrap", Kind::fp32, "rare",
      "the 64-step prefetch ring hands back a stale v at its wrap point: v_t = v_{t-64} when t mod 64 = 63, t >= 64",
      with_inputs(Kind::fp32, [](Stream& s) {
        const Dims& d = s.dims;
        for (int b = 0; b < d.B; ++b)
          for (int t = d.T - 1; t >= 64; --t)
            if (t % 64 == 63)
              for (int h = 0; h < d.H; ++h) copy_row(s.v, d, d.Dv, b, t, h, b, t - 64, h);
      }));

  add("state-norm-layout", Kind::bf16_state, "indexing", "state_norm written in [B, H, T] order instead of [B, T, H]",
      with_outputs(Kind::bf16_state, [](Outputs& out) {
        const Dims& d = out.dims;
        const std::vector<double> x = out.state_norm;
        for (int b = 0; b < d.B; ++b)
          for (int t = 0; t < d.T; ++t)
            for (int h = 0; h < d.H; ++h) out.state_norm[(std::size_t(b) * d.H + h) * d.T + t] = x[(std::size_t(b) * d.T + t) * d.H + h];
      }));
  add("S-transposed", Kind::fp32, "indexing", "the final S is written as [Dk, Dv] (transposed)", with_outputs(Kind::fp32, [](Outputs& out) {
        const Dims& d = out.dims;
        const std::vector<double> x = out.S;
        const std::size_t n = std::size_t(d.Dv) * d.Dk;
        for (std::size_t bh = 0; bh < std::size_t(d.B) * d.H; ++bh)
          for (int i = 0; i < d.Dv; ++i)
            for (int j = 0; j < d.Dk; ++j) out.S[bh * n + std::size_t(j) * d.Dv + i] = x[bh * n + std::size_t(i) * d.Dk + j];
      }));
  add("tail-heads", Kind::bf16, "rare",
      "blocks of 4 heads, grid rounded down: with B*H > 4 not a multiple of 4 the last heads are never written (zeros)",
      with_outputs(Kind::bf16, [](Outputs& out) {
        const Dims& d = out.dims;
        const int bh = d.B * d.H;
        if (bh <= 4 || bh % 4 == 0) return;
        for (int head = bh / 4 * 4; head < bh; ++head) {
          const int b = head / d.H, h = head % d.H;
          for (int t = 0; t < d.T; ++t) {
            std::fill_n(out.o.begin() + d.off(b, t, h, d.Dv), d.Dv, 0.0);
            out.state_norm[(std::size_t(b) * d.T + t) * d.H + h] = 0.0;
          }
          std::fill_n(out.S.begin() + std::size_t(head) * d.Dv * d.Dk, std::size_t(d.Dv) * d.Dk, 0.0);
          std::fill_n(out.A.begin() + std::size_t(head) * d.Dk * d.Dk, std::size_t(d.Dk) * d.Dk, 0.0);
        }
      }));
  add("state-carry", Kind::fp32, "indexing", "the state is not reset between heads: head (b, h) starts where the previous one ended",
      [](const Stream& s, const Options& o) { return state_carry(s, o, Kind::fp32); });
  return v;
}

}  // namespace vla::gate
