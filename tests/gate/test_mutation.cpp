// Proof that the gate bites and does not flake, on the CPU twins, in CI: every
// planted defect is rejected by the quick battery plus a fuzz budget, every
// honest variant passes all of it. The full campaign (>= 1,000 fuzzed streams
// per honest variant) and its table are in docs/GATE.md, with the command.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "vla/gate/gate.hpp"
#include "vla/gate/report.hpp"

using namespace vla;
using namespace vla::gate;

namespace {
int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : dflt;
}
}  // namespace

TEST(Mutation, EveryPlantedDefectIsRejected) {
  GateConfig cfg;
  cfg.quick = true;
  cfg.candidates = mutants();
  cfg.fuzz_cases = 100;
  cfg.stop_at_first_failure = true;
  const GateReport rep = run_gate(cfg);
  int killed = 0;
  for (const auto& s : rep.summaries) {
    EXPECT_GT(s.fail, 0) << s.name << " (" << s.defect << ") was not rejected";
    if (s.fail > 0) ++killed, std::printf("  %-26s %-9s rejected by %s\n", s.name.c_str(), s.defect.c_str(), s.first_failure.c_str());
  }
  std::printf("%s", mutation_summary(rep).c_str());
  EXPECT_EQ(killed, static_cast<int>(mutants().size()));
}

// VLA_GATE_HONEST_STREAMS raises the fuzz budget (the full campaign uses 1000).
TEST(Mutation, HonestVariantsPass) {
  GateConfig cfg;
  cfg.quick = true;
  cfg.candidates = honest_variants();
  cfg.fuzz_cases = env_int("VLA_GATE_HONEST_STREAMS", 300);
  const GateReport rep = run_gate(cfg);
  for (const auto& r : rep.results)
    EXPECT_NE(r.status, Status::fail) << r.candidate << " " << r.suite << " " << r.id << ": " << r.message << "\n  replay: " << r.replay;
  std::printf("%s", mutation_summary(rep).c_str());
  for (const auto& s : rep.summaries)
    std::printf("  %-24s %4d judged, worst err/tol %.3f\n", s.name.c_str(), s.pass + s.fail, s.worst_ratio_max);
}
