#include "bench_timing.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <stdexcept>

#include <benchmark/benchmark.h>

namespace vla::cli {
namespace {

// Collects the repetitions' runs (not Google Benchmark's aggregates: the median,
// min and max are taken here over the same per-repetition values) and prints nothing.
class Collector : public benchmark::BenchmarkReporter {
 public:
  explicit Collector(HostInfo& host) : host_(host) {}
  bool ReportContext(const Context& c) override {
    host_.cpus = c.cpu_info.num_cpus;
    host_.mhz = c.cpu_info.cycles_per_second / 1e6;
    host_.load_avg = c.cpu_info.load_avg;
    host_.frequency_scaling = c.cpu_info.scaling == benchmark::CPUInfo::ENABLED;
    return true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;
      if (r.error_occurred) continue;  // the call threw: time_calls rethrows it
      Timed& t = by_name_[r.run_name.function_name];
      t.name = r.run_name.function_name;
      t.seconds.push_back(r.real_accumulated_time / static_cast<double>(r.iterations));
      t.calls += r.iterations;
    }
  }
  std::map<std::string, Timed> by_name_;

 private:
  HostInfo& host_;
};

}  // namespace

std::vector<Timed> time_calls(const std::vector<std::pair<std::string, std::function<void()>>>& calls, const TimingPlan& plan,
                              const std::function<void(const Timed&)>& done, HostInfo& host) {
  if (plan.repetitions < 1) throw std::invalid_argument("repetitions must be >= 1");
  if (!(plan.min_time > 0)) throw std::invalid_argument("min_time must be > 0");
  std::vector<Timed> out;
  // One benchmark at a time, so that progress is reported as each lands and an
  // exception from a call stops the run at once.
  for (const auto& [name, fn] : calls) {
    std::exception_ptr failure;
    benchmark::ClearRegisteredBenchmarks();
    benchmark::RegisterBenchmark(name.c_str(),
                                 [&fn, &failure](benchmark::State& st) {
                                   for (auto _ : st) {
                                     try {
                                       fn();
                                     } catch (...) {
                                       failure = std::current_exception();
                                       st.SkipWithError("the call threw");
                                       break;
                                     }
                                   }
                                 })
        ->UseRealTime()
        ->Repetitions(plan.repetitions)
        ->MinTime(plan.min_time);
    Collector collect(host);
    benchmark::RunSpecifiedBenchmarks(&collect);
    benchmark::ClearRegisteredBenchmarks();
    if (failure) std::rethrow_exception(failure);
    auto it = collect.by_name_.find(name);
    if (it == collect.by_name_.end() || it->second.seconds.empty()) throw std::runtime_error(name + ": no timing was reported");
    Timed t = std::move(it->second);
    std::vector<double> s = t.seconds;
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    t.median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    t.min = s.front();
    t.max = s.back();
    if (done) done(t);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace vla::cli
