// The report's adaptors to the other components (deps.hpp). Each component is
// used when this build has it (CMake defines VLA_REPORT_HAVE_<X> from the
// targets that exist); otherwise the function throws Unavailable and the
// section that needs it says so.
#include "vla/report/deps.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "vla/report/deps_hp.hpp"

#if defined(VLA_REPORT_HAVE_TWIN)
#include "vla/gpu/inputs.hpp"
#include "vla/gpu/plain.hpp"
#endif
#if defined(VLA_REPORT_HAVE_ERROR_MODEL)
#include "vla/gpu/error_model.hpp"
#endif
#if defined(VLA_REPORT_HAVE_PROPERTIES)
#include "vla/properties/generators.hpp"
#include "vla/properties/measures.hpp"
#include "vla/properties/adversarial.hpp"
#include "vla/properties/gradient_flow.hpp"
#endif
#if defined(VLA_REPORT_HAVE_CLAIMS)
#include "vla/claims/ledger.hpp"
#endif
#include "vla/reference/certify.hpp"

namespace vla::report::deps {

namespace {
std::mutex g_override_mu;
KernelFn g_override;

KernelFn current_override() {
  std::lock_guard<std::mutex> lock(g_override_mu);
  return g_override;
}

// One (b, h) of a run as a B = H = 1 run (the error model judges whole runs).
[[maybe_unused]] Outputs head_of(const Outputs& o, int b, int h) {
  const Dims& d = o.dims;
  Outputs r;
  r.allocate(Dims{1, d.T, 1, d.Dk, d.Dv}, !o.A.empty());
  for (int t = 0; t < d.T; ++t) {
    for (int i = 0; i < d.Dv; ++i) r.o[std::size_t(t) * d.Dv + i] = o.o[d.off(b, t, h, d.Dv) + i];
    r.state_norm[t] = o.state_norm[(std::size_t(b) * d.T + t) * d.H + h];
  }
  const std::size_t bh = std::size_t(b) * d.H + h, ns = std::size_t(d.Dv) * d.Dk, na = std::size_t(d.Dk) * d.Dk;
  std::copy_n(o.S.begin() + bh * ns, ns, r.S.begin());
  if (!o.A.empty()) std::copy_n(o.A.begin() + bh * na, na, r.A.begin());
  return r;
}
}  // namespace

void set_kernel_override(KernelFn fn) {
  std::lock_guard<std::mutex> lock(g_override_mu);
  g_override = std::move(fn);
}

bool cuda_available() { return impl::cuda_available(); }

Outputs run_kernel(const Stream& s, const Options& opt, impl::Kind kind, bool cuda) {
  if (auto fn = current_override()) return fn(s, opt, kind);
#if defined(VLA_REPORT_HAVE_TWIN)
  if (cuda) {
    // One kernel on the GPU at a time; the stages' host work (references,
    // baselines) still runs on every thread.
    static std::mutex gpu;
    std::lock_guard<std::mutex> lock(gpu);
    return impl::run(s, opt, kind, impl::Device::cuda);
  }
  return impl::run(s, opt, kind, impl::Device::cpu);
#else
  (void)s, (void)opt, (void)cuda;
  throw Unavailable("the kernels and their CPU twins (gpu/) are not in this build, kernel " + impl::to_string(kind));
#endif
}

Stream consumed_inputs(const Stream& s, impl::Kind kind) {
#if defined(VLA_REPORT_HAVE_TWIN)
  const gpu::HostInputs in = gpu::prepare_inputs(s, kind != impl::Kind::fp32);
  Stream c;
  c.dims = s.dims;
  std::vector<double>* dst[4] = {&c.q, &c.k, &c.v, &c.u};
  const std::vector<double>* src[4] = {&s.q, &s.k, &s.v, &s.u};
  for (int w = 0; w < 4; ++w) {
    dst[w]->resize(src[w]->size());
    for (std::size_t i = 0; i < src[w]->size(); ++i) (*dst[w])[i] = in.value(w, i);
  }
  return c;
#else
  (void)s;
  throw Unavailable("the kernels' input rounding (gpu/include/vla/gpu/inputs.hpp) is not in this build, kernel " + impl::to_string(kind));
#endif
}

std::vector<Envelope> envelopes(impl::Kind kind, const Stream& s, const Options& opt, const Outputs& cand,
                                const Outputs& ref) {
#if defined(VLA_REPORT_HAVE_ERROR_MODEL) && defined(VLA_REPORT_HAVE_TWIN)
  // The model measures the stream's conditioning by the plain same-precision
  // implementation's error (two summation orders, as the gate does); they run
  // here on the same inputs.
  const Outputs fwd = impl::run_plain(s, opt, kind, impl::PlainOrder::forward);
  const Outputs rev = impl::run_plain(s, opt, kind, impl::PlainOrder::reversed);
  const accuracy::Precision prec = accuracy::precision_of(kind);
  // The o rows' readout gain, as the gate passes it (the floor and the rows' scale of terms: docs/ERROR_MODEL.md).
  const Stream consumed = consumed_inputs(s, kind);
  const std::vector<double> gain = accuracy::readout_gain(consumed, opt);
  const accuracy::ReadoutTerms terms = accuracy::readout_terms(consumed, opt);
  const Dims& d = ref.dims;
  std::vector<Envelope> out;
  for (int b = 0; b < d.B; ++b) {
    for (int h = 0; h < d.H; ++h) {
      const Outputs r = head_of(ref, b, h), f = head_of(fwd, b, h), v = head_of(rev, b, h);
      const std::vector<const Outputs*> bases = {&f, &v};
      std::vector<double> g(d.T);
      accuracy::ReadoutTerms q{std::vector<double>(d.T), std::vector<double>(d.T)};
      for (int t = 0; t < d.T; ++t) {
        const std::size_t row = (std::size_t(b) * d.T + t) * d.H + h;
        g[t] = gain[row];
        q.q_norm[t] = terms.q_norm[row];
        q.den_terms[t] = terms.den_terms[row];
      }
      Envelope e;
      const accuracy::Verdict verdict = accuracy::check(head_of(cand, b, h), r, bases, prec, {}, g, q);
      e.first_fail_step = verdict.first_fail_step;
      e.not_judged = long(verdict.beyond);
      e.judged = long(verdict.checked);
      e.first_not_judged_step = verdict.beyond > 0 ? verdict.first_beyond_step : -1;
      e.o_rel = accuracy::o_envelope(r, bases, prec, 0, 0);
      e.source = "vla::accuracy::check and o_envelope, gpu/include/vla/gpu/error_model.hpp, docs/ERROR_MODEL.md";
      out.push_back(std::move(e));
    }
  }
  return out;
#else
  (void)kind, (void)s, (void)opt, (void)cand, (void)ref;
  throw Unavailable("the error model (gpu/include/vla/gpu/error_model.hpp) is not in this build");
#endif
}

#if defined(VLA_REPORT_HAVE_PROPERTIES)
namespace {

// ||J_t||_2 of the candidate step from the closed form (cheap enough to score
// every candidate of the search).
props::Objective jacobian_objective() {
  return {"jacobian step norm (closed form)", [](const props::StepContext& c) {
            const auto& a = c.ws.a;
            const auto& k = c.ws.kh;
            double dot = 0, a2 = 0, k2 = 0;
            for (std::size_t i = 0; i < a.size(); ++i) dot += a[i] * k[i], a2 += a[i] * a[i], k2 += k[i] * k[i];
            return props::rank_one_update_norm<double>(dot, a2 * k2, int(a.size()));
          }, nullptr};
}

// One search per (b, h), written into a [B, T, H, D] stream.
Stream adversarial(const std::string& family, const Dims& d, std::uint64_t seed, const Options& opt) {
  Stream out;
  out.dims = d;
  out.q.assign(d.qk_size(), 0.0);
  out.k.assign(d.qk_size(), 0.0);
  out.v.assign(d.v_size(), 0.0);
  for (int b = 0; b < d.B; ++b) {
    for (int h = 0; h < d.H; ++h) {
      props::AdversaryBounds bounds;
      bounds.T = d.T;
      bounds.Dk = d.Dk;
      bounds.Dv = d.Dv;
      bounds.V = std::sqrt(double(d.Dv));  // the scale of a gaussian value
      bounds.opt = opt;
      bounds.opt.model = Model::vla;
      // Fewer candidates than the properties' default: the report's streams are long.
      bounds.candidates = 8;
      bounds.climb = 8;
      bounds.seed = seed * 1000 + std::uint64_t(b * d.H + h);
      const auto obj = family == "adversarial-jacobian" ? jacobian_objective() : props::objective_state_norm();
      const Stream one = props::adversarial_search(bounds, obj).adv_case.stream;
      for (int t = 0; t < d.T; ++t) {
        std::copy_n(one.q.begin() + std::size_t(t) * d.Dk, d.Dk, out.q.begin() + d.off(b, t, h, d.Dk));
        std::copy_n(one.k.begin() + std::size_t(t) * d.Dk, d.Dk, out.k.begin() + d.off(b, t, h, d.Dk));
        std::copy_n(one.v.begin() + std::size_t(t) * d.Dv, d.Dv, out.v.begin() + d.off(b, t, h, d.Dv));
      }
    }
  }
  return out;
}

}  // namespace
#endif

Stream make_stream(const std::string& family, const Dims& dims, std::uint64_t seed, const Options& opt) {
#if defined(VLA_REPORT_HAVE_PROPERTIES)
  if (family == "adversarial-jacobian" || family == "adversarial-state-norm") return adversarial(family, dims, seed, opt);
  return props::make_stream(props::parse_family(family), dims, seed);
#else
  (void)dims, (void)seed, (void)opt;
  throw Unavailable("the stream generators (properties/) are not in this build, family " + family);
#endif
}

std::string stream_source(const std::string& family) {
  if (family == "adversarial-jacobian")
    return "vla::props::adversarial_search (properties/include/vla/properties/adversarial.hpp), each step chosen "
           "among candidates to maximise the step Jacobian norm, values of the gaussian scale";
  if (family == "adversarial-state-norm")
    return "vla::props::adversarial_search with objective_state_norm (properties/include/vla/properties/"
           "adversarial.hpp), each step chosen to maximise the state norm of VLA, values of the gaussian scale";
  return "vla::props::make_stream, family " + family + " (properties/include/vla/properties/generators.hpp)";
}

Certified certified(const Stream& s, const Options& opt) {
  ref::CertifyRequest req;
  req.scalar = ref::ScalarKind::mpfr;
  req.bits = 128;
  const ref::Certified c = ref::run_certified(s, opt, req);
  return Certified{c.out, c.certified_bits, c.working_bits, c.method};
}

double jacobian_step_norm(const VecF128& a, const VecF128& k) {
#if defined(VLA_REPORT_HAVE_PROPERTIES)
  // The closed form of properties/ (docs/FINDINGS.md, P2), evaluated in MPFR on
  // the binary128 dot products.
  constexpr long kBits = 160;
  ref::MpfrPrecision scope(kBits);
  const F128 ydotx = a.dot(k), x2y2 = a.squaredNorm() * k.squaredNorm();
  const ref::Mpfr n = props::rank_one_update_norm<ref::Mpfr>(ref::to_mpfr(ydotx, kBits), ref::to_mpfr(x2y2, kBits),
                                                            int(a.size()));
  return ref::to_double(n);
#else
  (void)a, (void)k;
  throw Unavailable("the Jacobian norm of properties/ (measures.hpp) is not in this build");
#endif
}

std::string jacobian_source() {
  return "vla::props::rank_one_update_norm, properties/include/vla/properties/measures.hpp, in MPFR on binary128 "
         "vectors";
}

GradientWindow gradient_window(int W, double lambda0) {
#if defined(VLA_REPORT_HAVE_PROPERTIES)
  constexpr long kBits = 256;
  GradientWindow g;
  g.W = W;
  const double kappa0 = props::gradient_window_kappa0(W, lambda0);
  g.w = props::gradient_window_steps(kappa0);
  const props::Case c = props::gradient_window_construction(W, g.w, lambda0, FeatureMap::elu1);
  const auto tr = ref::trace_head_mpfr(c.stream, c.options(), ref::TraceOptions{}, kBits);
  ref::MpfrPrecision scope(kBits);
  g.amplification = ref::to_double(props::window_norm<ref::Mpfr>(tr, W, W + g.w - 1));
  g.bound = ref::to_double(props::window_bound<ref::Mpfr>(tr, W, W + g.w - 1));
  g.limit = props::gradient_window_limit(kappa0);
  return g;
#else
  (void)W, (void)lambda0;
  throw Unavailable("the gradient-window construction of properties/ (gradient_flow.hpp) is not in this build");
#endif
}

std::string gradient_window_source() {
  return "vla::props::gradient_window_construction, window_norm and window_bound, "
         "properties/include/vla/properties/gradient_flow.hpp, in MPFR at 256 bits";
}

double sm_residual(const std::vector<double>& A, const std::vector<std::vector<double>>& us, double lambda0, int upto,
                   bool high) {
#if defined(VLA_REPORT_HAVE_PROPERTIES)
  const int d = int(us.front().size());
  if (!high) {
    props::Mat<double> Am = Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(A.data(), d, d);
    std::vector<props::Vec<double>> u;
    u.reserve(upto + 1);
    for (int s = 0; s <= upto; ++s) u.push_back(Eigen::Map<const Eigen::VectorXd>(us[s].data(), d));
    return props::sherman_morrison_residual<double>(Am, u, lambda0, upto);
  }
  constexpr long kBits = 128;  // doubles and their products are exact; sums to 2^-128
  ref::MpfrPrecision scope(kBits);
  props::Mat<ref::Mpfr> Am(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) Am(i, j) = ref::to_mpfr(A[std::size_t(i) * d + j], kBits);
  std::vector<props::Vec<ref::Mpfr>> u(upto + 1, props::Vec<ref::Mpfr>(d));
  for (int s = 0; s <= upto; ++s)
    for (int j = 0; j < d; ++j) u[s](j) = ref::to_mpfr(us[s][j], kBits);
  return ref::to_double(props::sherman_morrison_residual<ref::Mpfr>(Am, u, lambda0, upto));
#else
  (void)A, (void)us, (void)lambda0, (void)upto, (void)high;
  throw Unavailable("the Sherman-Morrison residual of properties/ (measures.hpp) is not in this build");
#endif
}

std::string sm_residual_source() {
  return "vla::props::sherman_morrison_residual, properties/include/vla/properties/measures.hpp";
}

double max_eig_sym(const Eigen::MatrixXd& M) {
#if defined(VLA_REPORT_HAVE_PROPERTIES)
  return props::max_eig_sym<double>(M);
#else
  (void)M;
  throw Unavailable("the eigenvalue helper of properties/ (measures.hpp) is not in this build");
#endif
}

nlohmann::json claims(bool quick) {
#if defined(VLA_REPORT_HAVE_CLAIMS)
  claims::LedgerOptions lo;
  lo.budget = quick ? claims::Budget::quick : claims::Budget::full;
  lo.context.repo_root = VLA_SOURCE_DIR;
  const claims::Ledger l = claims::run_ledger(lo);
  return nlohmann::json::parse(claims::to_json(l).dump());
#else
  (void)quick;
  throw Unavailable("the claims ledger (proofs_check/) is not in this build");
#endif
}

}  // namespace vla::report::deps
