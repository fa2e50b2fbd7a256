// Causal softmax attention, the baseline without a fixed-size state
// (docs/SPEC.md, "Baselines"):
//   o_t = sum_{s<=t} e_s v_s / sum_{s<=t} e_s,  e_s = exp(q_t.k_s / sqrt(Dk) - m_t),
// on the raw q and k (no feature map, no readout option), with m_t the largest
// score of row t: subtracting it changes no value in exact arithmetic and keeps
// exp from overflowing at double. S and A are written as zeros; state_norm is
// ||[K_1..t; V_1..t]||_F, the size of the KV cache the model must keep.
#pragma once

#include <cstddef>
#include <vector>

#include "vla/core/hd.hpp"
#include "vla/core/stream.hpp"
#include "vla/reference/policy.hpp"
#include "vla/reference/run.hpp"

namespace vla::ref {

template <class Scalar, class Policy = RefPolicy<Scalar>>
Result<Scalar> run_softmax(const Stream& s, const Options&) {
  using T = Scalar;
  using vla::core::vexp;
  using vla::core::vsqrt;
  const Dims& d = s.dims;
  Result<T> r;
  r.dims = d;
  r.o.assign(d.v_size(), T(0));
  r.S.assign(std::size_t(d.B) * d.H * d.Dv * d.Dk, T(0));
  r.A.assign(std::size_t(d.B) * d.H * d.Dk * d.Dk, T(0));
  r.state_norm.assign(std::size_t(d.B) * d.T * d.H, T(0));

  std::vector<T> K(std::size_t(d.T) * d.Dk), V(std::size_t(d.T) * d.Dv), q(d.Dk), score(d.T), acc(d.Dv);
  const T inv_sqrt_dk = T(T(1) / vsqrt(T(d.Dk)));
  for (int b = 0; b < d.B; ++b) {
    for (int h = 0; h < d.H; ++h) {
      T cache2 = T(0);  // ||[K; V]||_F^2 so far
      for (int t = 0; t < d.T; ++t) {
        const std::size_t ok = d.off(b, t, h, d.Dk), ov = d.off(b, t, h, d.Dv);
        T* kt = K.data() + std::size_t(t) * d.Dk;
        T* vt = V.data() + std::size_t(t) * d.Dv;
        for (int j = 0; j < d.Dk; ++j) {
          q[j] = T(s.q[ok + j]);
          kt[j] = T(s.k[ok + j]);
        }
        for (int i = 0; i < d.Dv; ++i) vt[i] = T(s.v[ov + i]);
        cache2 = T(cache2 + Policy::dot(kt, kt, d.Dk));
        cache2 = T(cache2 + Policy::dot(vt, vt, d.Dv));
        r.state_norm[(std::size_t(b) * d.T + t) * d.H + h] = vsqrt(cache2);

        T m = T(0);
        for (int u = 0; u <= t; ++u) {
          score[u] = T(Policy::dot(q.data(), K.data() + std::size_t(u) * d.Dk, d.Dk) * inv_sqrt_dk);
          if (u == 0 || m < score[u]) m = score[u];
        }
        T z = T(0);
        for (int i = 0; i < d.Dv; ++i) acc[i] = T(0);
        for (int u = 0; u <= t; ++u) {
          const T e = vexp(T(score[u] - m));
          z = T(z + e);
          const T* vu = V.data() + std::size_t(u) * d.Dv;
          for (int i = 0; i < d.Dv; ++i) fma_into(acc[i], e, vu[i]);
        }
        for (int i = 0; i < d.Dv; ++i) r.o[ov + i] = Policy::store_out(T(acc[i] / z));
      }
    }
  }
  return r;
}

}  // namespace vla::ref
