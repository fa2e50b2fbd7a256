// Agreement across scalar types: double, binary128 and MPFR at 128 and 256 bits
// against a 640-bit run, each within its unit roundoff 2^-p times a stated
// growth factor G.
//
// Error model (first order, normwise per group as in certify.hpp). Every step
// evaluates dot products of length <= Dk or Dv (relative error <= (Dk+Dv) u
// each); errors made at step s reach the output through at most T later steps.
// The inverse penalty A_t carries relative errors amplified by at most the
// condition number of lambda0 I + sum u u^T, kappa_A <= 1 + sum_t ||u_t||^2 / lambda0.
// The state S_t = S_{t-1} (I - k^ a^T) + v a^T carries errors through the factors
// (I - k^_t a^_t^T), whose 2-norm for unit k^, a^ with cosine c is
//   sigma(c)^2 = (3 - 2c + sqrt((3 - 2c)^2 - 4 (1 - c)^2)) / 2   (1 at c = 1),
// so Gamma_S = prod_t sigma(c_t). With a factor 4 for the few extra roundings
// per element (normalisations, divisions):  G = 4 T (Dk + Dv) kappa_A Gamma_S.
// For DeltaNet with beta = g = 1 the factors are projections (norm 1): Gamma = 1.
#include <gtest/gtest.h>

#include <cmath>

#include "streams.hpp"
#include "vla/reference/models.hpp"

using namespace vla;
using namespace vla::ref;

namespace {
constexpr long kTruthBits = 640;

double sigma_of_cos(double c) {
  const double f = 3 - 2 * c, det = 1 - c;
  return std::sqrt((f + std::sqrt(std::max(0.0, f * f - 4 * det * det))) / 2);
}

// G of the error model above, for every head of the stream (the largest).
double growth(const Stream& s, const Options& opt, const Result<Mpfr>& truth) {
  const Dims& d = s.dims;
  double G = 0;
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h) {
      double usum = 0, gamma = 1;
      for (int t = 0; t < d.T; ++t) {
        double n2 = 1;  // ||k^||^2 when u = k^
        if (s.has_u()) {
          n2 = 0;
          for (int j = 0; j < d.Dk; ++j) n2 += s.u[d.off(b, t, h, d.Dk) + j] * s.u[d.off(b, t, h, d.Dk) + j];
        }
        usum += n2;
        if (opt.model == Model::vla) gamma *= sigma_of_cos(double(truth.gate_cos[(std::size_t(b) * d.T + t) * d.H + h]));
      }
      const double kappa = opt.model == Model::vla ? 1 + usum / opt.lambda0 : 1.0;
      G = std::max(G, 4.0 * d.T * (d.Dk + d.Dv) * kappa * gamma);
    }
  return G;
}

void check_all_types(const Stream& s, const Options& opt) {
  const Result<Mpfr> truth = run_mpfr(s, opt, kTruthBits);
  const double G = growth(s, opt, truth);
  const double e53 = test::normwise_error(run_model<double>(s, opt), truth);
  const double e113 = test::normwise_error(run_model<Float128>(s, opt), truth);
  const double e128 = test::normwise_error(run_mpfr(s, opt, 128), truth);
  const double e256 = test::normwise_error(run_mpfr(s, opt, 256), truth);
  EXPECT_LE(e53, G * std::ldexp(1.0, -53)) << "double, G = " << G;
  EXPECT_LE(e113, G * std::ldexp(1.0, -113)) << "float128, G = " << G;
  EXPECT_LE(e128, G * std::ldexp(1.0, -128)) << "mpfr 128, G = " << G;
  EXPECT_LE(e256, G * std::ldexp(1.0, -256)) << "mpfr 256, G = " << G;
}
}  // namespace

TEST(Agreement, VlaKeysAsPenalty) { check_all_types(test::random_stream(1, 12, 2, 6, 5, 1), Options{}); }

TEST(Agreement, VlaGivenPenaltyAndIdentityMap) {
  Options opt;
  opt.feature_map = FeatureMap::identity;
  opt.readout = Readout::raw;
  opt.lambda0 = 0.5;
  check_all_types(test::random_stream(2, 10, 1, 5, 4, 2, /*with_u=*/true), opt);
}

TEST(Agreement, VlaV3Preset) { check_all_types(test::random_stream(1, 24, 1, 4, 4, 3), preset_options(Preset::vla_v3)); }

TEST(Agreement, DeltaNetProjections) {
  Options opt;
  opt.model = Model::deltanet;
  check_all_types(test::random_stream(1, 12, 2, 6, 5, 4), opt);
}
