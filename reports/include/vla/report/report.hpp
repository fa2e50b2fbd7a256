// `vla report`: runs the stages, renders the pages and plots, and swaps the
// finished report folder into place.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <optional>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gpu/impl.hpp"

#include "vla/report/document.hpp"

namespace vla::report {

// How much work: `full` is the default run (within 10 minutes on 2 cores),
// `quick` is README command (1) (within 1 minute), `tiny` is for the tests.
enum class Profile { tiny, quick, full };
std::string to_string(Profile);

// A kernel outside this repository (vla report --external-cmd / --external-serve):
// the drift section draws it beside our kernel of the same precision policy.
struct ExternalKernel {
  std::string label;                                        // what the page calls it (its command)
  impl::Kind kind = impl::Kind::fp32;                       // the precision policy it is judged by
  std::function<Outputs(const Stream&, const Options&)> run;  // takes the inputs as `kind` consumes them
};

struct Config {
  std::filesystem::path out = "reports/out";
  std::filesystem::path cache_dir;  // empty: Cache::default_dir(out)
  bool no_cache = false;
  bool fresh = false;               // ignore cached results (and refresh them)
  Profile profile = Profile::full;
  std::string device = "auto";      // auto | cpu | cuda
  std::vector<std::string> sections;  // empty: all
  int jobs = 0;                     // 0: hardware threads
  int progress = -1;                // -1: progress_wanted(), 0 off, 1 on
  std::string command;              // shown in the summary
  std::optional<ExternalKernel> external;  // also drawn in the drift section (never cached)
};

// What the stages need besides their parameters.
struct RunEnv {
  int jobs = 1;
  bool progress = false;
  bool cuda = false;  // kernels run on the GPU (else on their CPU twins)
  std::optional<ExternalKernel> external;
};

struct Headline {
  std::string what;  // no free numbers
  Cell value;
  std::string section;  // anchor of the section that explains it
};

struct Built {
  Section section;
  std::vector<Headline> headlines;
};

struct Stage {
  std::string id, title;
  // Everything the result depends on (besides the binary): the cache key. Params
  // holding "no_cache": true are never cached (they depend on something outside
  // the binary, such as an external kernel).
  std::function<nlohmann::json(Profile, const RunEnv&)> params;
  std::function<nlohmann::json(const nlohmann::json& params, const RunEnv&)> compute;
  std::function<Built(const nlohmann::json& params, const nlohmann::json& result)> build;
};

// The sections in page order (after the summary).
const std::vector<Stage>& stages();

struct Outcome {
  std::filesystem::path out;
  bool replaced_previous = false;
  double seconds = 0;
  std::vector<std::string> notes;  // e.g. sections that could not be computed
};

// Throws std::invalid_argument for bad configuration (unknown section, --out
// that is not a report folder) before any work; Interrupted on SIGINT/SIGTERM
// (nothing is left behind).
Outcome run_report(const Config& cfg);

}  // namespace vla::report
