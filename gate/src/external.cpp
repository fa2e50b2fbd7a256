#include "vla/gate/external.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <fstream>
#include <random>
#include <stdexcept>
#include <system_error>

#include "vla/gate/battery.hpp"
#include "vla/gate/candidate_file.hpp"
#include "vla/gate/fuzz.hpp"
#include "vla/gate/judge.hpp"
#include "vla/gate/spec_args.hpp"
#include "vla/io/stream_io.hpp"
#include "vla/io/version.hpp"

namespace vla::gate {

namespace fs = std::filesystem;

namespace {

constexpr const char* kManifest = "manifest.json";

// A battery id as a file name: '/' becomes '.', anything else outside [A-Za-z0-9._-] '_'.
std::string file_name(int index, const std::string& id) {
  std::string s = fmt::format("{:03d}-", index);
  for (char ch : id) s += ch == '/' ? '.' : (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-') ? ch : '_';
  return s + ".safetensors";
}

bool empty_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::directory_iterator(dir, ec) == fs::directory_iterator();
}

}  // namespace

void write_case_stream(const fs::path& file, const Stream& rounded, const Options& opt, const Policy& policy, io::Metadata extra) {
  extra["tool"] = io::tool_version();
  extra["spec.arguments"] = spec_arguments(opt);
  put_options(extra, opt);
  io::save_stream(file, rounded, policy.input() == impl::Kind::fp32 ? io::DType::F32 : io::DType::BF16, extra, false);
}

Policy parse_policy(std::string_view dtype) {
  if (dtype == "tf32") return chunked_policy(impl::ChunkedKind::tf32);
  if (dtype == "fp32" || dtype == "bf16" || dtype == "bf16-state") return Policy(impl::parse_kind(dtype));
  throw std::invalid_argument("unknown dtype '" + std::string(dtype) + "' (fp32, bf16, bf16-state, tf32)");
}

std::string dtype_name(const Policy& p) { return p == parse_policy("tf32") ? "tf32" : p.name(); }

ExportedCases export_battery(const fs::path& asked, bool quick, const Policy& policy, const std::function<void(int, int)>& progress,
                             int fuzz_cases, std::uint64_t fuzz_seed) {
  if (fuzz_cases < 0) throw std::invalid_argument("--fuzz-cases must be >= 0");
  // "cases/" names the folder "cases": without the trailing separator its parent and name are the folder's.
  const fs::path dir = asked.has_filename() ? asked : asked.parent_path();
  if (dir.empty()) throw std::invalid_argument("--export-cases needs a folder name");
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec)) && !empty_folder(dir))
    throw std::invalid_argument(dir.string() + " already exists and is not an empty folder; nothing is overwritten: choose a new folder");
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) throw std::invalid_argument(dir.string() + ": folder " + parent.string() + " does not exist");
  // Everything goes to a temporary sibling first and is renamed into place at the
  // end, so an interrupted export leaves no partial folder under the asked name.
  std::random_device rd;
  const fs::path tmp = parent / fmt::format(".{}.partial-{:08x}", dir.filename().string(), rd());
  fs::create_directory(tmp);
  try {
    ExportedCases out;
    out.dir = dir;
    out.quick = quick;
    out.dtype = dtype_name(policy);
    out.fuzz_cases = fuzz_cases;
    out.fuzz_seed = fuzz_seed;
    std::vector<BatteryCase> cases = battery(quick);
    // The fuzz budget exactly as run_gate draws it (gate.cpp), as cases of their own.
    for (int j = 0; j < fuzz_cases; ++j) {
      const std::uint64_t seed = case_seed(fuzz_seed, static_cast<std::uint64_t>(j));
      FuzzCase fc = make_fuzz_case(seed, policy.input(), FuzzLimits{});
      BatteryCase bc;
      bc.id = fmt::format("seed 0x{:016x}", seed);
      bc.family = fc.origin;
      bc.preset = fc.preset;
      bc.seed = seed;
      bc.stream = std::move(fc.stream);
      bc.opt = fc.opt;
      cases.push_back(std::move(bc));
    }
    nlohmann::json list = nlohmann::json::array(), skipped = nlohmann::json::array();
    int index = 0;
    for (const BatteryCase& bc : cases) {
      ++index;
      if (const std::string why = invalid_reason(bc.stream, bc.opt, policy); !why.empty()) {
        // Not judgeable at this precision: vla gate marks it outside the domain whatever a harness returns.
        skipped.push_back({{"id", bc.id}, {"reason", why}});
      } else {
        const Stream rounded = round_inputs(bc.stream, policy.input());
        const std::string name = file_name(index, bc.id), hash = case_hash(kExternalName, rounded, bc.opt);
        write_case_stream(tmp / name, rounded, bc.opt, policy,
                          {{"case.id", bc.id},
                           {"case.family", bc.family},
                           {"case.preset", bc.preset},
                           {"case.dtype", out.dtype},
                           {"case.mode", quick ? "quick" : "full"},
                           {"case.hash", hash}});
        const Dims& d = rounded.dims;
        list.push_back({{"file", name},
                        {"id", bc.id},
                        {"family", bc.family},
                        {"preset", bc.preset},
                        {"dims", {{"B", d.B}, {"T", d.T}, {"H", d.H}, {"Dk", d.Dk}, {"Dv", d.Dv}}},
                        {"has_u", rounded.has_u()},
                        {"spec_arguments", spec_arguments(bc.opt)},
                        {"hash", hash}});
        out.file_by_hash[hash] = name;
        out.id_by_file[name] = bc.id;
        out.args_by_file[name] = spec_arguments(bc.opt);
      }
      if (progress) progress(index, static_cast<int>(cases.size()));
    }
    const nlohmann::json manifest = {
        {"tool", io::tool_version()},
        {"mode", quick ? "quick" : "full"},
        {"fuzz_cases", fuzz_cases},
        {"fuzz_seed", fuzz_seed},
        {"dtype", out.dtype},
        {"input_type", policy.input() == impl::Kind::fp32 ? "F32" : "BF16"},
        {"how",
         "For each case, run the kernel on q, k, v (and u when present) with the options of spec_arguments (as `vla run` "
         "arguments; also in the file's metadata, keys spec.*) and write o [B,T,H,Dv] (and S [B,H,Dv,Dk], A [B,H,Dk,Dk], "
         "state_norm [B,T,H] when the kernel has them) to a safetensors file of the same name in an outputs folder; then "
         "`vla gate --external OUTPUTS --cases THIS_FOLDER`."},
        {"cases", list},
        {"not_exported", skipped}};
    std::ofstream(tmp / kManifest) << manifest.dump(2) << "\n";
    if (fs::exists(dir, ec)) fs::remove(dir);  // the empty folder checked above
    fs::rename(tmp, dir);
    return out;
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

ExportedCases read_exported(const fs::path& dir) {
  const fs::path mf = dir / kManifest;
  std::ifstream in(mf);
  if (!in) throw std::invalid_argument("--cases " + dir.string() + ": no " + kManifest + " (a folder written by vla gate --export-cases)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
    ExportedCases out;
    out.dir = dir;
    const std::string mode = j.at("mode").get<std::string>();
    if (mode != "quick" && mode != "full") throw std::invalid_argument("mode '" + mode + "'");
    out.quick = mode == "quick";
    out.dtype = j.at("dtype").get<std::string>();
    (void)parse_policy(out.dtype);
    out.fuzz_cases = j.value("fuzz_cases", 0);
    out.fuzz_seed = j.value("fuzz_seed", std::uint64_t{1});
    if (out.fuzz_cases < 0) throw std::invalid_argument("fuzz_cases " + std::to_string(out.fuzz_cases));
    for (const auto& c : j.at("cases")) {
      const std::string file = c.at("file").get<std::string>();
      if (file.find('/') != std::string::npos || file.find("..") != std::string::npos) throw std::invalid_argument("file name '" + file + "'");
      out.file_by_hash[c.at("hash").get<std::string>()] = file;
      out.id_by_file[file] = c.at("id").get<std::string>();
      out.args_by_file[file] = c.at("spec_arguments").get<std::string>();
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(mf.string() + " is malformed: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(mf.string() + " is malformed: " + e.what());
  }
}

Candidate external_candidate(const ExportedCases& cases, const fs::path& outputs, const Policy& policy, bool skip_missing) {
  if (policy.input() != parse_policy(cases.dtype).input())
    throw std::invalid_argument("--dtype " + dtype_name(policy) + " consumes other inputs than the exported cases (" + cases.dtype +
                                "): export them again for this dtype");
  Candidate c;
  c.name = kExternalName;
  c.policy = policy;
  c.role = Role::production;
  c.description = "the outputs in " + outputs.string() + " of a kernel run on the cases in " + cases.dir.string();
  auto file_of = [cases](const Stream& s, const Options& o) {
    const auto it = cases.file_by_hash.find(case_hash(kExternalName, s, o));
    return it == cases.file_by_hash.end() ? std::string() : it->second;
  };
  c.run = [file_of, outputs, dir = cases.dir](const Stream& s, const Options& o) {
    const std::string f = file_of(s, o);
    if (f.empty())
      throw std::runtime_error("this battery case is not among the cases exported to " + dir.string() +
                               " (exported by another version of vla-verify? export them again)");
    const fs::path p = outputs / f;
    std::error_code ec;
    if (!fs::exists(p, ec)) throw std::runtime_error("no output file " + p.string());
    return load_candidate(p, s.dims).out;
  };
  if (skip_missing)
    c.outside = [file_of, outputs](const Stream& s, const Options& o) -> std::string {
      const std::string f = file_of(s, o);
      std::error_code ec;
      if (!f.empty() && !fs::exists(outputs / f, ec)) return "no output file " + (outputs / f).string() + " (--skip-missing)";
      return "";
    };
  return c;
}

std::string external_replay(const ExportedCases& cases, const fs::path& outputs, const std::string& case_id) {
  for (const auto& [file, id] : cases.id_by_file)
    if (id == case_id)
      return fmt::format("vla check --input {} --candidate {} --dtype {} {}", shell_quoted((cases.dir / file).string()),
                         shell_quoted((outputs / file).string()), cases.dtype, cases.args_by_file.at(file));
  return "";
}

}  // namespace vla::gate
