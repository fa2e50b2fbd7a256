#include "vla/claims/gpu_logs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace vla::claims {

namespace {

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 1; i < line.size(); ++i) {  // skip the leading '|'
    if (line[i] == '|') {
      const auto b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
      out.push_back(b == std::string::npos ? "" : cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return out;
}

std::optional<double> number(const std::string& cell, const std::string& where) {
  if (cell == "-" || cell == "skipped" || cell.empty()) return std::nullopt;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != cell.size() || !std::isfinite(v)) throw std::invalid_argument("benchmark table: " + where + ": '" + cell + "' is not a number");
  return v;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<BenchRow> parse_benchmark_table(const std::string& md) {
  std::istringstream in(md);
  std::string line;
  std::vector<std::string> head;
  std::vector<BenchRow> rows;
  while (std::getline(in, line)) {
    if (head.empty()) {
      if (line.rfind("| B | H | T | D | fp32 | bf16 |", 0) == 0) head = cells(line);
      continue;
    }
    if (line.rfind("|---", 0) == 0) continue;
    if (line.empty() || line[0] != '|') break;  // the table ended
    const auto c = cells(line);
    const std::string where = "row '" + line + "'";
    if (c.size() != head.size()) throw std::invalid_argument("benchmark table: " + where + " has " + std::to_string(c.size()) +
                                                             " cells, the header has " + std::to_string(head.size()));
    auto col = [&](const std::string& name) -> std::optional<double> {
      const auto it = std::find(head.begin(), head.end(), name);
      return it == head.end() ? std::nullopt : number(c[std::size_t(it - head.begin())], where);
    };
    BenchRow r;
    const auto B = col("B"), H = col("H"), T = col("T"), D = col("D");
    if (!B || !H || !T || !D) throw std::invalid_argument("benchmark table: " + where + " lacks B, H, T or D");
    r.B = int(*B), r.H = int(*H), r.T = int(*T), r.D = int(*D);
    r.fp32_ms = col("fp32");
    r.bf16_ms = col("bf16");
    r.loop_ms = col("torch loop (extrap.)");
    r.sdpa_ms = col("SDPA bf16");
    rows.push_back(r);
  }
  return rows;
}

// The run's date as the report records it ("date (UTC): 2026-12-01 05:58:17",
// the line scripts/gpu_report.sh writes first); "" where there is none, which
// sorts before every dated report.
static std::string recorded_date(const std::string& text) {
  static const std::regex kDate(R"(date \(UTC\): (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}))");
  std::smatch m;
  return std::regex_search(text, m, kDate) ? m[1].str() : std::string();
}

std::optional<GpuReport> find_gpu_report(const std::string& repo_root) {
  namespace fs = std::filesystem;
  const fs::path base = fs::path(repo_root) / "reports" / "gpu";
  std::error_code ec;
  if (!fs::is_directory(base, ec)) return std::nullopt;
  // Newest by the recorded run date, then by name: a later kernel's report may
  // carry a suffix (2026-12-01-h200-v5.md) that sorts before an earlier run's
  // plain name (2026-12-01-h200.md).
  std::optional<std::pair<std::string, fs::path>> best;
  std::string best_text;
  std::vector<BenchRow> best_rows;
  for (const auto& e : fs::directory_iterator(base, ec)) {
    if (!e.is_regular_file(ec) || e.path().extension() != ".md") continue;
    std::string text = slurp(e.path());
    auto rows = parse_benchmark_table(text);
    if (rows.empty()) continue;
    auto key = std::make_pair(recorded_date(text), e.path());
    if (!best || key > *best) best = std::move(key), best_text = std::move(text), best_rows = std::move(rows);
  }
  if (!best) return std::nullopt;
  GpuReport r;
  r.file = fs::relative(best->second, repo_root, ec).string();
  r.rows = std::move(best_rows);
  std::istringstream in(best_text);
  std::string line;
  while (std::getline(in, line))
    if (const auto at = line.find("NVIDIA"); at != std::string::npos) {
      r.gpu = line.substr(at, line.find(',', at) == std::string::npos ? std::string::npos : line.find(',', at) - at);
      break;
    }
  if (r.gpu.empty()) r.gpu = "(GPU not named in the report)";
  return r;
}

std::optional<double> crossover_length(double per_step_ms, std::vector<std::pair<double, double>> sdpa, std::string* note) {
  std::sort(sdpa.begin(), sdpa.end());
  if (sdpa.size() < 2 || !(per_step_ms > 0)) return std::nullopt;
  auto ours = [per_step_ms](double T) { return per_step_ms * T; };
  if (sdpa.front().second >= ours(sdpa.front().first)) {
    if (note) *note = "softmax already slower at the smallest measured T";
    return std::nullopt;
  }
  // Softmax between two points: m(T) = m0 (T/T0)^a; equal to per_step T at T = (per T0^a / m0)^(1/(a-1)).
  auto cross = [per_step_ms](double t0, double m0, double t1, double m1) -> std::optional<double> {
    const double a = std::log(m1 / m0) / std::log(t1 / t0);
    if (!(a > 1)) return std::nullopt;
    return std::pow(per_step_ms * std::pow(t0, a) / m0, 1 / (a - 1));
  };
  for (std::size_t i = 0; i + 1 < sdpa.size(); ++i) {
    const auto [t0, m0] = sdpa[i];
    const auto [t1, m1] = sdpa[i + 1];
    if (m0 <= ours(t0) && m1 >= ours(t1)) {
      if (note) *note = "interpolated between measured points";
      return cross(t0, m0, t1, m1);
    }
  }
  const auto [t0, m0] = sdpa[sdpa.size() - 2];
  const auto [t1, m1] = sdpa.back();
  const auto c = cross(t0, m0, t1, m1);
  if (note) *note = c ? "extrapolated with softmax's last measured slope" : "softmax's last slope is not above 1: no crossing";
  return c;
}

}  // namespace vla::claims
