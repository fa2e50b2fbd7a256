// Runs independent tasks on a few threads (the report's stages are embarrassingly
// parallel over streams and seeds). The first exception is rethrown after all
// threads stop; Interrupted stops the others at their next progress tick.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vla::report {

inline void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& task) {
  if (jobs < 1) jobs = 1;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n || failed.load()) return;
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        failed = true;
        return;
      }
    }
  };
  const int threads = static_cast<int>(std::min<std::size_t>(n, static_cast<std::size_t>(jobs)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace vla::report
