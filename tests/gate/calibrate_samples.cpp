// Measures the error model's calibration statistic (Verdict::max_group_ratio)
// against the number of Monte Carlo baselines: the plain run plus 0..4 random
// runs, for the production twins and every honest variant over N fuzzed
// streams per precision policy. Makes the table of docs/ERROR_MODEL.md:
//   build/bin/calibrate_samples 1000 77
// Not a test (it asserts nothing); built so that the table can be reproduced.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "vla/gate/candidate.hpp"
#include "vla/gate/fuzz.hpp"
#include "vla/gate/judge.hpp"
#include "vla/gpu/error_baselines.hpp"

using namespace vla;
using namespace vla::gate;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 77;
  const auto cands = find_candidates("production,honest", impl::Device::cpu);
  constexpr int kMaxRandom = 4;
  std::vector<std::vector<double>> ratios(kMaxRandom + 1);
  std::vector<std::string> worst(kMaxRandom + 1);
  for (int j = 0; j < n; ++j)
    for (auto kind : {impl::Kind::fp32, impl::Kind::bf16, impl::Kind::bf16_state}) {
      const FuzzCase fc = make_fuzz_case(case_seed(seed, j), kind, FuzzLimits{});
      const Expected e = expect(fc.stream, fc.opt, kind);
      if (!e.valid) continue;
      const auto all = accuracy::baselines(e.input, fc.opt, kind, kMaxRandom);  // plain + kMaxRandom random runs
      for (const auto& c : cands) {
        if (!(c.policy == kind)) continue;
        const Outputs out = c.run(e.input, fc.opt);
        for (int k = 0; k <= kMaxRandom; ++k) {
          std::vector<const Outputs*> bp;
          for (int i = 0; i <= k; ++i) bp.push_back(&all[i]);
          const double g = accuracy::check(out, e.ref, bp, accuracy::precision_of(kind), {}, e.gain).max_group_ratio;
          if (!std::isfinite(g)) continue;
          if (ratios[k].empty() || g > *std::max_element(ratios[k].begin(), ratios[k].end()))
            worst[k] = c.name + " " + fc.origin + " " + describe(fc.opt);
          ratios[k].push_back(g);
        }
      }
    }
  std::printf("| random runs | median | p99 | p99.9 | max | runs above 8 | runs |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (int k = 0; k <= kMaxRandom; ++k) {
    auto& v = ratios[k];
    std::sort(v.begin(), v.end());
    auto q = [&](double p) { return v[static_cast<std::size_t>(p * double(v.size() - 1))]; };
    const long above = std::count_if(v.begin(), v.end(), [](double x) { return x > 8; });
    std::printf("| %d | %.2f | %.2f | %.2f | %.3g | %ld | %zu |\n", k, q(0.5), q(0.99), q(0.999), v.back(), above, v.size());
  }
  for (int k = 0; k <= kMaxRandom; ++k) std::printf("largest with %d random runs: %s\n", k, worst[k].c_str());
}
