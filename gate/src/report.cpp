#include "vla/gate/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "vla/io/atomic_file.hpp"
#include "vla/io/version.hpp"

namespace vla::gate {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') o += c;
    }
  }
  return o;
}

double finite_or(double x, double alt) { return std::isfinite(x) ? x : alt; }

std::string mode(const GateReport& rep) { return rep.quick ? "quick" : "full"; }

// A test case of the run's verdict (not of one stream): its name, and the failure message ("" when it holds).
struct VerdictCase {
  std::string name, failure;
};

std::vector<VerdictCase> verdict_cases(const GateReport& rep) {
  std::vector<VerdictCase> v;
  for (const auto& s : rep.summaries) {
    if (rep.must_fail(s)) {
      v.push_back({s.name + " is rejected", s.fail > 0 ? "" : "the planted defect (" + s.defect + ") passed every case: the gate missed it"});
      continue;
    }
    v.push_back({s.name + " is judged on at least one case",
                 s.judged_nothing() ? "every case was outside its domain or skipped: nothing is shown" : ""});
  }
  if (rep.baseline_compared) {
    std::string lines;
    for (const auto& r : rep.regressions) lines += r + "\n";
    v.push_back({"accuracy within the stored baseline", lines});
  }
  return v;
}

}  // namespace

std::string junit_xml(const GateReport& rep) {
  std::ostringstream x;
  // In a mutation campaign a mutant's failing case is the gate doing its job: a passed test case (its rejection is
  // in system-out), and the mutant's verdict is the test case "<mutant> is rejected".
  const std::vector<VerdictCase> verdict = verdict_cases(rep);
  int verdict_failures = 0;
  for (const auto& c : verdict) verdict_failures += !c.failure.empty();
  int tests = int(verdict.size()), failures = verdict_failures, skipped = 0;
  for (const auto& s : rep.summaries) {
    tests += s.cases;
    skipped += s.invalid;
    failures += rep.must_fail(s) ? 0 : s.fail;
  }
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << fmt::format("<testsuites name=\"vla gate\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n", tests, failures,
                   skipped, rep.seconds);
  x << fmt::format("  <testsuite name=\"vla gate verdict\" tests=\"{}\" failures=\"{}\" skipped=\"0\" time=\"0\">\n", verdict.size(),
                   verdict_failures);
  for (const auto& c : verdict) {
    x << fmt::format("    <testcase classname=\"vla-gate.verdict\" name=\"{}\" time=\"0\"", xml_escape(c.name));
    if (c.failure.empty()) x << "/>\n";
    else x << fmt::format(">\n      <failure message=\"{}\" type=\"verdict\">{}</failure>\n    </testcase>\n", xml_escape(c.failure.substr(0, 300)), xml_escape(c.failure));
  }
  x << "  </testsuite>\n";
  for (const auto& s : rep.summaries) {
    double t = 0;
    for (const auto& r : rep.results)
      if (r.candidate == s.name) t += r.seconds;
    x << fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n", xml_escape(s.name),
                     s.cases, rep.must_fail(s) ? 0 : s.fail, s.invalid, t);
    x << "    <properties>\n"
      << fmt::format("      <property name=\"device\" value=\"{}\"/>\n", xml_escape(rep.device))
      << fmt::format("      <property name=\"role\" value=\"{}\"/>\n", xml_escape(s.role)) << "    </properties>\n";
    for (const auto& r : rep.results) {
      if (r.candidate != s.name) continue;
      x << fmt::format("    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{:.4f}\"", xml_escape(s.name), r.suite, xml_escape(r.id),
                       r.seconds);
      if (r.status == Status::pass) {
        x << "/>\n";
        continue;
      }
      x << ">\n";
      if (r.status == Status::fail && rep.must_fail(s))
        x << fmt::format("      <system-out>rejected here (the planted defect was caught): {}\nreplay: {}</system-out>\n", xml_escape(r.message),
                         xml_escape(r.replay));
      else if (r.status == Status::fail)
        x << fmt::format("      <failure message=\"{}\" type=\"accuracy\">{}\nreplay: {}</failure>\n", xml_escape(r.message.substr(0, 300)),
                         xml_escape(r.message), xml_escape(r.replay));
      else
        x << fmt::format("      <skipped message=\"input outside the spec's domain at this precision: {}\"/>\n", xml_escape(r.message));
      x << "    </testcase>\n";
    }
    x << "  </testsuite>\n";
  }
  x << "</testsuites>\n";
  return x.str();
}

std::string json_report(const GateReport& rep) {
  json j;
  j["tool"] = io::tool_version();
  j["device"] = rep.device;
  j["mode"] = mode(rep);
  j["seconds"] = rep.seconds;
  j["passed"] = rep.passed();
  j["mutation_campaign"] = rep.mutation_campaign;
  j["judged_on_no_case"] = rep.judged_nothing();
  j["regressions"] = rep.regressions;
  json cands = json::array();
  for (const auto& s : rep.summaries)
    cands.push_back({{"name", s.name}, {"role", s.role}, {"defect", s.defect}, {"cases", s.cases}, {"pass", s.pass}, {"fail", s.fail},
                     {"invalid", s.invalid}, {"breakdown", s.breakdown}, {"first_failure", s.first_failure}, {"worst_ratio_p50", s.worst_ratio_p50},
                     {"worst_ratio_max", finite_or(s.worst_ratio_max, 1e308)}, {"o_rel_p50", s.o_rel_p50}, {"o_rel_max", s.o_rel_max}});
  j["candidates"] = cands;
  json res = json::array();
  for (const auto& r : rep.results)
    res.push_back({{"suite", r.suite}, {"id", r.id}, {"origin", r.origin}, {"candidate", r.candidate}, {"status", to_string(r.status)},
                   {"message", r.message}, {"worst_ratio", finite_or(r.worst_ratio, 1e308)}, {"group_ratio", finite_or(r.group_ratio, 1e308)},
                   {"o_rel_error", r.o_rel_error}, {"first_fail_step", r.first_fail_step}, {"beyond", r.beyond}, {"seconds", r.seconds}, {"replay", r.replay}});
  j["results"] = res;
  return j.dump(1) + "\n";
}

std::string mutation_summary(const GateReport& rep) {
  int mutants = 0, killed = 0, honest = 0, honest_failed = 0;
  for (const auto& s : rep.summaries) {
    if (s.role == "mutant") ++mutants, killed += s.fail > 0;
    if (s.role == "honest") ++honest, honest_failed += s.fail > 0;
  }
  std::string out;
  if (mutants > 0)
    out += fmt::format("mutation score: {}/{} planted defects rejected ({:.1f}%)\n", killed, mutants, 100.0 * killed / mutants);
  if (honest > 0) {
    int cases = 0, false_fail = 0;
    for (const auto& r : rep.results)
      for (const auto& s : rep.summaries)
        if (s.name == r.candidate && s.role == "honest" && r.status != Status::invalid) ++cases, false_fail += r.status == Status::fail;
    out += fmt::format("honest variants: {}/{} passed; {} false failures in {} judged cases\n", honest - honest_failed, honest, false_fail, cases);
  }
  return out;
}

std::string campaign_table(const GateReport& rep) {
  std::ostringstream m;
  m << "| implementation | defect | judged (battery + fuzz) | failures | failure rate | rejected: err/tol min | median "
       "| passed: err/tol max | calibration statistic max |\n"
    << "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  auto median = [](std::vector<double> x) {
    if (x.empty()) return 0.0;
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  for (const auto& s : rep.summaries) {
    int battery = 0, fuzz = 0, fails = 0;
    std::vector<double> rejected;
    double passed_max = 0, calib_max = 0;
    for (const auto& r : rep.results) {
      if (r.candidate != s.name || r.status == Status::invalid) continue;
      (r.suite == "battery" ? battery : fuzz) += 1;
      if (r.status == Status::fail) {
        ++fails;
        rejected.push_back(r.worst_ratio);
      } else {
        passed_max = std::max(passed_max, r.worst_ratio);
        if (std::isfinite(r.group_ratio)) calib_max = std::max(calib_max, r.group_ratio);
      }
    }
    const int judged = battery + fuzz;
    const std::string rej_min = rejected.empty() ? "" : fmt::format("{:.3g}", *std::min_element(rejected.begin(), rejected.end()));
    const std::string rej_med = rejected.empty() ? "" : fmt::format("{:.3g}", median(rejected));
    m << fmt::format("| `{}` | {} | {} + {} | {} | {:.2f}% | {} | {} | {:.3g} | {:.3g} |\n", s.name, s.role == "mutant" ? s.defect : s.role,
                     battery, fuzz, fails, judged ? 100.0 * fails / judged : 0.0, rej_min, rej_med, passed_max, calib_max);
  }
  return m.str();
}

std::string markdown_summary(const GateReport& rep) {
  std::ostringstream m;
  m << "## vla gate" << (rep.mutation_campaign ? " (mutation campaign)" : "") << ": " << (rep.passed() ? "passed" : "**FAILED**") << "\n\n";
  m << fmt::format("{} mode on {}, {} cases in {:.1f} s ({}).\n\n", mode(rep), rep.device, rep.results.size(), rep.seconds, io::tool_version());
  m << "*outside domain*: inputs the spec rejects at this precision (e.g. a key whose features round to zero); "
       "*policy breakdown*: cases judged up to the step where the plain implementation of the policy itself loses every digit "
       "or overflows (docs/ERROR_MODEL.md).\n\n";
  const std::string ms = mutation_summary(rep);
  if (!ms.empty()) {
    std::istringstream lines(ms);
    for (std::string l; std::getline(lines, l);) m << "**" << l << "**  \n";
    m << "\n";
  }
  m << "| implementation | role | cases | pass | fail | outside domain | policy breakdown | worst err/tol (median, max) | o rel. error (median, max) |\n"
    << "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n";
  for (const auto& s : rep.summaries) {
    const std::string verdict = s.role == "mutant" ? (s.fail > 0 ? " (rejected)" : " (**missed**)") : (s.fail > 0 ? " (**fails**)" : "");
    m << fmt::format("| `{}`{} | {}{} | {} | {} | {} | {} | {} | {:.3g}, {:.3g} | {:.3g}, {:.3g} |\n", s.name, verdict, s.role,
                     s.defect.empty() ? "" : " (" + s.defect + ")", s.cases, s.pass, s.fail, s.invalid, s.breakdown, s.worst_ratio_p50,
                     s.worst_ratio_max, s.o_rel_p50, s.o_rel_max);
  }
  for (const auto& n : rep.judged_nothing())
    m << "\n`" << n << "` was judged on no case (every case outside its domain or skipped): nothing is shown.\n";
  if (!rep.regressions.empty()) {
    m << "\n### Accuracy regressions against the stored baseline\n\n";
    for (const auto& r : rep.regressions) m << "- " << r << "\n";
  }
  int shown = 0, failing = 0;
  for (const auto& r : rep.results) failing += r.status == Status::fail;
  bool any_unexpected = false;
  for (const auto& r : rep.results) {
    if (r.status != Status::fail) continue;
    bool mutant = false;
    for (const auto& s : rep.summaries) mutant = mutant || (s.name == r.candidate && s.role == "mutant");
    if (mutant) continue;
    if (!any_unexpected) m << "\n### Failures\n\n", any_unexpected = true;
    if (shown++ < 20) m << "- `" << r.candidate << "` " << r.suite << " `" << r.id << "`: " << r.message << "  \n  replay: `" << r.replay << "`\n";
  }
  if (shown > 20) m << "- ... and " << (shown - 20) << " more (see the JSON report)\n";
  (void)failing;
  return m.str();
}

void write_text(const fs::path& path, const std::string& text, bool overwrite) {
  io::write_file_atomically(path, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), overwrite);
}

// ---- accuracy baseline ---------------------------------------------------------

namespace {

const char* kFormat = "vla-gate-accuracy-baseline/1";
const char* kStats[] = {"worst_ratio_p50", "worst_ratio_max", "o_rel_p50", "o_rel_max"};

double stat(const CandidateSummary& s, const std::string& name) {
  if (name == "worst_ratio_p50") return s.worst_ratio_p50;
  if (name == "worst_ratio_max") return s.worst_ratio_max;
  if (name == "o_rel_p50") return s.o_rel_p50;
  return s.o_rel_max;
}

json read_json(const fs::path& file, const std::string& flag = "--baseline") {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw std::invalid_argument(flag + " " + file.string() + ": not a file");
  std::ifstream in(file);
  if (!in) throw std::invalid_argument(flag + " " + file.string() + ": cannot be read");
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {  // json::exception, or the stream's own failure
    throw std::invalid_argument(flag + " " + file.string() + ": malformed JSON: " + e.what());
  }
  const json* format = j.is_object() && j.contains("format") ? &j["format"] : nullptr;
  if (!format || !format->is_string() || format->get<std::string>() != kFormat)
    throw std::invalid_argument(flag + " " + file.string() + ": not an accuracy baseline (expected \"format\": \"" + kFormat + "\")");
  return j;
}

bool has_entry(const json& j, const std::string& m, const std::string& device) {
  return j.contains("modes") && j["modes"].is_object() && j["modes"].contains(m) && j["modes"][m].is_object() && j["modes"][m].contains(device);
}

std::string no_entry(const fs::path& file, const std::string& m, const std::string& device, bool quick) {
  return "--baseline " + file.string() + " has no entry for " + m + " mode on " + device + "; refresh it with: vla gate" +
         (device == "external" ? std::string(" --external OUTS --cases CASES") : std::string(quick ? " --quick" : "") + " --device " + device) +
         " --write-baseline " + file.string();
}

// The entry for this mode and device, every production candidate's statistics present and numbers: checked before
// the battery runs, so that a bad file costs no run.
const json& checked_entry(const json& j, const fs::path& file, bool quick, const std::string& device,
                          const std::vector<std::string>& production) {
  const std::string m = quick ? "quick" : "full";
  if (!has_entry(j, m, device)) throw std::invalid_argument(no_entry(file, m, device, quick));
  const json& entry = j["modes"][m][device];
  if (!entry.is_object())
    throw std::invalid_argument("--baseline " + file.string() + ": modes." + m + "." + device + " is not an object of implementations");
  for (const auto& name : production) {
    if (!entry.contains(name) || !entry[name].is_object())
      throw std::invalid_argument("--baseline " + file.string() + " has no statistics for '" + name + "' (" + m + " mode, " + device +
                                  "); refresh it with --write-baseline (docs/GATE.md)");
    for (const char* stat_name : kStats)
      if (!entry[name].contains(stat_name) || !entry[name][stat_name].is_number())
        throw std::invalid_argument("--baseline " + file.string() + ": '" + name + "." + stat_name + "' is not a number");
  }
  return entry;
}

}  // namespace

void compare_with_baseline(GateReport& rep, const fs::path& file) {
  const json j = read_json(file);
  std::vector<std::string> production;
  for (const auto& s : rep.summaries)
    if (s.role == "production") production.push_back(s.name);
  const json& entry = checked_entry(j, file, rep.quick, rep.device, production);
  rep.baseline_compared = true;
  for (const auto& s : rep.summaries) {
    if (s.role != "production") continue;
    for (const char* name : kStats) {
      const double stored = entry[s.name][name].get<double>(), now = stat(s, name);
      // The smallest value the statistic can meaningfully take: a float rounding.
      const double floor = name[0] == 'o' ? 0x1p-24 : 1e-3;
      if (!(now <= kBaselineFactor * std::max(stored, floor)))
        rep.regressions.push_back(fmt::format("{}: {} = {:.4g}, more than {} x the stored {:.4g}", s.name, name, now, kBaselineFactor, stored));
    }
  }
}

void check_baseline(const fs::path& file, bool quick, const std::string& device, const std::vector<std::string>& production) {
  (void)checked_entry(read_json(file), file, quick, device, production);
}

void check_baseline_to_update(const fs::path& file) {
  std::error_code ec;
  if (fs::exists(file, ec)) (void)read_json(file, "--write-baseline");
}

std::string baseline_text(const GateReport& rep, const fs::path& file) {
  std::error_code ec;
  json j;
  if (fs::exists(file, ec)) {
    j = read_json(file, "--write-baseline");
  } else {
    j["format"] = kFormat;
  }
  j["refresh"] = rep.device == "external"
                     ? "vla gate --external OUTS --cases CASES --write-baseline FILE --force (an external kernel's outputs: docs/GATE.md)"
                     : "vla gate --device cpu --write-baseline FILE --force; vla gate --quick --device cpu --write-baseline FILE --force";
  // Only this run's candidates are replaced: a run of one implementation keeps the others' statistics.
  json& entry = j["modes"][mode(rep)][rep.device];
  if (!entry.is_object()) entry = json::object();
  for (const auto& s : rep.summaries) {
    if (s.role != "production") continue;
    json e;
    for (const char* name : kStats) e[name] = finite_or(stat(s, name), 1e308);  // JSON has no infinity
    e["cases"] = s.cases;
    entry[s.name] = e;
  }
  j["tool"] = io::tool_version();
  return j.dump(2) + "\n";
}

void write_baseline(const GateReport& rep, const fs::path& file, bool overwrite) {
  std::error_code ec;
  if (fs::exists(file, ec) && !overwrite) throw std::invalid_argument("--write-baseline " + file.string() + " already exists; pass --force to update it");
  write_text(file, baseline_text(rep, file), true);
}

}  // namespace vla::gate
