// The families of streams (generators.hpp), each a transform of quantiles.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <stdexcept>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "family_builder.hpp"
#include "vla/properties/adversarial.hpp"
#include "vla/core/formulas.hpp"

namespace vla::props::detail {

double Source::normal() { return boost::math::quantile(boost::math::normal_distribution<double>(), p()); }
double Source::student_t(double nu) {
  return boost::math::quantile(boost::math::students_t_distribution<double>(nu), p());
}
double Source::cauchy() { return std::tan(std::numbers::pi * (p() - 0.5)); }

namespace {

using Vec = std::vector<double>;

long double norm(const Vec& x) {
  long double s = 0;
  for (double e : x) s += static_cast<long double>(e) * e;
  return std::sqrt(s);
}

// x / ||x||, or empty when x is (numerically) zero.
Vec unit(const Vec& x) {
  const long double n = norm(x);
  if (!(n > 0) || !std::isfinite(static_cast<double>(n))) return {};
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = static_cast<double>(x[i] / n);
  return y;
}

// Orthonormalises cand against `basis` (two passes of Gram-Schmidt); when cand is
// (nearly) in their span, falls back to the first coordinate axis that is not.
Vec orthonormal_next(const std::vector<Vec>& basis, Vec cand) {
  const std::size_t n = cand.size();
  auto project_out = [&](Vec x) {
    for (int pass = 0; pass < 2; ++pass)
      for (const Vec& b : basis) {
        long double d = 0;
        for (std::size_t i = 0; i < n; ++i) d += static_cast<long double>(b[i]) * x[i];
        for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(x[i] - d * b[i]);
      }
    return x;
  };
  const long double before = norm(cand);
  Vec r = project_out(cand);
  if (before > 0 && norm(r) > 1e-3L * before) return unit(r);
  // The first axis that keeps half its length, else the one that keeps the most:
  // with k < n basis vectors the axes' projections satisfy sum ||P e_i||^2 = n - k,
  // so the longest is at least 1/sqrt(n) (below 1/2 once k > 3n/4, e.g. the last
  // vectors of an orthonormal set of 16).
  Vec best;
  long double best_norm = 0;
  for (std::size_t axis = 0; axis < n; ++axis) {
    Vec e(n, 0.0);
    e[axis] = 1.0;
    Vec ra = project_out(e);
    const long double na = norm(ra);
    if (na > 0.5L) return unit(ra);
    if (na > best_norm) best = ra, best_norm = na;
  }
  if (best_norm > 0.5L / std::sqrt(static_cast<long double>(n))) return unit(best);
  throw std::logic_error("orthonormal_next: the basis already spans the space");
}

Vec draw_vec(int n, Source& s, double (*draw)(Source&)) {
  Vec x(n);
  for (auto& e : x) e = draw(s);
  return x;
}
double draw_normal(Source& s) { return s.normal(); }
double draw_positive_cell(Source& s) { return 0.5 + s.p(); }  // in (0.5, 1.5)

// A random permutation of 0..n-1 (Fisher-Yates; the identity is simplest).
std::vector<int> permutation(int n, Source& s) {
  std::vector<int> p(n);
  for (int i = 0; i < n; ++i) p[i] = i;
  for (int i = 0; i + 1 < n; ++i) std::swap(p[i], p[s.integer(i, n - 1)]);
  return p;
}

// Splits 0..n-1 into `groups` non-empty groups: group[j] for coordinate j.
std::vector<int> partition(int n, int groups, Source& s) {
  const std::vector<int> perm = permutation(n, s);
  std::vector<int> g(n);
  for (int i = 0; i < n; ++i) g[perm[i]] = i < groups ? i : s.integer(0, groups - 1);
  return g;
}

// Unit vectors with disjoint supports (so orthonormal and, under elu1, in the
// positive orthant): vector i is positive on the coordinates of group i.
std::vector<Vec> disjoint_positive_basis(int n, int groups, Source& s) {
  const std::vector<int> g = partition(n, groups, s);
  std::vector<Vec> basis(groups, Vec(n, 0.0));
  for (int j = 0; j < n; ++j) basis[g[j]][j] = draw_positive_cell(s);
  for (auto& b : basis) b = unit(b);
  return basis;
}

std::vector<Vec> gaussian_orthonormal_basis(int n, int count, Source& s) {
  std::vector<Vec> basis;
  for (int i = 0; i < count; ++i) basis.push_back(orthonormal_next(basis, draw_vec(n, s, draw_normal)));
  return basis;
}

void write_key(double* k, const Vec& y, FeatureMap fm) {
  const Vec raw = raw_key_for_direction(y, fm);
  std::copy(raw.begin(), raw.end(), k);
}

// A key must have a non-zero feature vector (validate_stream computes its norm in
// double): when it has none, k_0 = 1 gives it one. Only draws that are zero or
// underflow in every entry are touched (shrunk cases, sparse and extreme families).
void repair_key(double* k, int n, FeatureMap fm) {
  double n2 = 0;
  for (int j = 0; j < n; ++j) {
    const double f = core::phi(k[j], fm == FeatureMap::elu1);
    n2 += f * f;
  }
  if (!(n2 > 0)) k[0] = 1.0;
}

double iid(Family f, const FamilyParams& prm, Source& s) {
  switch (f) {
    case Family::uniform: return s.uniform(-1.0, 1.0);
    case Family::student_t: return s.student_t(prm.nu);
    case Family::cauchy: return s.cauchy();
    case Family::sparse: return s.coin(prm.rho) ? s.normal() : 0.0;
    case Family::positive: return s.exponential();
    default: return s.normal();
  }
}

// A subnormal of random sign and significand, or a signed zero.
double subnormal_or_zero(Source& s) {
  const bool neg = s.coin(0.5);
  double x = 0.0;
  if (!s.coin(0.2)) {
    const double m = 1.0 + std::floor(s.magnitude() * (0x1p52 - 1.0));  // 1 .. 2^52 - 1
    x = std::ldexp(m, -1074);
  }
  return neg ? -x : x;
}

bool structured(Family f) {
  return f == Family::repeated || f == Family::orthogonal || f == Family::near_collinear ||
         f == Family::rank_deficient || f == Family::rotating || f == Family::anisotropic;
}

FamilyParams draw_params(Family f, int dk, Source& s) {
  FamilyParams p;
  switch (f) {
    case Family::student_t: p.nu = 1.5 + 2.5 * s.magnitude(); break;
    case Family::sparse: p.rho = 0.05 + 0.45 * s.magnitude(); break;
    case Family::repeated: p.pool = s.integer(1, 3); break;
    case Family::near_collinear: p.theta = dk >= 2 ? std::pow(10.0, -6.0 + 4.0 * s.magnitude()) : 0.0; break;
    case Family::rank_deficient: p.rank = dk >= 2 ? s.integer(1, dk - 1) : 1; break;
    case Family::rotating: p.omega = dk >= 2 ? std::pow(10.0, -4.0 + 3.0 * s.magnitude()) : 0.0; break;
    case Family::anisotropic: p.share = 0.5 + 0.45 * s.magnitude(); break;  // warmup and theta: build_case (T, lambda0)
    default: break;
  }
  return p;
}

// The structured keys of one (b, h): basis vectors, then one feature direction per step.
class KeyStructure {
 public:
  KeyStructure(Family f, const FamilyParams& prm, int dk, FeatureMap fm, Source& s)
      : f_(f), prm_(prm), dk_(dk), fm_(fm) {
    const bool pos = fm == FeatureMap::elu1;
    switch (f) {
      case Family::repeated:
        for (int i = 0; i < prm.pool; ++i) {
          Vec k = draw_vec(dk, s, draw_normal);
          repair_key(k.data(), dk, fm);
          basis_.push_back(k);  // raw keys
        }
        break;
      case Family::orthogonal:
        basis_ = pos ? disjoint_positive_basis(dk, dk, s) : gaussian_orthonormal_basis(dk, dk, s);
        break;
      case Family::near_collinear:
        if (pos && dk > 1000) throw std::invalid_argument("near_collinear with elu1 needs Dk <= 1000 to stay positive");
        basis_.push_back(pos ? unit(draw_vec(dk, s, draw_positive_cell)) : orthonormal_next({}, draw_vec(dk, s, draw_normal)));
        break;
      case Family::rank_deficient:
        basis_ = pos ? disjoint_positive_basis(dk, prm.rank, s) : gaussian_orthonormal_basis(dk, prm.rank, s);
        break;
      case Family::rotating:
        if (dk >= 2) {
          basis_ = pos ? disjoint_positive_basis(dk, 2, s) : gaussian_orthonormal_basis(dk, 2, s);
        } else {
          basis_.push_back(Vec{1.0});
        }
        theta0_ = pos ? s.uniform(0.0, std::numbers::pi / 2) : s.uniform(0.0, 2 * std::numbers::pi);
        break;
      case Family::anisotropic:
        // e and f in the plane of two orthonormal vectors (disjoint positive ones
        // under elu1, so that f = cos(theta) b0 + sin(theta) b1 stays positive).
        if (dk >= 2) {
          const std::vector<Vec> b = pos ? disjoint_positive_basis(dk, 2, s) : gaussian_orthonormal_basis(dk, 2, s);
          Vec f(dk);
          for (int j = 0; j < dk; ++j) f[j] = std::cos(prm.theta) * b[0][j] + std::sin(prm.theta) * b[1][j];
          basis_ = {b[0], f};
        } else {
          basis_ = {Vec{1.0}, Vec{1.0}};
        }
        break;
      default: break;
    }
  }

  // Writes k_t (raw) for step t.
  void key(int t, double* k, Source& s) const {
    switch (f_) {
      case Family::repeated: {
        const Vec& raw = basis_[s.integer(0, prm_.pool - 1)];
        std::copy(raw.begin(), raw.end(), k);
        return;
      }
      case Family::orthogonal: {
        const int n = static_cast<int>(basis_.size());
        write_key(k, basis_[t % n], fm_);
        return;
      }
      case Family::near_collinear: {
        const Vec& b = basis_[0];
        if (dk_ == 1) return write_key(k, b, fm_);
        const Vec w = orthonormal_next({b}, draw_vec(dk_, s, draw_normal));
        Vec y(dk_);
        for (int j = 0; j < dk_; ++j) y[j] = std::cos(prm_.theta) * b[j] + std::sin(prm_.theta) * w[j];
        return write_key(k, y, fm_);
      }
      case Family::rank_deficient: {
        Vec y(dk_, 0.0);
        std::vector<double> c(prm_.rank);
        for (auto& ci : c) ci = fm_ == FeatureMap::elu1 ? 0.1 + s.exponential() : s.normal();
        if (std::all_of(c.begin(), c.end(), [](double x) { return std::fabs(x) < 1e-3; })) c[0] = 1.0;
        for (int i = 0; i < prm_.rank; ++i)
          for (int j = 0; j < dk_; ++j) y[j] += c[i] * basis_[i][j];
        return write_key(k, unit(y), fm_);
      }
      case Family::rotating: {
        if (dk_ == 1) return write_key(k, basis_[0], fm_);
        double th = theta0_ + prm_.omega * t;
        if (fm_ == FeatureMap::elu1) {
          // Back and forth on the quarter circle between the two positive vectors.
          th = std::fmod(th, std::numbers::pi);
          if (th > std::numbers::pi / 2) th = std::numbers::pi - th;
        }
        Vec y(dk_);
        for (int j = 0; j < dk_; ++j) y[j] = std::cos(th) * basis_[0][j] + std::sin(th) * basis_[1][j];
        if (fm_ == FeatureMap::elu1)
          for (auto& e : y) e = std::max(e, 0.0);  // cos(pi/2) rounds to 6e-17 > 0; never negative
        return write_key(k, y, fm_);
      }
      case Family::anisotropic: return write_key(k, basis_[t < prm_.warmup ? 0 : 1], fm_);
      default: return;
    }
  }

  const std::vector<Vec>& basis() const { return basis_; }

 private:
  Family f_;
  FamilyParams prm_;
  int dk_;
  FeatureMap fm_;
  std::vector<Vec> basis_;
  double theta0_ = 0.0;
};

}  // namespace

Case build_case(const BuildSpec& spec, Source& s) {
  const Dims& d = spec.dims;
  if (d.B < 1 || d.T < 1 || d.H < 1 || d.Dk < 1 || d.Dv < 1) throw std::invalid_argument("build_case: every dimension must be >= 1");
  Case c;
  c.family = spec.family;
  c.feature_map = spec.feature_map;
  c.params = draw_params(spec.family, d.Dk, s);
  c.lambda0 = spec.family == Family::lambda_extremes ? std::pow(10.0, s.uniform(-8.0, 8.0)) : spec.lambda0;
  if (spec.family == Family::anisotropic) {
    // The angle that makes the later gates' cosine Kantorovich's smallest for
    // cond(M) = 1 + W / lambda0 (properties/gradient_flow.hpp).
    c.params.warmup = d.T >= 2 ? std::clamp(static_cast<int>(c.params.share * d.T), 1, d.T - 1) : 0;
    c.params.theta = std::atan(std::sqrt(c.lambda0 / (c.lambda0 + c.params.warmup)));
  }
  Stream& st = c.stream;
  st.dims = d;
  st.q.assign(d.qk_size(), 0.0);
  st.k.assign(d.qk_size(), 0.0);
  st.v.assign(d.v_size(), 0.0);
  if (spec.with_u) st.u.assign(d.qk_size(), 0.0);

  const Family f = spec.family;
  const bool per_entry_scale = f == Family::scale_extremes && s.coin(0.5);
  auto scale = [&]() { return std::pow(10.0, s.uniform(-30.0, 30.0)); };

  // subnormal: a stream holding one vanishing key (or, under u_unit_scaled, one vanishing u) is refused whole, so
  // per-vector rates left almost no case inside the domain (45 to 60 of 60 runs refused per preset in TwinsAgree,
  // all 60 in one run in about 200). Whether a case draws them is decided once: half the cases stay inside the
  // domain and exercise subnormal arithmetic there, the other half the refusals.
  const bool vanishing = f == Family::subnormal && s.coin(0.5);
  // One entry of a subnormal-family key (or of u where it may not vanish): subnormal, a signed zero or N(0, 1).
  auto mixed_entry = [&]() { return s.coin(0.5) ? subnormal_or_zero(s) : s.normal(); };

  // Fills one vector of an i.i.d. family (q, v or u; keys are handled below). `is_u`: a subnormal-family u is
  // wholly subnormal only in a vanishing case.
  auto fill_vector = [&](double* x, int n, bool is_u = false) {
    if (f == Family::subnormal && is_u && !vanishing) {
      for (int j = 0; j < n; ++j) x[j] = mixed_entry();
      return;
    }
    if (f == Family::subnormal && s.coin(0.5)) {
      for (int j = 0; j < n; ++j) x[j] = subnormal_or_zero(s);
      return;
    }
    const Family dist = structured(f) ? Family::gaussian : f;
    const double sv = f == Family::scale_extremes && !per_entry_scale ? scale() : 1.0;
    for (int j = 0; j < n; ++j) {
      x[j] = iid(dist, c.params, s) * sv;
      if (per_entry_scale) x[j] *= scale();
    }
  };

  for (int b = 0; b < d.B; ++b) {
    for (int h = 0; h < d.H; ++h) {
      std::optional<KeyStructure> ks;
      if (structured(f)) ks.emplace(f, c.params, d.Dk, spec.feature_map, s);
      for (int t = 0; t < d.T; ++t) {
        const std::size_t ok = d.off(b, t, h, d.Dk), ov = d.off(b, t, h, d.Dv);
        double* k = st.k.data() + ok;
        fill_vector(st.q.data() + ok, d.Dk);
        if (ks) {
          ks->key(t, k, s);
        } else if (f == Family::subnormal) {
          if (vanishing && s.coin(0.25)) {
            // A whole feature vector of size 2^-(520..535): its squares are
            // subnormal, so its norm is computed with an absolute error in double.
            const int e = 520 + s.integer(0, 15);
            for (int j = 0; j < d.Dk; ++j) {
              const double f = std::ldexp(0.5 + s.p(), -e);
              k[j] = spec.feature_map == FeatureMap::elu1 ? std::log(f) : (s.coin(0.5) ? -f : f);
            }
          } else {
            for (int j = 0; j < d.Dk; ++j) k[j] = mixed_entry();
          }
        } else {
          fill_vector(k, d.Dk);
        }
        repair_key(k, d.Dk, spec.feature_map);
        fill_vector(st.v.data() + ov, d.Dv);
        if (spec.with_u) fill_vector(st.u.data() + ok, d.Dk, true);
      }
      if (ks) {
        std::vector<double> flat;
        for (const auto& bv : ks->basis()) flat.insert(flat.end(), bv.begin(), bv.end());
        c.basis.push_back(std::move(flat));
      }
    }
  }
  return c;
}

}  // namespace vla::props::detail
