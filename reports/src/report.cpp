// The orchestration of `vla report`: parameters -> cached or fresh results ->
// sections -> pages and plots in a staging folder -> one rename into place.
#include "vla/report/report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "vla/report/cache.hpp"
#include "vla/report/deps.hpp"
#include "vla/report/machine.hpp"
#include "vla/report/output_dir.hpp"
#include "vla/report/progress.hpp"
#include "vla/report/render.hpp"
#include "vla/report/sections.hpp"

namespace vla::report {

namespace fs = std::filesystem;

std::string to_string(Profile p) { return p == Profile::tiny ? "tiny" : p == Profile::quick ? "quick" : "full"; }

const std::vector<Stage>& stages() {
  static const std::vector<Stage> s = {drift_stage(), chunked_drift_stage(), state_norm_stage(), jacobian_stage(),
                                       sherman_morrison_stage(), recall_stage()};
  return s;
}

namespace {

void write_file(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
  f.close();
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::vector<const Stage*> selected(const Config& cfg) {
  std::vector<const Stage*> out;
  std::set<std::string> want(cfg.sections.begin(), cfg.sections.end());
  for (const auto& name : want) {
    const bool known = name == "summary" || std::any_of(stages().begin(), stages().end(),
                                                        [&](const Stage& s) { return s.id == name; });
    if (!known) {
      std::string list = "summary";
      for (const auto& s : stages()) list += ", " + s.id;
      throw std::invalid_argument("unknown section '" + name + "' for --sections (expected one of: " + list + ")");
    }
  }
  for (const auto& s : stages())
    if (want.empty() || want.count(s.id)) out.push_back(&s);
  return out;
}

// A stage that cannot run in this build (a dependency not built yet, a missing
// tool) becomes a section that says so instead of failing the whole report.
Built unavailable(const Stage& st, const std::string& why) {
  Built b;
  b.section.id = st.id;
  b.section.title = st.title;
  b.section.status = "unavailable";
  b.section.blocks.push_back(para("This section could not be computed in this build: {why}", {{"why", Code{why}}}));
  b.section.data = {{"unavailable", why}};
  return b;
}

}  // namespace

Outcome run_report(const Config& cfg) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto chosen = selected(cfg);  // validates --sections before any work
  if (cfg.device != "auto" && cfg.device != "cpu" && cfg.device != "cuda")
    throw std::invalid_argument("unknown --device '" + cfg.device + "' (expected auto, cpu, cuda)");
  if (cfg.device == "cuda" && !deps::cuda_available())
    throw std::invalid_argument("--device cuda: no CUDA device is available to this build");

  RunEnv env;
  env.jobs = cfg.jobs > 0 ? cfg.jobs : std::max(1u, std::thread::hardware_concurrency());
  env.progress = cfg.progress < 0 ? progress_wanted() : cfg.progress == 1;
  env.cuda = cfg.device == "cuda" || (cfg.device == "auto" && deps::cuda_available());
  env.external = cfg.external;

  StagingDir staging(cfg.out);  // refuses a non-report --out before any work
  install_interrupt_handlers();
  const Cache cache(cfg.no_cache ? fs::path() : cfg.cache_dir.empty() ? Cache::default_dir(cfg.out) : cfg.cache_dir,
                    cfg.fresh);

  Outcome outcome;
  std::vector<Built> built;
  nlohmann::json results = nlohmann::json::object();
  nlohmann::json timings = nlohmann::json::object();
  for (const Stage* const& st : chosen) {
    throw_if_interrupted();
    const auto s0 = std::chrono::steady_clock::now();
    const nlohmann::json params = st->params(cfg.profile, env);
    bool cached = false;
    nlohmann::json result;
    try {
      const bool cacheable = !(params.contains("no_cache") && params["no_cache"].get<bool>());
      if (auto hit = cacheable ? cache.get(st->id, params) : std::nullopt) {
        result = std::move(*hit);
        cached = true;
      } else {
        if (env.progress)
          std::fprintf(stderr, "vla report: [%zu/%zu] %s\n", std::size_t(&st - chosen.data()) + 1, chosen.size(),
                       st->title.c_str());
        result = st->compute(params, env);
        if (cacheable) cache.put(st->id, params, result);
      }
      built.push_back(st->build(params, result));
    } catch (const deps::Unavailable& e) {
      built.push_back(unavailable(*st, e.what()));
      outcome.notes.push_back(st->id + ": " + e.what());
    }
    results[st->id] = result;
    timings[st->id] = {{"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count()},
                       {"cached", cached}};
  }

  Document doc;
  doc.title = "VLA numerical-stability report";
  doc.meta = {{"date", utc_now_iso8601()},
              {"command", cfg.command.empty() ? invoking_command() : cfg.command},
              {"profile", to_string(cfg.profile)},
              {"device", env.cuda ? "cuda" : "cpu"},
              {"machine", machine_info()},
              {"gpu", gpu_info(env.cuda)},
              {"versions", version_info()},
              {"stage_timings", timings}};
  SummaryInputs si{cfg, env, doc.meta, built, results};
  doc.sections.push_back(build_summary(si));
  for (auto& b : built) {
    // Each section says how to rerun it alone (its stages are cached, so this takes seconds after a full run).
    const std::string profile = cfg.profile == Profile::full ? "" : cfg.profile == Profile::quick ? " --quick" : " --tiny";
    b.section.blocks.push_back(para("Reproduce this section: {cmd}.", {{"cmd", Code{"vla report" + profile + " --sections " + b.section.id}}}));
    doc.sections.push_back(std::move(b.section));
  }

  // Plots: one gnuplot run per figure, into the staging folder.
  const fs::path figs = staging.path() / "figures";
  fs::create_directories(figs);
  std::map<std::string, std::string> svgs;
  std::size_t nfig = 0;
  for (const auto& s : doc.sections)
    for (const auto& b : s.blocks) nfig += std::holds_alternative<Figure>(b);
  if (gnuplot_available()) {
    Progress bar("plots", double(nfig), env.progress);
    for (const auto& s : doc.sections) {
      for (const auto& b : s.blocks) {
        if (const auto* f = std::get_if<Figure>(&b)) {
          render_plot(f->plot, figs.string());
          svgs[f->plot.id] = read_file(figs / (f->plot.id + ".svg"));
          bar.add(1);
        }
      }
    }
  } else {
    outcome.notes.push_back("gnuplot (with the svg and pngcairo terminals) not found: figures omitted");
    doc.sections.front().blocks.push_back(
        para("gnuplot was not found, so this report has no figures; install gnuplot-nox and rerun."));
  }

  validate(doc);
  write_file(staging.path() / "report.json", to_json(doc).dump(1) + "\n");
  write_file(staging.path() / "report.md", render_markdown(doc));
  write_file(staging.path() / "index.html", render_html(doc, svgs));
  throw_if_interrupted();
  outcome.replaced_previous = staging.replaces_previous();
  staging.commit();
  outcome.out = staging.dest();
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return outcome;
}

}  // namespace vla::report
