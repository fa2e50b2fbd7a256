#include "vla/claims/gpu_logs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace vla::claims {

namespace {

std::vector<std::vector<std::string>> records(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
      continue;
    }
    if (c == '"') quoted = true, any = true;
    else if (c == ',') row.push_back(field), field.clear(), any = true;
    else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) row.push_back(field), out.push_back(row);
      row.clear(), field.clear(), any = false;
    } else field += c, any = true;
  }
  if (any || !field.empty()) row.push_back(field), out.push_back(row);
  return out;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<CsvRow> parse_csv(const std::string& text) {
  const auto recs = records(text);
  std::vector<CsvRow> rows;
  if (recs.empty()) return rows;
  const auto& head = recs[0];
  for (std::size_t r = 1; r < recs.size(); ++r) {
    if (recs[r].size() != head.size())
      throw std::invalid_argument("CSV row " + std::to_string(r + 1) + " has " + std::to_string(recs[r].size()) +
                                  " fields, the header has " + std::to_string(head.size()));
    CsvRow row;
    for (std::size_t i = 0; i < head.size(); ++i) row[head[i]] = recs[r][i];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<GpuLogs> find_gpu_logs(const std::string& repo_root) {
  namespace fs = std::filesystem;
  const fs::path base = fs::path(repo_root) / "reports" / "gpu";
  std::error_code ec;
  if (!fs::is_directory(base, ec)) return std::nullopt;
  std::vector<fs::path> dirs;
  for (auto it = fs::recursive_directory_iterator(base, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec) && it->path().filename() == "bench.csv") dirs.push_back(it->path().parent_path());
  }
  if (dirs.empty()) return std::nullopt;
  std::sort(dirs.begin(), dirs.end());
  const fs::path d = dirs.back();
  GpuLogs logs;
  logs.dir = fs::relative(d, repo_root, ec).string();
  logs.bench = parse_csv(slurp(d / "bench.csv"));
  if (fs::exists(d / "torch.csv", ec)) logs.torch = parse_csv(slurp(d / "torch.csv"));
  if (fs::exists(d / "env.txt", ec)) logs.env = slurp(d / "env.txt");
  return logs;
}

std::optional<double> crossover_length(double per_step_ms, std::vector<std::pair<double, double>> sdpa, std::string* note) {
  std::sort(sdpa.begin(), sdpa.end());
  if (sdpa.size() < 2 || !(per_step_ms > 0)) return std::nullopt;
  auto ours = [per_step_ms](double T) { return per_step_ms * T; };
  if (sdpa.front().second >= ours(sdpa.front().first)) {
    if (note) *note = "softmax already slower at the smallest measured T";
    return std::nullopt;
  }
  // SDPA between two points: m(T) = m0 (T/T0)^a; equal to per_step T at T = (per T0^a / m0)^(1/(a-1)).
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
