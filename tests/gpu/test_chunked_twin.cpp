// The chunked implementation's CPU twin (vla::impl::run_chunked on the cpu: the
// chunked reference at float with the kernel's operand rounding; for the scan
// kinds the scan form's reference with a double gate and a float state) against the
// recurrent double reference, through the error model of the gate
// (gpu/include/vla/gpu/error_model.hpp; the chunked precisions and baselines in
// gpu/include/vla/gpu/chunked.hpp). Shapes: T in {1, C-1, C, C+1, 200}, D in
// {16, 32, 64}, C in {32, 64}, every option; near-collinear keys probe the
// triangular solves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "chunked_streams.hpp"
#include "streams.hpp"
#include "vla/gpu/chunked.hpp"
#include "vla/gpu/chunked_twin.hpp"
#include "vla/gpu/error_model.hpp"

using namespace vla;
using impl::ChunkedKind;

namespace {

accuracy::Verdict check_twin(const Stream& s0, const Options& opt, ChunkedKind kind, int C) {
  const Stream s = ts::rounded_for(s0, impl::input_kind(kind));
  const Outputs twin = impl::run_chunked(s, opt, kind, impl::Device::cpu, C);
  const Outputs ref = ts::reference_double(s, opt);
  const ts::Baselines base{accuracy::baselines(s, opt, kind)};
  return accuracy::check(twin, ref, base.ptrs(), accuracy::precision_of(kind));
}

std::string tag(const std::string& name, ChunkedKind kind, int C, const Dims& d) {
  return name + " " + impl::to_string(kind) + " C=" + std::to_string(C) + " B=" + std::to_string(d.B) + " T=" + std::to_string(d.T) +
         " H=" + std::to_string(d.H) + " D=" + std::to_string(d.Dk);
}

// The carried kinds and the chunk-parallel (scan) kinds (docs/CHUNKED.md, section 8).
constexpr ChunkedKind kKinds[] = {ChunkedKind::fp32, ChunkedKind::bf16, ChunkedKind::tf32, ChunkedKind::scan_fp32,
                                  ChunkedKind::scan_bf16};

// Refused by design: the carried kinds with tensor-core operands without unit
// keys (UnnormalisedKeysBreak*Operands), the scan kinds with ridge steps or a
// pivot floor above 1 (ref::scan_unsupported).
bool refused(ChunkedKind kind, const Options& opt) {
  if ((kind == ChunkedKind::bf16 || kind == ChunkedKind::tf32) && !opt.normalize_key()) return true;
  return impl::is_scan(kind) && !ref::scan_unsupported(opt).empty();
}

}  // namespace

TEST(ChunkedTwin, AwkwardLengthsEveryShape) {
  const Options paper = preset_options(Preset::paper);
  std::uint64_t seed = 800;
  for (ChunkedKind kind : kKinds)
    for (int C : {32, 64})
      for (int D : {16, 32, 64})
        for (int T : {1, C - 1, C, C + 1, 200}) {
          const std::uint64_t sd = ++seed;
          // CI time: the scan kinds run every length at D = 16 and 64 with C = 32, D = 32 with C = 64.
          if (impl::is_scan(kind) && (C == 32) == (D == 32)) continue;
          const Stream s = ts::make_stream(2, T, 3, D, sd);
          const auto v = check_twin(s, paper, kind, C);
          EXPECT_TRUE(v.pass) << tag("paper", kind, C, s.dims) << ": " << v.summary();
        }
}

TEST(ChunkedTwin, EveryOption) {
  struct Case {
    std::string name;
    Options opt;
    ts::Family fam = ts::Family::gaussian;
    bool with_u = false;
  };
  const Options paper = preset_options(Preset::paper), v3 = preset_options(Preset::vla_v3);
  std::vector<Case> cs{{"vla-v3", v3}, {"vla-v3+u", v3, ts::Family::gaussian, true}, {"heavy", paper, ts::Family::heavy}};
  Options o = paper;
  o.feature_map = FeatureMap::identity;
  cs.push_back({"identity", o});
  for (Normalize nz : {Normalize::key, Normalize::gate, Normalize::none}) {
    o = paper;
    o.normalize = nz;
    cs.push_back({"normalize-" + to_string(nz), o});
  }
  o = paper;
  o.readout = Readout::raw;
  cs.push_back({"raw", o});
  o = paper;
  o.delta_floor = 1.6;  // above 1: the clamp acts (docs/CHUNKED.md)
  cs.push_back({"active-delta-floor", o});
  o = v3;
  o.ridge_every = 7;  // ridge steps inside chunks
  o.ridge = 0.05;
  cs.push_back({"ridge-every-7", o});
  std::uint64_t seed = 900;
  for (const Case& c : cs)
    for (ChunkedKind kind : kKinds) {
      const Stream s = ts::make_stream(2, 150, 2, 32, ++seed, c.fam, c.with_u);
      if (refused(kind, c.opt)) {
        EXPECT_THROW(impl::run_chunked(s, c.opt, kind, impl::Device::cpu, 32), std::invalid_argument) << c.name;
        continue;
      }
      if (c.opt.normalize == Normalize::gate) {
        // Unit gates with raw keys: |1 - a^.k| > 1 makes the recurrence itself grow
        // exponentially (||S_t|| ~ 1e24 by T = 300 at D = 64; the fused twins overflow
        // float too), so only a short prefix is a meaningful accuracy check.
        const Stream sh = ts::make_stream(2, 12, 2, 32, seed, c.fam, c.with_u);
        const auto v = check_twin(sh, c.opt, kind, 32);
        EXPECT_TRUE(v.pass) << tag(c.name, kind, 32, sh.dims) << ": " << v.summary();
        continue;
      }
      const auto v = check_twin(s, c.opt, kind, 32);
      EXPECT_TRUE(v.pass) << tag(c.name, kind, 32, s.dims) << ": " << v.summary();
    }
}

// Near-collinear keys: the Gram matrix is near rank one and, with alternating
// signs, the state's triangular system has entries near -1. The chunked form's
// error must stay within the same model as the recurrence's.
TEST(ChunkedTwin, NearCollinearKeys) {
  Options ident = preset_options(Preset::paper);
  ident.feature_map = FeatureMap::identity;
  const Options paper = preset_options(Preset::paper), v3 = preset_options(Preset::vla_v3);
  Options v3_no_ridge = v3;  // the scan kinds' vla-v3 (they refuse ridge steps)
  v3_no_ridge.ridge_every = 0;
  std::uint64_t seed = 1000;
  for (double eps : {1e-1, 1e-2, 1e-3})
    for (bool alternate : {false, true})
      for (const Options* opt : {&paper, &v3, static_cast<const Options*>(&ident)}) {
        if (alternate && opt != &ident) continue;  // elu1 keys are positive: no sign flip
        for (ChunkedKind kind : kKinds) {
          const std::uint64_t sd = ++seed;
          if (impl::is_scan(kind) && eps != 1e-3) continue;  // CI time: the scan kinds at the smallest angle only
          const Stream s = ts::make_collinear(1, 256, 2, 64, eps, alternate, sd);
          if (opt == &v3 && impl::is_scan(kind)) opt = &v3_no_ridge;
          const auto v = check_twin(s, *opt, kind, 64);
          if (opt == &v3_no_ridge) opt = &v3;
          const std::string name = std::string(opt == &ident ? "identity" : opt == &v3 ? "vla-v3" : "paper") + " eps=" +
                                   std::to_string(eps) + (alternate ? " alternating" : "");
          std::printf("collinear %-40s %s: max group ratio %.3g (model allows %.3g)\n", name.c_str(), impl::to_string(kind).c_str(),
                      v.max_group_ratio, accuracy::ModelConstants{}.K);
          EXPECT_TRUE(v.pass) << tag(name, kind, 64, s.dims) << ": " << v.summary();
        }
      }
}

// Causality under overflow (docs/CHUNKED.md, section 6, the fixed finding): a
// step whose values overflow float must not reach the earlier steps of its
// chunk. The masked products are causal (ref::ChunkStructure::masked_product),
// so o_t and ||S_t|| for t < t* are finite and, judged on the first t* steps,
// inside the error model, while the steps after the overflow are not finite (the
// probe bites). (Not bit for bit those of the prefix run: Eigen's products block
// by size.)
TEST(ChunkedTwin, CausalUnderOverflow) {
  const Options paper = preset_options(Preset::paper);
  for (ChunkedKind kind : kKinds)
    for (int C : {32, 64}) {
      const int t_star = C + 11, T = 2 * C + 8;  // inside the second chunk
      const Stream s = ts::rounded_for(ts::make_late_overflow(1, T, 2, 32, t_star, 31 + C), impl::input_kind(kind));
      const Stream sp = gpu::prefix_stream(s, t_star);
      const Outputs full = impl::run_chunked(s, paper, kind, impl::Device::cpu, C);
      const Outputs prefix = impl::run_chunked(sp, paper, kind, impl::Device::cpu, C);
      const ts::CausalCheck c = ts::causal_check(full, prefix, t_star);
      const std::string tag = impl::to_string(kind) + " C=" + std::to_string(C);
      EXPECT_EQ(c.nonfinite_before, 0u) << tag << ": " << c.summary();
      EXPECT_GT(c.nonfinite_after, 0u) << tag << ": the probe did not overflow";
      const ts::Baselines base{accuracy::baselines(sp, paper, kind)};
      const auto v = accuracy::check(ts::before_overflow(full, prefix, t_star), ts::reference_double(sp, paper), base.ptrs(),
                                     accuracy::precision_of(kind));
      EXPECT_TRUE(v.pass) << tag << ": " << v.summary();
    }
}

// Finding 5 of docs/CHUNKED.md, section 6: along one repeated key (cond(M_t) =
// 1 + t / lambda0) the carried form's error in S grows with t in proportion to the
// rounding of the products' operands. The chunked reference at float with every
// operand rounded to p significant bits: to first order its error is linear in
// 2^-p, so where it is small (p = 14 to 23) three more bits must cut it by 8
// (allowed 4 to 16: second-order terms and the float accumulation's own share);
// at tf32's 11 bits it exceeds 10% of ||S|| after 1,500 steps (measured 0.29)
// where float operands leave 2.1e-4.
template <int Bits>
struct OperandsRoundedTo {
  static ref::Mat<float> op(const ref::Mat<float>& m) {
    return m.unaryExpr([](float x) {
      if (x == 0 || !std::isfinite(x)) return x;
      int e = 0;
      const double f = std::frexp(double(x), &e);  // |f| in [1/2, 1): Bits significant bits
      return float(std::ldexp(std::nearbyint(std::ldexp(f, Bits)), e - Bits));
    });
  }
};

template <int Bits>
double repeated_key_state_error(const Stream& s, const Options& opt, const Outputs& ref) {
  const ref::Result<float> r = ref::run_chunked<float, OperandsRoundedTo<Bits>>(s, opt, 64);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.S.size(); ++i) num += (r.S[i] - ref.S[i]) * (r.S[i] - ref.S[i]), den += ref.S[i] * ref.S[i];
  return std::sqrt(num / den);
}

TEST(ChunkedTwin, RepeatedKeyErrorIsTheOperandRoundingAmplified) {
  Stream s = ts::rounded_for(ts::make_stream(1, 1500, 1, 16, 7), impl::Kind::fp32);
  for (int t = 0; t < 1500; ++t)
    for (int j = 0; j < 16; ++j) s.k[std::size_t(t) * 16 + j] = double(float(0.25 * std::sin(1.0 + j)));
  const Options paper = preset_options(Preset::paper);
  const Outputs ref = ts::reference_double(s, paper);
  const double e11 = repeated_key_state_error<11>(s, paper, ref), e14 = repeated_key_state_error<14>(s, paper, ref),
               e17 = repeated_key_state_error<17>(s, paper, ref), e20 = repeated_key_state_error<20>(s, paper, ref),
               e23 = repeated_key_state_error<23>(s, paper, ref), e24 = repeated_key_state_error<24>(s, paper, ref);
  std::printf("  ||S_T - S_ref|| / ||S_ref|| at T = 1500 with operands of 11, 14, 17, 20, 23, 24 bits: %.3g %.3g %.3g %.3g %.3g %.3g\n",
              e11, e14, e17, e20, e23, e24);
  for (auto [hi, lo] : {std::pair{e14, e17}, {e17, e20}, {e20, e23}}) {
    EXPECT_GE(hi / lo, 4.0);
    EXPECT_LE(hi / lo, 16.0);
  }
  // tf32's 11 bits: the first-order growth from 14 bits (x 8) within the band above (from 4: at errors of this
  // size the growth begins to saturate, 4.4 measured) ...
  EXPECT_GE(e11 / e14, 4.0);
  // ... and the finding as docs/CHUNKED.md states it: more than 10% of ||S|| lost with tf32 operands, less than
  // 0.1% with float's (one bit more than 23 cannot make it worse).
  EXPECT_GT(e11, 0.1);
  EXPECT_LE(e24, e23);
  EXPECT_LT(e24, 1e-3);
}

TEST(ChunkedTwin, RejectsUnsupportedShapesClearly) {
  const Stream s = ts::make_stream(1, 10, 1, 128, 1);
  try {
    impl::run_chunked(s, Options{}, ChunkedKind::bf16, impl::Device::cpu, 64);
    FAIL() << "D = 128 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("D=128"), std::string::npos) << e.what();
  }
  const Stream s2 = ts::make_stream(1, 10, 1, 64, 1);
  EXPECT_THROW(impl::run_chunked(s2, Options{}, ChunkedKind::fp32, impl::Device::cpu, 48), std::invalid_argument);
  EXPECT_EQ(impl::parse_chunked_kind("chunked-bf16"), ChunkedKind::bf16);
  EXPECT_EQ(impl::parse_chunked_kind("chunked-tf32"), ChunkedKind::tf32);
  EXPECT_EQ(impl::parse_chunked_kind("chunked-scan-fp32"), ChunkedKind::scan_fp32);
  EXPECT_EQ(impl::parse_chunked_kind("chunked-scan-bf16"), ChunkedKind::scan_bf16);
  EXPECT_THROW(impl::parse_chunked_kind("chunked"), std::invalid_argument);
  // The scan kinds refuse ridge steps and an acting pivot floor, naming the option.
  Options ridge = preset_options(Preset::vla_v3), clamp;
  clamp.delta_floor = 1.6;
  for (ChunkedKind kind : {ChunkedKind::scan_fp32, ChunkedKind::scan_bf16})
    for (auto [opt, option] : {std::pair{&ridge, "--ridge-every"}, {&clamp, "--delta-floor"}}) {
      try {
        impl::run_chunked(s2, *opt, kind, impl::Device::cpu, 32);
        ADD_FAILURE() << impl::to_string(kind) << " accepted " << option;
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(impl::to_string(kind)), std::string::npos) << e.what();
      }
    }
}

// An ill-conditioned prefix sum: near-collinear keys with lambda0 = 1e-6, so
// cond(M_c) ~ sum |u|^2 / lambda0 reaches 1e8. The scan twins' gates come from a
// Cholesky factor of M_c in double, with error ~ cond(M_c) 2^-53, far below
// float's rounding of the gates (docs/CHUNKED.md, section 8): they must pass the
// model. Finding (docs/CHUNKED.md, section 8): the carried chunked-fp32 twin,
// whose A_c holds entries up to 1/lambda0 = 1e6 in float, leaves the model on
// the eps = 1e-2 stream (||S_t|| at step 127: 234.8 where the reference has
// 129.4; max group ratio 18.3 of 16) where the fused fp32 twin and the scan
// twins pass (scan: max group ratio below 1e-3); replayed here.
TEST(ChunkedTwin, IllConditionedPrefixScanPassesCarriedFp32Finding) {
  Options o = preset_options(Preset::paper);
  o.lambda0 = 1e-6;
  std::uint64_t seed = 1100;
  for (double eps : {1e-2, 1e-3}) {
    const Stream s = ts::make_collinear(1, 200, 2, 32, eps, false, ++seed);
    for (ChunkedKind kind : {ChunkedKind::fp32, ChunkedKind::scan_fp32, ChunkedKind::scan_bf16}) {
      const auto v = check_twin(s, o, kind, 32);
      std::printf("lambda0=1e-6 collinear eps=%g %s: max group ratio %.3g\n", eps, impl::to_string(kind).c_str(), v.max_group_ratio);
      const std::string name = tag("lambda0=1e-6 eps=" + std::to_string(eps), kind, 32, s.dims);
      if (kind == ChunkedKind::fp32 && eps == 1e-2)
        EXPECT_FALSE(v.pass) << name << " is now inside the model: re-measure and update docs/CHUNKED.md section 8";
      else
        EXPECT_TRUE(v.pass) << name << ": " << v.summary();
    }
    // The recurrence in float on the same stream: inside the model.
    const Stream sr = ts::rounded_for(s, impl::Kind::fp32);
    const ts::Baselines base{accuracy::baselines(sr, o, ChunkedKind::fp32)};
    const auto fused = accuracy::check(impl::run(sr, o, impl::Kind::fp32, impl::Device::cpu), ts::reference_double(sr, o), base.ptrs(),
                                       accuracy::precision_of(ChunkedKind::fp32));
    EXPECT_TRUE(fused.pass) << "fused fp32 eps=" << eps << ": " << fused.summary();
  }
}

// The scan form's three gate forms (docs/CHUNKED.md 8.16, 8.19) as the twin runs
// them, whatever form this build's kernels take: the per-step Sherman-Morrison gate
// in double (A carried through up to 512 steps per segment), plain and with the
// rank-1 look-ahead, inside the error model wherever the Woodbury chunks are, on
// streams that cross segments (T = 1,100) and on ill-conditioned prefixes (lambda0 =
// 1e-6, near-collinear keys), fp32 and bf16 state, u = k^ and a given u (vla-v3's
// unit-scaled u, a second product).
TEST(ChunkedTwin, PerStepGateFormInsideTheModelWhereWoodburyIs) {
  struct Case {
    std::string name;
    Stream s;
    Options opt;
  };
  Options ill = preset_options(Preset::paper), v3 = preset_options(Preset::vla_v3);
  ill.lambda0 = 1e-6;
  v3.ridge_every = 0;  // the scan form runs vla-v3 without its ridge (ref::scan_unsupported)
  std::vector<Case> cases = {{"paper gaussian", ts::make_stream(1, 1100, 2, 32, 501), preset_options(Preset::paper)},
                             {"vla-v3 (no ridge) gaussian", ts::make_stream(1, 1100, 2, 32, 502), v3},
                             {"paper given u", ts::make_stream(1, 1100, 1, 16, 503, ts::Family::gaussian, true), preset_options(Preset::paper)},
                             {"lambda0=1e-6 collinear 1e-2", ts::make_collinear(1, 1100, 1, 32, 1e-2, false, 504), ill},
                             {"lambda0=1e-6 collinear 1e-3", ts::make_collinear(1, 1100, 1, 32, 1e-3, false, 505), ill}};
  using F = ref::ScanGateForm;
  const F forms[3] = {F::woodbury, F::per_step, F::lookahead};
  const char* names[3] = {"Woodbury", "per-step", "look-ahead"};
  int differing[3] = {};  // cases where a form's o differs in some bit from the previous form's: the form argument acts
  int differing_float = 0;  // cases where the look-ahead in float differs from it in double
  for (const Case& c : cases)
    for (ChunkedKind kind : {ChunkedKind::scan_fp32, ChunkedKind::scan_bf16}) {
      const Stream s = ts::rounded_for(c.s, impl::input_kind(kind));
      const Outputs ref = ts::reference_double(s, c.opt);
      const ts::Baselines base{accuracy::baselines(s, c.opt, kind)};
      const bool bf16 = kind == ChunkedKind::scan_bf16;
      double ratio[3] = {};
      std::vector<double> o_prev;
      for (int f = 0; f < 3; ++f) {
        const Outputs tw = gpu::twin_outputs(ref::run_chunked_scan<float, double>(s, c.opt, 32, ref::scan_segment_chunks(32, s.dims),
                                                                                   ref::scan_state_policy(s.dims.Dk, 32), forms[f]),
                                             bf16);
        const auto v = accuracy::check(tw, ref, base.ptrs(), accuracy::precision_of(kind));
        ratio[f] = v.max_group_ratio;
        if (f > 0) differing[f] += tw.o != o_prev;
        o_prev = tw.o;
        EXPECT_TRUE(v.pass) << c.name << " " << impl::to_string(kind) << " " << names[f] << ": " << v.summary();
      }
      // chunked-scan-bf16's kernels run the look-ahead's steps in float (ref::kernel_scan_steps_float,
      // docs/CHUNKED.md 8.23): inside the same model (the given-u case keeps double plain steps).
      double ratio_float = 0.0;
      if (bf16) {
        const Outputs tw = gpu::twin_outputs(ref::run_chunked_scan<float, double, ref::ScanStructure, float>(
                                                 s, c.opt, 32, ref::scan_segment_chunks(32, s.dims), ref::scan_state_policy(s.dims.Dk, 32), F::lookahead),
                                             bf16);
        const auto v = accuracy::check(tw, ref, base.ptrs(), accuracy::precision_of(kind));
        ratio_float = v.max_group_ratio;
        differing_float += tw.o != o_prev;
        EXPECT_TRUE(v.pass) << c.name << " " << impl::to_string(kind) << " look-ahead in float: " << v.summary();
      }
      std::printf("%-28s %s: max group ratio Woodbury %.3g, per step %.3g, look-ahead %.3g, look-ahead in float %.3g (model allows 16)\n",
                  c.name.c_str(), impl::to_string(kind).c_str(), ratio[0], ratio[1], ratio[2], ratio_float);
    }
  EXPECT_GT(differing[1], 0) << "the per-step and Woodbury gate forms gave the same bits on every case";
  EXPECT_GT(differing[2], 0) << "the look-ahead and per-step gate forms gave the same bits on every case";
  EXPECT_GT(differing_float, 0) << "the look-ahead's steps gave the same bits in float as in double on every case";
}

// chunked-scan-bf16's twin takes the kernels' step scalar (ref::kernel_scan_steps_float):
// float steps where u = k^, double where u is given; chunked-scan-fp32's twin double steps.
// Bitwise equal to the reference run with that scalar, and the other scalar is seen.
TEST(ChunkedTwin, ScanStepScalarFollowsTheKernels) {
  const Options opt;
  const int C = 32;
  for (bool given_u : {false, true}) {
    const Stream s = ts::rounded_for(ts::make_stream(1, 200, 2, 32, 71, ts::Family::gaussian, given_u), impl::Kind::bf16);
    const int L = ref::scan_segment_chunks(C, s.dims);
    const auto policy = ref::scan_state_policy(s.dims.Dk, C);
    const auto form = ref::kernel_scan_gate_form(given_u);
    const Outputs as_float =
        gpu::twin_outputs(ref::run_chunked_scan<float, double, ref::ScanStructure, float>(s, opt, C, L, policy, form), true);
    const Outputs as_double = gpu::twin_outputs(ref::run_chunked_scan<float, double>(s, opt, C, L, policy, form), true);
    EXPECT_NE(as_float.o, as_double.o) << "given u " << given_u << ": float and double steps gave the same bits";
    const bool float_steps = ref::kernel_scan_steps_float(true, given_u);
#if defined(VLA_SCAN_STEPS_DOUBLE)
    EXPECT_FALSE(float_steps);
#else
    EXPECT_EQ(float_steps, !given_u && ref::kKernelScanGateForm == ref::ScanGateForm::lookahead);
#endif
    EXPECT_EQ(gpu::run_scan_twin(s, opt, C, true).o, float_steps ? as_float.o : as_double.o) << "given u " << given_u;
    EXPECT_EQ(gpu::run_scan_twin(s, opt, C, false).o, gpu::twin_outputs(ref::run_chunked_scan<float, double>(s, opt, C, L, policy, form), false).o)
        << "chunked-scan-fp32 keeps double steps (given u " << given_u << ")";
  }
}

// The finding behind chunked-bf16's rejection of unnormalised keys, re-measured
// under the corrected baselines (docs/FINDINGS.md item 8: the Monte Carlo
// samples draw the bf16 storage rounding). Against the first model's baselines
// (every sample the same round-to-nearest rounding) the chunked form with bf16
// operands was far outside the model (max group ratios 143, 4e6, 1.6e3) and the
// honest fused bf16-state twin failed too (28.5, seed 2). Now the bf16-state
// policy has no correct bit left after t = 23 to 66 on these streams, the fused
// bf16-state twin is inside, and so is the chunked form on the steps before
// (ratios 4.4 to 7.9, about ten times the fused bf16-state twin's 0.38 to 1.04).
// The rejection stays (gpu/src/chunked_impl.cpp says why); chunked-fp32 is
// inside throughout.
TEST(ChunkedTwin, UnnormalisedKeysBf16Operands) {
  Options o = preset_options(Preset::paper);
  o.normalize = Normalize::none;
  for (int seed = 0; seed < 3; ++seed) {
    const Stream s = ts::rounded_for(ts::make_stream(2, 300, 2, 64, 77 + seed), impl::Kind::bf16);
    const Outputs ref = ts::reference_double(s, o);
    const auto prec = accuracy::precision_of(ChunkedKind::bf16);
    const ts::Baselines base = ts::baselines(s, o, impl::baseline_kind(ChunkedKind::bf16));
    // The chunked twin's maths, bypassing run_chunked's rejection.
    const auto r = ref::run_chunked<float, gpu::Bf16Operands>(s, o, 64);
    Outputs tw;
    tw.allocate(s.dims, true);
    for (std::size_t i = 0; i < r.o.size(); ++i) tw.o[i] = core::round_bf16(r.o[i]);
    for (std::size_t i = 0; i < r.S.size(); ++i) tw.S[i] = r.S[i];
    for (std::size_t i = 0; i < r.A.size(); ++i) tw.A[i] = r.A[i];
    for (std::size_t i = 0; i < r.state_norm.size(); ++i) tw.state_norm[i] = r.state_norm[i];
    const auto chunked = accuracy::check(tw, ref, base.ptrs(), prec);
    const auto fused = accuracy::check(impl::run(s, o, impl::Kind::bf16_state, impl::Device::cpu), ref, base.ptrs(), prec);
    std::printf("normalize=none seed %d: fused bf16-state twin max group ratio %.3g, chunked bf16 operands %.3g; "
                "%ld of %ld elements beyond the policy from t = %d\n",
                seed, fused.max_group_ratio, chunked.max_group_ratio, long(fused.beyond), long(fused.beyond + fused.checked),
                fused.first_beyond_step);
    EXPECT_TRUE(fused.pass) << fused.summary();
    EXPECT_TRUE(chunked.pass) << chunked.summary();
    EXPECT_GT(fused.beyond, 0) << "the bf16-state policy keeps its bits on the whole stream: re-measure the rejection";
    const auto v32 = check_twin(s, o, ChunkedKind::fp32, 64);
    EXPECT_TRUE(v32.pass) << v32.summary();
  }
  EXPECT_THROW(impl::run_chunked(ts::make_stream(1, 8, 1, 64, 77), o, ChunkedKind::bf16, impl::Device::cpu, 64), std::invalid_argument);
}

// The counterexample behind chunked-tf32's rejection of unnormalised keys: the
// H200 run of test_gpu_chunked_cuda (case normalize-gate, C = 32, seed 4282)
// found the tf32 kernel outside the model, its twin equally (worst group ratio
// 28.4 of 16), where chunked-fp32 and the fused fp32 twin are inside. Under the
// corrected baselines (docs/FINDINGS.md item 8; tf32 storage drawn at random)
// the twin is inside (4.06); the rejection stays, as for bf16 above.
TEST(ChunkedTwin, UnnormalisedKeysTf32Operands) {
  Options o = preset_options(Preset::paper);
  o.normalize = Normalize::gate;
  const Stream s = ts::rounded_for(ts::make_stream(2, 12, 3, 32, 4282), impl::Kind::fp32);
  const Outputs ref = ts::reference_double(s, o);
  const ts::Baselines base{accuracy::baselines(s, o, ChunkedKind::tf32)};
  const Outputs tw = gpu::run_twin<gpu::Tf32Operands>(s, o, 32, false);  // bypassing run_chunked's rejection
  const auto chunked = accuracy::check(tw, ref, base.ptrs(), accuracy::precision_of(ChunkedKind::tf32));
  std::printf("normalize=gate: chunked tf32 operands max group ratio %.3g\n", chunked.max_group_ratio);
  EXPECT_TRUE(chunked.pass) << chunked.summary();
  const auto v32 = check_twin(s, o, ChunkedKind::fp32, 32);
  EXPECT_TRUE(v32.pass) << v32.summary();
  EXPECT_THROW(impl::run_chunked(s, o, ChunkedKind::tf32, impl::Device::cpu, 32), std::invalid_argument);
}

// The scan kinds' twin forms the state as the kernels' pass does (docs/CHUNKED.md
// 8.13, 8.24): each chunk's products summed in double and rounded once at D >= 32,
// with R one chunk ahead where the v7 pass runs (D = 32, 64 at C = 32), the per-step
// float fmas at D = 16 (v4). Bitwise equal to the reference under that policy, and
// another policy is seen (the final state differs in some bit), so a twin that
// ignored the policy would fail.
TEST(ChunkedTwin, ScanStatePolicyFollowsTheKernelsPass) {
  for (int D : {16, 32, 64}) {
    const Stream s = ts::rounded_for(ts::make_stream(1, 200, 2, D, 31 + D), impl::Kind::fp32);
    const Options opt;
    const int C = 32;
    const Outputs twin = gpu::run_scan_twin(s, opt, C, false);
    const auto policy = ref::scan_state_policy(D, C);
    const auto other = policy == ref::ScanStatePolicy::chunk_products ? ref::ScanStatePolicy::per_step : ref::ScanStatePolicy::chunk_products;
    if (D < 32) EXPECT_EQ(policy, ref::ScanStatePolicy::per_step);
    else EXPECT_NE(policy, ref::ScanStatePolicy::per_step) << "D=" << D;
    const auto form = ref::kernel_scan_gate_form(false);
    const Outputs same = gpu::twin_outputs(ref::run_chunked_scan<float, double>(s, opt, C, ref::scan_segment_chunks(C, s.dims), policy, form), false);
    const Outputs diff = gpu::twin_outputs(ref::run_chunked_scan<float, double>(s, opt, C, ref::scan_segment_chunks(C, s.dims), other, form), false);
    ASSERT_EQ(twin.S.size(), same.S.size());
    EXPECT_EQ(twin.S, same.S) << "D=" << D;
    EXPECT_EQ(twin.o, same.o) << "D=" << D;
    EXPECT_NE(twin.S, diff.S) << "D=" << D << ": the two state policies gave the same bits";
  }
}
