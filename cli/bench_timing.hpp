// Wall-clock timing of whole calls for `vla bench`, on Google Benchmark: it picks
// how many calls make a measurement of at least min_time seconds, repeats the
// measurement, and knows the host (CPUs, clock, load), which a hand-written
// chrono loop would have to re-derive.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace vla::cli {

struct TimingPlan {
  int repetitions = 5;    // measurements per call
  double min_time = 0.5;  // seconds each measurement runs at least
};

struct Timed {
  std::string name;
  std::vector<double> seconds;  // one per repetition: the mean wall time of one call in it
  long long calls = 0;          // calls timed over all repetitions
  double median = 0, min = 0, max = 0;
};

struct HostInfo {
  int cpus = 0;
  double mhz = 0;
  std::vector<double> load_avg;
  bool frequency_scaling = false;
};

// Times each named call; `done` hears each result as it lands (progress). A call
// that throws stops the run and the exception propagates (nothing is reported).
std::vector<Timed> time_calls(const std::vector<std::pair<std::string, std::function<void()>>>& calls, const TimingPlan& plan,
                              const std::function<void(const Timed&)>& done, HostInfo& host);

}  // namespace vla::cli
