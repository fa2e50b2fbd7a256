// Progress on stderr for long stages, and cooperative interruption.
//
// The bar is drawn only on a terminal and never when CI=true, so logs stay
// clean. SIGINT/SIGTERM set a flag that the stages poll (through Progress::add),
// so an interrupted run unwinds and removes its staging folder.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>

namespace vla::report {

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

void install_interrupt_handlers();
bool interrupted();
void throw_if_interrupted();
// For tests: behave as if a signal had arrived.
void request_interrupt();
void clear_interrupt();

// True when stderr is a terminal and the CI environment variable is not "true".
bool progress_wanted();

class Progress {
 public:
  Progress(std::string label, double total_work, bool enabled);
  ~Progress();
  // Thread-safe; throws Interrupted when a signal arrived.
  void add(double work);

 private:
  void draw(bool final);
  std::string label_;
  double total_;
  bool enabled_;
  std::atomic<double> done_{0.0};
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace vla::report
