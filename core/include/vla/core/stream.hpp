// Host containers for a batch of key/value streams and for the outputs of a run.
//
// Everything is stored as double: it holds float32 and bf16 values exactly, so a
// file's inputs survive the round trip, and it is wide enough to compare float
// kernels against the reference. Layout is [B, T, H, D] for the streams
// (flash-linear-attention's layout), [B, H, Dv, Dk] for S, [B, H, Dk, Dk] for A.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "vla/core/spec.hpp"

namespace vla {

struct Dims {
  int B = 0, T = 0, H = 0, Dk = 0, Dv = 0;
  std::size_t qk_size() const { return std::size_t(B) * T * H * Dk; }
  std::size_t v_size() const { return std::size_t(B) * T * H * Dv; }
  // Offset of element (b, t, h, 0) in a [B, T, H, D] tensor.
  std::size_t off(int b, int t, int h, int D) const { return ((std::size_t(b) * T + t) * H + h) * std::size_t(D); }
  bool operator==(const Dims&) const = default;
};

struct Stream {
  Dims dims;
  std::vector<double> q, k, v;  // [B,T,H,Dk], [B,T,H,Dk], [B,T,H,Dv]
  std::vector<double> u;        // [B,T,H,Dk] or empty (then u_t = k^_t)
  bool has_u() const { return !u.empty(); }
};

struct Outputs {
  Dims dims;
  std::vector<double> o;           // [B,T,H,Dv]
  std::vector<double> S;           // [B,H,Dv,Dk], final state
  std::vector<double> A;           // [B,H,Dk,Dk], final inverse penalty (empty for baselines without one)
  std::vector<double> state_norm;  // [B,T,H]
  void allocate(const Dims& d, bool with_A) {
    dims = d;
    o.assign(d.v_size(), 0.0);
    S.assign(std::size_t(d.B) * d.H * d.Dv * d.Dk, 0.0);
    A.assign(with_A ? std::size_t(d.B) * d.H * d.Dk * d.Dk : 0, 0.0);
    state_norm.assign(std::size_t(d.B) * d.T * d.H, 0.0);
  }
};

// Throws std::invalid_argument naming the tensor and the index of the first
// problem: size mismatches, NaN/Inf, a key whose feature vector is zero, a
// zero u that the options must normalise.
void validate_stream(const Stream& s, const Options& opt);

// The ratio readout o_t = y_t / (n_t . phi(q_t)) has no value where that
// denominator is exactly zero (the identity map with q_t = 0 or orthogonal to
// n_t; elu1 when every phi(q_t)_j underflows or meets a zero n_j). Such a stream
// is valid for the recurrence (generators produce it, and every implementation
// returns the IEEE quotient, non-finite), so validate_stream accepts it; the
// user-facing commands call this to refuse it with a message naming (b, t, h)
// unless --readout raw or --den-floor makes the output defined.
void check_ratio_readout_defined(const Stream& s, const Options& opt);

// The non-finite values among a run's outputs (o, S, A, state_norm, in that order): how
// many, and the first one named by tensor and index, e.g. "o[b=0, t=5, h=0, d=3] = nan"
// (empty where there is none). validate_stream has already refused non-finite inputs, so
// any found here came from the implementation or from the recurrence's own overflow.
struct NonFiniteOutputs {
  std::size_t count = 0;
  std::string first;
};
NonFiniteOutputs find_non_finite(const Outputs& out);

}  // namespace vla
