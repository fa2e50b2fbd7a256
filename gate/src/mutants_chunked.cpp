// Planted chunk-boundary defects of the chunked kernels (issue 8): each is the
// chunked twin (gpu::run_twin, the chunked reference at float with the kernel's
// operand rounding; gpu::run_scan_twin for the scan form) composed at build time
// with one replaced piece of its structure policy (ref::ChunkStructure,
// ref::ScanStructure), or wrapped by a driver that mis-bounds the last chunk.
// Run at chunk size 32 so that the gate's short streams cross several
// boundaries. The gate must reject every one.
#include <stdexcept>
#include <string>
#include <vector>

#include "candidates_internal.hpp"
#include "vla/gpu/chunked_twin.hpp"

namespace vla::gate {

namespace {

using impl::ChunkedKind;
using M = ref::Mat<float>;
constexpr int kC = 32;

// A not carried across the chunk boundary: every chunk starts from the head's
// initial A = I / lambda0 (the kernel never writes the updated A back).
struct AResetEachChunk : ref::ChunkStructure {
  template <class Mat>
  static void next_A(Mat& A, const Mat& /*update*/, const Mat& A0) {
    A = A0;
  }
};

// The state's triangular system taken with the inclusive upper triangle:
// T = I + triu(Ah^T K) (diagonal 1 + a^_t . k^_t) instead of the strict one.
struct InclusiveTriangle : ref::ChunkStructure {
  template <class Mat>
  static Mat state_solve(const Mat& Rhs, const Mat& AK) {
    const int len = int(AK.rows());
    Mat Tm = Mat::Identity(len, len);
    for (int i = 0; i < len; ++i)
      for (int t = i; t < len; ++t) Tm(i, t) += AK(i, t);
    return Tm.transpose().template triangularView<Eigen::Lower>().solve(Rhs.transpose()).transpose();
  }
};

// The chunk's affine map S -> S P + Q applied on the wrong side, P S + Q, with
// P = I - K T^{-1} Ah^T and Q = V T^{-1} Ah^T = update + S K T^{-1} Ah^T.
struct MapWrongOrder : ref::ChunkStructure {
  template <class Mat>
  static void next_S(Mat& S, const Mat& update, const Mat& K, const Mat& Ah, const Mat& AK) {
    const int len = int(AK.rows());
    Mat Tm = Mat::Identity(len, len);
    for (int i = 0; i < len; ++i)
      for (int t = i + 1; t < len; ++t) Tm(i, t) = AK(i, t);
    const Mat X = Tm.template triangularView<Eigen::UnitUpper>().solve(Mat(Ah.transpose()));  // T^{-1} Ah^T
    const Mat KX = K * X;
    const Mat Q = update + S * KX;
    S = S - KX * S + Q;
  }
};

// The masked products Z Y and R triu(Ah^T Phi_q) taken as full products: for
// finite values the same sums (the masked entries are 0), but a later step's
// Inf or NaN meets an earlier step's masked 0 (0 * Inf = NaN) and poisons the
// earlier steps of its chunk (docs/CHUNKED.md, section 6: the chunked kernels'
// form before the fix).
struct NonCausalProducts : ref::ChunkStructure {
  template <class Mat>
  static Mat masked_product(const Mat& X, const Mat& Y) {
    return X * Y;
  }
};

// The scan form's chunk-boundary defects (ref::ScanStructure with one hook
// returning the value a chunk earlier; docs/CHUNKED.md, section 8).
// M_c missing the previous chunk's Gram matrix: chunk c's gates from
// M_{c-1} = lambda0 I + sum_{j<c-1} U_j U_j^T (the scan's prefix one chunk late).
struct ScanGramLagged : ref::ScanStructure {
  template <class X>
  static const X& gate_prefix(const X& /*M_c*/, const X& M_prev) {
    return M_prev;
  }
};
// Residuals from the state entering the previous chunk: R = V T^{-1} - S_{c-1} K T^{-1}.
struct ScanResidualsFromPreviousState : ref::ScanStructure {
  template <class X>
  static const X& residual_state(const X& /*S_c*/, const X& S_prev) {
    return S_prev;
  }
};
// The normaliser prefix dropping a chunk: n_t = n_{c-1} + the chunk's own steps
// (the previous chunk's sum sigma_{c-1} never added).
struct ScanNormaliserDropsAChunk : ref::ScanStructure {
  template <class X>
  static const X& normaliser_prefix(const X& /*n_c*/, const X& n_prev) {
    return n_prev;
  }
};
// The carried form's inclusive-triangle defect in the scan form's state stage.
struct ScanInclusiveTriangle : ref::ScanStructure {
  template <class Mat>
  static Mat state_solve(const Mat& Rhs, const Mat& AK) {
    return InclusiveTriangle::state_solve(Rhs, AK);
  }
};

template <class Structure>
Runner scan_twin_with(ChunkedKind kind) {
  return [kind](const Stream& s, const Options& o) -> Outputs {
    if (const std::string why = impl::chunked_unsupported(s.dims, o, kind, kC); !why.empty()) throw std::invalid_argument(why);
    return gpu::run_scan_twin<Structure>(s, o, kC, impl::bf16_io(kind));
  };
}

template <class Structure>
Runner twin_with(ChunkedKind kind) {
  return [kind](const Stream& s, const Options& o) -> Outputs {
    if (const std::string why = impl::chunked_unsupported(s.dims, o, kind, kC); !why.empty()) throw std::invalid_argument(why);
    switch (kind) {
      case ChunkedKind::bf16: return gpu::run_twin<gpu::Bf16Operands, Structure>(s, o, kC, true);
      case ChunkedKind::tf32: return gpu::run_twin<gpu::Tf32Operands, Structure>(s, o, kC, false);
      default: return gpu::run_twin<ref::ExactOperands, Structure>(s, o, kC, false);
    }
  };
}

// The last, partial chunk (T not a multiple of C) stops one step early: its last
// step's o and ||S|| are never written (zero) and the final S, A miss its update.
Runner last_step_dropped(ChunkedKind kind) {
  const Runner twin = impl::is_scan(kind) ? scan_twin_with<ref::ScanStructure>(kind) : twin_with<ref::ChunkStructure>(kind);
  return [twin](const Stream& s, const Options& o) -> Outputs {
    const Dims& d = s.dims;
    if (d.T % kC == 0 || d.T == 1) return twin(s, o);  // no partial chunk to mis-bound (or nothing before it)
    const Outputs r = twin(gpu::prefix_stream(s, d.T - 1), o);
    Outputs out;
    out.allocate(d, true);
    const Dims& rd = r.dims;
    for (int b = 0; b < d.B; ++b)
      for (int t = 0; t + 1 < d.T; ++t)
        for (int h = 0; h < d.H; ++h) {
          for (int i = 0; i < d.Dv; ++i) out.o[d.off(b, t, h, d.Dv) + i] = r.o[rd.off(b, t, h, d.Dv) + i];
          out.state_norm[(std::size_t(b) * d.T + t) * d.H + h] = r.state_norm[(std::size_t(b) * rd.T + t) * d.H + h];
        }
    out.S = r.S;
    out.A = r.A;
    return out;
  };
}

Candidate mutant(std::string name, ChunkedKind kind, std::string defect, std::string description, Runner run) {
  Candidate c;
  c.name = "mutant:" + std::move(name);
  c.policy = chunked_policy(kind);
  c.role = Role::mutant;
  c.defect = std::move(defect);
  c.description = std::move(description) + " (" + impl::to_string(kind) + " twin, C = 32)";
  c.run = std::move(run);
  c.outside = chunked_domain(kind, kC);
  return c;
}

}  // namespace

std::vector<Candidate> make_chunked_mutants() {
  return {
      mutant("chunked-A-not-carried", ChunkedKind::bf16, "maths", "every chunk starts from A = I/lambda0 (A not carried across the boundary)",
             twin_with<AResetEachChunk>(ChunkedKind::bf16)),
      mutant("chunked-inclusive-triangle", ChunkedKind::fp32, "maths",
             "the state's triangular system uses the inclusive upper triangle of Ah^T K (diagonal 1 + a^.k^)",
             twin_with<InclusiveTriangle>(ChunkedKind::fp32)),
      mutant("chunked-map-order", ChunkedKind::fp32, "maths", "the chunk's affine map S P + Q applied as P S + Q",
             twin_with<MapWrongOrder>(ChunkedKind::fp32)),
      mutant("chunked-last-step-dropped", ChunkedKind::fp32, "indexing",
             "the last partial chunk (T not a multiple of C) stops one step early", last_step_dropped(ChunkedKind::fp32)),
      mutant("chunked-non-causal-product", ChunkedKind::fp32, "maths",
             "the masked products Z Y and R triu(Ah^T Phi_q) as full products: a later step's overflow poisons the earlier steps "
             "of its chunk (0 * Inf)",
             twin_with<NonCausalProducts>(ChunkedKind::fp32)),
      // The same chunk-boundary defects under chunked-tf32's own policy (u_state = 2^-11).
      mutant("chunked-tf32-A-not-carried", ChunkedKind::tf32, "maths",
             "every chunk starts from A = I/lambda0 (A not carried across the boundary)", twin_with<AResetEachChunk>(ChunkedKind::tf32)),
      mutant("chunked-tf32-last-step-dropped", ChunkedKind::tf32, "indexing",
             "the last partial chunk (T not a multiple of C) stops one step early", last_step_dropped(ChunkedKind::tf32)),
      // The chunk-parallel (scan) form's boundary defects (docs/CHUNKED.md, section 8).
      mutant("chunked-scan-gram-lagged", ChunkedKind::scan_bf16, "maths",
             "each chunk's gates from M_{c-1}: the prefix sum misses the previous chunk's Gram matrix U U^T",
             scan_twin_with<ScanGramLagged>(ChunkedKind::scan_bf16)),
      mutant("chunked-scan-stale-residuals", ChunkedKind::scan_fp32, "maths",
             "R = V T^-1 - S K T^-1 with S the state entering the previous chunk, not this one",
             scan_twin_with<ScanResidualsFromPreviousState>(ChunkedKind::scan_fp32)),
      mutant("chunked-scan-normaliser-drops-chunk", ChunkedKind::scan_fp32, "maths",
             "the normaliser prefix n_c misses the previous chunk's sum of phi(k)", scan_twin_with<ScanNormaliserDropsAChunk>(ChunkedKind::scan_fp32)),
      mutant("chunked-scan-inclusive-triangle", ChunkedKind::scan_fp32, "maths",
             "the state's triangular system uses the inclusive upper triangle of Ah^T K (diagonal 1 + a^.k^)",
             scan_twin_with<ScanInclusiveTriangle>(ChunkedKind::scan_fp32)),
      mutant("chunked-scan-last-step-dropped", ChunkedKind::scan_bf16, "indexing",
             "the last partial chunk (T not a multiple of C) stops one step early", last_step_dropped(ChunkedKind::scan_bf16)),
  };
}

}  // namespace vla::gate
