// Steps per second of the reference (one core): the VLA recurrence through
// run_model, i.e. the one generic step at each scalar, for Dk = Dv = D.
//
//   bench_reference --benchmark_filter=...   (README, "Reference benchmark")
//
// Each iteration runs a fresh head (A_0 = I, S_0 = 0) over T random steps, so
// the rate includes the conversion of the inputs and the storing of the outputs,
// as a user's `vla run` pays them. T is chosen per scalar to keep an iteration
// in the millisecond range; the counter `steps/s` is T / (time per iteration).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "vla/reference/models.hpp"
#include "vla/reference/policy.hpp"

using namespace vla;
using namespace vla::ref;

namespace {

Stream stream_of(int T, int D) {
  std::mt19937_64 gen(12345);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  Stream s;
  s.dims = {1, T, 1, D, D};
  for (auto* x : {&s.q, &s.k, &s.v}) {
    x->resize(std::size_t(T) * D);
    for (auto& e : *x) e = U(gen);
  }
  return s;
}

// bits = 0: double; 113: float128; otherwise MPFR at that precision.
void BM_Reference(benchmark::State& state) {
  const int D = int(state.range(0));
  const int bits = int(state.range(1));
  const int T = bits == 0 ? 256 : (bits == 113 ? 16 : 8);
  const Stream s = stream_of(T, D);
  const Options opt;
  for (auto _ : state) {
    if (bits == 0) {
      benchmark::DoNotOptimize(run_model<double>(s, opt));
    } else if (bits == 113) {
      benchmark::DoNotOptimize(run_model<Float128>(s, opt));
    } else {
      benchmark::DoNotOptimize(run_mpfr(s, opt, bits));
    }
  }
  state.counters["steps/s"] = benchmark::Counter(double(T) * double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(bits == 0 ? "double" : bits == 113 ? "float128" : "mpfr" + std::to_string(bits));
}

// The cost of one FMA-class operation in the step's own loops: a D x D
// matrix-vector product through the reference policy (D^2 fused multiply-adds),
// on the same random data. A VLA step performs 3 Dk^2 + 4 Dv Dk + O(D) of them
// (z = A u, the A update, w = A k^; S k^, the S update, S phi(q), ||S||_F), so
// steps/s <= 1 / ((7 D^2) x ns/op): the bound quoted in the README.
template <class T>
void fma_cost(benchmark::State& state, int D) {
  std::mt19937_64 gen(777);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  std::vector<T> M(std::size_t(D) * D), x(D), y(D);
  for (auto& e : M) e = T(U(gen));
  for (auto& e : x) e = T(U(gen));
  for (auto _ : state) {
    RefPolicy<T>::matvec(M.data(), x.data(), y.data(), D, D);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["ns/op"] = benchmark::Counter(double(D) * D * double(state.iterations()),
                                               benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_FmaCost(benchmark::State& state) {
  const int D = int(state.range(0));
  const int bits = int(state.range(1));
  if (bits == 0) {
    fma_cost<double>(state, D);
  } else if (bits == 113) {
    fma_cost<Float128>(state, D);
  } else {
    MpfrPrecision scope(bits);
    fma_cost<Mpfr>(state, D);
  }
  state.SetLabel(bits == 0 ? "double" : bits == 113 ? "float128" : "mpfr" + std::to_string(bits));
}

}  // namespace

BENCHMARK(BM_FmaCost)->ArgNames({"D", "bits"})->ArgsProduct({{64}, {0, 113, 128, 256, 512}});

BENCHMARK(BM_Reference)
    ->ArgNames({"D", "bits"})
    ->ArgsProduct({{32, 64, 128}, {0, 113, 128, 256, 512}})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
