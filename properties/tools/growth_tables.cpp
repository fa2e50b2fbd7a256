// Prints the measurements quoted in docs/FINDINGS.md (P1, P2): state-norm growth
// of the construction, of the greedy adversary and of every generated family,
// and the Jacobian norms met on them. Double precision reference (the property
// tests check the same quantities at 256 bits on shorter streams).
//   vla_props_tables [--quick]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "vla/properties/adversarial.hpp"
#include "vla/properties/generators.hpp"
#include "vla/properties/measures.hpp"
#include "vla/reference/models.hpp"
#include "vla/reference/trace.hpp"

using namespace vla;
using namespace vla::props;

namespace {

std::vector<double> v_norms(const Stream& s) {
  std::vector<double> out;
  for (std::size_t r = 0; r < s.v.size() / s.dims.Dv; ++r) {
    double n2 = 0;
    for (int i = 0; i < s.dims.Dv; ++i) n2 += s.v[r * s.dims.Dv + i] * s.v[r * s.dims.Dv + i];
    out.push_back(std::sqrt(n2));
  }
  return out;
}

double max_v(const Stream& s) {
  double V = 0;
  for (std::size_t r = 0; r < s.v.size() / s.dims.Dv; ++r) {
    double n2 = 0;
    for (int i = 0; i < s.dims.Dv; ++i) n2 += s.v[r * s.dims.Dv + i] * s.v[r * s.dims.Dv + i];
    V = std::max(V, std::sqrt(n2));
  }
  return V;
}

std::vector<double> norms(const Stream& s, const Options& opt) { return ref::run_model<double>(s, opt).state_norm; }

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int Tmax = quick ? 4096 : 65536;

  std::printf("## P1 construction (keys orthogonal to the state, |v| = 1, Dk = 2, identity map)\n");
  std::printf("| lambda0 | T | ||S_T||_F | ||S_T||_F / T | beta (last doubling) |\n|---|---|---|---|---|\n");
  for (double l0 : {0.01, 1.0, 100.0}) {
    const Case c = p1_sqrt_growth_construction(Tmax, 1.0, l0, 128);
    const auto n = norms(c.stream, c.options());
    for (int T = 64; T <= Tmax; T *= 16) {
      const auto pt = state_norm_plateau_test(std::vector<double>(n.begin(), n.begin() + T));
      std::printf("| %g | %d | %.4g | %.4f | %.3f |\n", l0, T, n[T - 1], n[T - 1] / T, pt.beta);
    }
  }

  std::printf("\n## P1 greedy adversary (objective ||S_t||_F, unit keys, ||v_t|| <= 1, Dv = 1, lambda0 = 1, seed 5)\n");
  std::printf("| feature map | Dk | T | ||S_T||_F | beta |\n|---|---|---|---|---|\n");
  for (FeatureMap fm : {FeatureMap::elu1, FeatureMap::identity})
    for (int dk : {2, 8}) {
      AdversaryBounds b;
      b.T = quick ? 256 : 1024;
      b.Dk = dk;
      b.opt.feature_map = fm;
      b.seed = 5;
      const auto r = adversarial_search(b, objective_state_norm());
      const auto n = norms(r.adv_case.stream, r.adv_case.options());
      for (int T = 64; T <= b.T; T *= 4) {
        const auto pt = state_norm_plateau_test(std::vector<double>(n.begin(), n.begin() + T));
        std::printf("| %s | %d | %d | %.4g | %.3f |\n", to_string(fm).c_str(), dk, T, n[T - 1], pt.beta);
      }
    }

  const int Tf = quick ? 1024 : 16384;
  std::printf("\n## Every family (seeded draws, elu1, lambda0 = 1 except lambda_extremes, Dv = 2, T = %d)\n", Tf);
  std::printf("beta: on ||S_t|| / max_{s<=t} ||v_s|| (see measures.hpp)\n");
  std::printf("| family | Dk | V = max ||v_t|| | M(T)/V | beta | max_t ||J_t||_2 | min_t c_t |\n|---|---|---|---|---|---|---|\n");
  for (Family f : all_families())
    for (int dk : {4, 16}) {
      const Case c = make_case(f, Dims{1, Tf, 1, dk, 2}, 1);
      const Options opt = c.options();
      const auto tr = ref::trace_head<double>(c.stream, opt, ref::TraceOptions{0, 0, false, false, 1});
      std::vector<double> n;
      double jmax = 0, cmin = 1;
      for (const auto& st : tr) {
        n.push_back(st.state_norm);
        jmax = std::max(jmax, jacobian_spectral_norm<double>(st.k_hat, st.a_hat, 1));
        cmin = std::min(cmin, st.c);
      }
      const double V = max_v(c.stream);
      const auto pt = state_norm_plateau_test(n, v_norms(c.stream));
      const double M = *std::max_element(n.begin(), n.end());
      std::printf("| %s | %d | %.3g | %.3g | %.3f | %.4f | %.3g |\n", to_string(f).c_str(), dk, V, M / V, pt.beta, jmax, cmin);
    }

  std::printf("\n## Product of Jacobians ||J_T ... J_1||_2 under the greedy adversary (objective: that norm)\n");
  std::printf("| feature map | Dk | T | product norm |\n|---|---|---|---|\n");
  for (FeatureMap fm : {FeatureMap::elu1, FeatureMap::identity})
    for (int dk : {2, 8}) {
      AdversaryBounds b;
      b.T = quick ? 128 : 512;
      b.Dk = dk;
      b.opt.feature_map = fm;
      b.seed = 5;
      const auto r = adversarial_search(b, objective_jacobian_product_norm());
      for (int T = 16; T <= b.T; T *= 4) std::printf("| %s | %d | %d | %.4g |\n", to_string(fm).c_str(), dk, T, r.objective[T - 1]);
    }

  // Windows (docs/FINDINGS.md, "Gradient flow through many steps"): the greedy
  // adversary maximising the largest amplification through any window ending now.
  std::printf("\n## Largest window amplification max_s ||J_t ... J_s||_2 under the greedy adversary (objective: that norm)\n");
  std::printf("| feature map | Dk | lambda0 | T | largest window amplification so far |\n|---|---|---|---|---|\n");
  for (FeatureMap fm : {FeatureMap::elu1, FeatureMap::identity})
    for (int dk : {2, 8})
      for (double l0 : {1.0, 0.01}) {
        AdversaryBounds b;
        b.T = quick ? 64 : 256;
        b.Dk = dk;
        b.opt.feature_map = fm;
        b.opt.lambda0 = l0;
        b.seed = 5;
        const auto r = adversarial_search(b, objective_jacobian_window_norm());
        double so_far = 0;
        for (int t = 1; t <= b.T; ++t) {
          so_far = std::max(so_far, r.objective[std::size_t(t - 1)]);
          if ((t & (t - 1)) == 0 && t >= 16) std::printf("| %s | %d | %g | %d | %.4g |\n", to_string(fm).c_str(), dk, l0, t, so_far);
        }
      }
  return 0;
}
