// Harness of the property tests.
//
// VLA_PROP(Suite, Name, Cases, (args)) is RC_GTEST_PROP with a per-property
// default number of cases, chosen so that all properties fit the CI budget;
// RC_PARAMS="max_success=N" overrides it, and every other RC_PARAMS key (seed,
// reproduce, max_size, noshrink, verbose_progress) works as usual
// (properties/README.md).
//
// find_counterexample runs a property that is expected to be FALSE (a claim of
// the paper under test) and returns RapidCheck's shrunk counterexample.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>

#include "vla/properties/counterexample.hpp"

namespace rc::detail {
TestListener& globalTestListener();  // defined in librapidcheck (Check.cpp)
}

namespace vla::props::test {

// Working precision of the high-precision checks.
inline constexpr long kBits = 256;

inline rc::detail::TestParams params_with_default(int default_cases) {
  rc::detail::TestParams p = rc::detail::configuration().testParams;
  const char* env = std::getenv("RC_PARAMS");
  if (!env || !std::strstr(env, "max_success")) p.maxSuccess = default_cases;
  return p;
}

inline rc::detail::TestMetadata current_metadata() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata m;
  m.id = std::string(info->test_suite_name()) + "/" + info->name();
  m.description = info->name();
  return m;
}

template <class Testable>
void check_property(Testable&& testable, int default_cases) {
  using namespace rc::detail;
  const TestResult result = checkProperty(toProperty(std::forward<Testable>(testable)), current_metadata(),
                                          params_with_default(default_cases), globalTestListener(), configuration().reproduce);
  std::ostringstream ss;
  printResultMessage(result, ss);
  if (result.template is<SuccessResult>()) {
    if (!result.template get<SuccessResult>().distribution.empty()) std::cout << ss.str() << std::endl;
  } else {
    FAIL() << ss.str();
  }
}

struct QuietListener : rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// Runs a property expected to fail; nullopt when RapidCheck found no counterexample.
template <class Testable>
std::optional<rc::detail::FailureResult> find_counterexample(Testable&& testable, int max_cases) {
  using namespace rc::detail;
  QuietListener quiet;
  TestParams p = params_with_default(max_cases);
  const TestResult r = checkProperty(toProperty(std::forward<Testable>(testable)), current_metadata(), p, quiet);
  if (!r.template is<FailureResult>()) return std::nullopt;
  return r.template get<FailureResult>();
}

inline std::string num(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

// VLA_WRITE_COUNTEREXAMPLES=1 makes the refutation tests (re)write the
// committed counterexample files; otherwise they only replay them.
inline bool write_counterexamples() {
  const char* e = std::getenv("VLA_WRITE_COUNTEREXAMPLES");
  return e && std::string(e) == "1";
}

}  // namespace vla::props::test

#define VLA_PROP(Suite, Name, Cases, ArgList)                                                   \
  void vla_prop_impl_##Suite##_##Name ArgList;                                                  \
  TEST(Suite, Name) { ::vla::props::test::check_property(&vla_prop_impl_##Suite##_##Name, Cases); } \
  void vla_prop_impl_##Suite##_##Name ArgList
