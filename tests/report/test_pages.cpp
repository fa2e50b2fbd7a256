// A whole (tiny) report: every number on report.md and index.html is one that
// report.json holds, and the other way round; the plots exist; a rerun comes
// from the cache; an interrupted run leaves the previous report untouched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "page_numbers.hpp"
#include "vla/report/deps.hpp"
#include "vla/report/output_dir.hpp"
#include "vla/report/plot.hpp"
#include "vla/report/progress.hpp"
#include "vla/report/report.hpp"

namespace fs = std::filesystem;
using namespace vla::report;
using nlohmann::json;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

fs::path root() {
  static const fs::path r = [] {
    const fs::path p = fs::temp_directory_path() / ("vla_report_pages_" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
  }();
  return r;
}

Config tiny(const std::string& name) {
  Config c;
  c.out = root() / name;
  c.cache_dir = VLA_TEST_CACHE_DIR;
  c.profile = Profile::tiny;
  c.sections = {"drift", "state-norm", "jacobian", "sherman-morrison"};
  c.jobs = 2;
  c.progress = 0;
  c.command = "vla report --tiny";
  return c;
}

// The tiny report, made once for the tests that read it.
const Outcome& made() {
  static const Outcome o = run_report(tiny("out"));
  return o;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Reports tokens in `a` and not in `b` (multiset difference).
std::vector<std::string> missing(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> d;
  const auto sa = sorted(a), sb = sorted(b);
  std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(d));
  return d;
}

}  // namespace

TEST(Pages, MarkdownShowsExactlyTheNumbersOfTheJson) {
  const fs::path out = made().out;
  const json r = json::parse(slurp(out / "report.json"));
  const auto page = pages::number_tokens(slurp(out / "report.md"));
  const auto data = pages::json_tokens(r);
  EXPECT_GT(data.size(), 50u);
  EXPECT_EQ(missing(page, data), std::vector<std::string>{}) << "numbers on report.md that report.json does not hold";
  EXPECT_EQ(missing(data, page), std::vector<std::string>{}) << "numbers of report.json missing from report.md";
}

TEST(Pages, HtmlShowsExactlyTheNumbersOfTheJson) {
  const fs::path out = made().out;
  const json r = json::parse(slurp(out / "report.json"));
  const auto page = pages::number_tokens(pages::html_text(slurp(out / "index.html")));
  const auto data = pages::json_tokens(r);
  EXPECT_EQ(missing(page, data), std::vector<std::string>{}) << "numbers on index.html that report.json does not hold";
  EXPECT_EQ(missing(data, page), std::vector<std::string>{}) << "numbers of report.json missing from index.html";
}

TEST(Pages, EveryShownNumberIsItsValueRounded) {
  const json r = json::parse(slurp(made().out / "report.json"));
  EXPECT_EQ(pages::inconsistent_numbers(r), std::vector<std::string>{});
}

TEST(Pages, EveryFigureIsRenderedAndInlined) {
  // gnuplot is a dependency that scripts/setup.sh installs: without it the
  // report has no plots, which is a failure of the set-up, not a reason to skip.
  ASSERT_TRUE(gnuplot_available()) << "gnuplot with svg and pngcairo is not installed (scripts/setup.sh installs gnuplot-nox)";
  const fs::path out = made().out;
  const json r = json::parse(slurp(out / "report.json"));
  const std::string html = slurp(out / "index.html");
  int figures = 0;
  for (const auto& s : r["sections"])
    for (const auto& b : s["blocks"])
      if (b["type"] == "figure") {
        ++figures;
        const std::string id = b["plot"]["id"];
        EXPECT_GT(fs::file_size(out / "figures" / (id + ".svg")), 1000u) << id;
        EXPECT_GT(fs::file_size(out / "figures" / (id + ".png")), 1000u) << id;
        EXPECT_NE(html.find("id=\"fig-" + id + "\"><img"), std::string::npos) << id;
      }
  EXPECT_GE(figures, 8);
  EXPECT_EQ(html.find("src=\"figures/"), std::string::npos) << "the page must not depend on separate image files";
}

TEST(Pages, RerunComesFromTheCacheAndFreshRecomputes) {
  (void)made();
  Config c = tiny("out");
  const Outcome again = run_report(c);
  EXPECT_TRUE(again.replaced_previous);
  const json r = json::parse(slurp(again.out / "report.json"));
  for (const auto& [id, t] : r["meta"]["stage_timings"].items()) EXPECT_TRUE(t["cached"].get<bool>()) << id;
  c.fresh = true;
  c.sections = {"state-norm"};
  const json f = json::parse(slurp(run_report(c).out / "report.json"));
  EXPECT_FALSE(f["meta"]["stage_timings"]["state-norm"]["cached"].get<bool>());
}

TEST(Pages, InterruptedRunLeavesThePreviousReportAndNoStagingFolder) {
  const fs::path out = made().out;
  const std::string before = slurp(out / "report.json");
  Config c = tiny("out");
  c.fresh = true;  // compute, so that the kernel runs (and the interrupt arrives mid-stage)
  c.sections = {"drift"};
  deps::set_kernel_override([](const vla::Stream& s, const vla::Options& o, vla::impl::Kind k) {
    request_interrupt();  // as if SIGINT arrived during the first kernel run
    return vla::impl::run(s, o, k, vla::impl::Device::cpu);
  });
  EXPECT_THROW(run_report(c), Interrupted);
  deps::set_kernel_override(nullptr);
  clear_interrupt();
  EXPECT_EQ(slurp(out / "report.json"), before);
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos) << e.path();
}

TEST(Pages, BadConfigurationIsRejectedBeforeAnyWork) {
  Config c = tiny("never");
  c.sections = {"drift", "nonsense"};
  EXPECT_THROW(run_report(c), std::invalid_argument);
  c.sections = {};
  c.device = "tpu";
  EXPECT_THROW(run_report(c), std::invalid_argument);
  EXPECT_FALSE(fs::exists(root() / "never"));
}
