#include "vla/report/progress.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vla::report {

namespace {
volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_signal(int sig) {
  g_interrupted = 1;
  std::signal(sig, SIG_DFL);  // a second signal ends the process at once
}

std::string duration(double s) {
  char b[32];
  if (s < 60) std::snprintf(b, sizeof b, "%2.0fs", s);
  else std::snprintf(b, sizeof b, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return b;
}
}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}
bool interrupted() { return g_interrupted != 0; }
void throw_if_interrupted() {
  if (interrupted()) throw Interrupted();
}
void request_interrupt() { g_interrupted = 1; }
void clear_interrupt() { g_interrupted = 0; }

bool progress_wanted() {
  const char* ci = std::getenv("CI");
  if (ci && std::strcmp(ci, "true") == 0) return false;
  return ::isatty(STDERR_FILENO) == 1;
}

Progress::Progress(std::string label, double total_work, bool enabled)
    : label_(std::move(label)), total_(total_work > 0 ? total_work : 1.0), enabled_(enabled) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
  if (enabled_) draw(false);
}

Progress::~Progress() {
  if (enabled_ && !interrupted()) draw(true);
  else if (enabled_) std::fputs("\n", stderr);
}

void Progress::add(double work) {
  done_.fetch_add(work);
  throw_if_interrupted();
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (now - last_draw_ < std::chrono::milliseconds(150)) return;
  last_draw_ = now;
  draw(false);
}

void Progress::draw(bool final) {
  const double frac = std::min(1.0, done_.load() / total_);
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  constexpr int kWidth = 28;
  const int fill = static_cast<int>(frac * kWidth + 0.5);
  std::string bar(fill, '#');
  bar.resize(kWidth, '.');
  std::string tail;
  if (final) tail = "done in " + duration(el);
  else if (frac > 0.02 && el > 0.5) tail = duration(el * (1 - frac) / frac) + " left";
  else tail = "estimating";
  std::fprintf(stderr, "\r  %-18s [%s] %3.0f%%  %-14s%s", label_.c_str(), bar.c_str(), frac * 100, tail.c_str(),
               final ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace vla::report
