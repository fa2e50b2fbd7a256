// The seeded API and the small helpers of generators.hpp.
#include "vla/properties/generators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "family_builder.hpp"
#include "source.hpp"
#include "vla/core/formulas.hpp"
#include "vla/properties/adversarial.hpp"

namespace vla::props {

namespace {
struct Named {
  Family f;
  const char* name;
};
constexpr Named kNames[] = {
    {Family::gaussian, "gaussian"},
    {Family::uniform, "uniform"},
    {Family::student_t, "student_t"},
    {Family::cauchy, "cauchy"},
    {Family::sparse, "sparse"},
    {Family::positive, "positive"},
    {Family::repeated, "repeated"},
    {Family::orthogonal, "orthogonal"},
    {Family::near_collinear, "near_collinear"},
    {Family::rank_deficient, "rank_deficient"},
    {Family::rotating, "rotating"},
    {Family::scale_extremes, "scale_extremes"},
    {Family::subnormal, "subnormal"},
    {Family::lambda_extremes, "lambda_extremes"},
    {Family::anisotropic, "anisotropic"},
};
}  // namespace

const std::vector<Family>& all_families() {
  static const std::vector<Family> v = [] {
    std::vector<Family> r;
    for (const auto& n : kNames) r.push_back(n.f);
    return r;
  }();
  return v;
}

std::string to_string(Family f) {
  for (const auto& n : kNames)
    if (n.f == f) return n.name;
  throw std::logic_error("to_string(Family): unknown value");
}

Family parse_family(std::string_view s) {
  for (const auto& n : kNames)
    if (s == n.name) return n.f;
  std::string all;
  for (const auto& n : kNames) all += std::string(all.empty() ? "" : ", ") + n.name;
  throw std::invalid_argument("unknown stream family '" + std::string(s) + "' (expected one of: " + all + ")");
}

Options Case::options(Options base) const {
  base.lambda0 = lambda0;
  base.feature_map = feature_map;
  return base;
}

Case make_case(Family f, const Dims& dims, std::uint64_t seed, const MakeOptions& mo) {
  detail::SeededSource src(seed);
  detail::BuildSpec spec;
  spec.family = f;
  spec.dims = dims;
  spec.feature_map = mo.feature_map;
  spec.with_u = mo.with_u;
  spec.lambda0 = mo.lambda0;
  Case c = detail::build_case(spec, src);
  c.seed = seed;
  return c;
}

Stream make_stream(Family f, const Dims& dims, std::uint64_t seed, const MakeOptions& mo) {
  return make_case(f, dims, seed, mo).stream;
}

double phi_inverse(double y, FeatureMap fm) {
  if (fm == FeatureMap::identity) return y;
  if (!(y > 0)) throw std::invalid_argument("phi_inverse: elu1 features are > 0");
  return y > 1.0 ? y - 1.0 : std::log(y);
}

std::vector<double> raw_key_for_direction(const std::vector<double>& y, FeatureMap fm) {
  if (fm == FeatureMap::identity) return y;
  double ymax = 0;
  for (double e : y) ymax = std::max(ymax, e);
  if (!(ymax > 0)) throw std::invalid_argument("raw_key_for_direction: an elu1 feature direction needs a positive entry");
  // Largest feature at 2: large entries use phi's x + 1 branch, small ones its
  // exp branch, both accurate to a few ulps.
  const double sc = 2.0 / ymax;
  std::vector<double> k(y.size());
  for (std::size_t j = 0; j < y.size(); ++j) {
    const double f = sc * y[j];
    k[j] = f > kTinyFeature ? phi_inverse(f, fm) : std::log(kTinyFeature);
  }
  return k;
}

std::vector<double> key_direction(const double* k, int dk, FeatureMap fm) {
  std::vector<long double> f(dk);
  long double n2 = 0;
  for (int j = 0; j < dk; ++j) {
    const long double x = k[j];
    f[j] = fm == FeatureMap::identity ? x : (x > 0 ? x + 1.0L : std::exp(x));
    n2 += f[j] * f[j];
  }
  const long double n = std::sqrt(n2);
  std::vector<double> y(dk);
  for (int j = 0; j < dk; ++j) y[j] = static_cast<double>(f[j] / n);
  return y;
}

std::string to_string(Poison p) {
  switch (p) {
    case Poison::nan: return "nan";
    case Poison::pos_inf: return "+inf";
    case Poison::neg_inf: return "-inf";
    case Poison::neg_zero: return "-0";
  }
  return "?";
}

void poison(Stream& s, const char* tensor, std::size_t index, Poison kind) {
  std::vector<double>* x = nullptr;
  const std::string t = tensor;
  if (t == "q") x = &s.q;
  else if (t == "k") x = &s.k;
  else if (t == "v") x = &s.v;
  else if (t == "u") x = &s.u;
  if (!x || index >= x->size()) throw std::invalid_argument("poison: no entry " + std::to_string(index) + " in tensor '" + t + "'");
  switch (kind) {
    case Poison::nan: (*x)[index] = std::numeric_limits<double>::quiet_NaN(); break;
    case Poison::pos_inf: (*x)[index] = std::numeric_limits<double>::infinity(); break;
    case Poison::neg_inf: (*x)[index] = -std::numeric_limits<double>::infinity(); break;
    case Poison::neg_zero: (*x)[index] = -0.0; break;
  }
}

}  // namespace vla::props
