// vla claims: runs the claims ledger (proofs_check/) and writes its JSON
// (docs/CLAIMS_SCHEMA.md) and Markdown page.
//
// Order of work: options and output paths first (a refused overwrite or an
// unknown claim id costs nothing), then the checks, then the two files, each
// written to a temporary file and renamed into place. If the second write
// fails, a first file this run created is removed, so no half result is left.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "output_path.hpp"
#include "registry.hpp"
#include "vla/claims/ledger.hpp"

namespace vla::cli {
namespace {

namespace fs = std::filesystem;

struct ClaimsArgs {
  bool quick = false, force = false, list = false;
  std::string json = "claims.json", md = "claims.md", only;
};

std::vector<std::string> split_ids(const std::string& s) {
  std::vector<std::string> ids;
  std::stringstream ss(s);
  std::string id;
  while (std::getline(ss, id, ',')) {
    if (id.empty()) throw InputError("--only: empty claim id in '" + s + "'");
    ids.push_back(id);
  }
  return ids;
}

int run(const ClaimsArgs& a) {
  if (a.list) {
    for (const auto& c : claims::all_claims()) std::cout << c.id << "\t[" << c.section << "]\t" << c.statement << "\n";
    return kExitOk;
  }
  claims::LedgerOptions opt;
  opt.budget = a.quick ? claims::Budget::quick : claims::Budget::full;
  if (!a.only.empty()) {
    opt.only = split_ids(a.only);
    for (const auto& id : opt.only) (void)claims::find_claim(id);  // unknown id: exit 2 before any work
  }
  OutputFiles files(a.force);
  files.output("--json", a.json);
  files.output("--md", a.md);
  files.check();
  opt.context.progress = [](const std::string& line) { std::cerr << "vla claims: " << line << std::endl; };

  const claims::Ledger ledger = claims::run_ledger(opt);
  files.set("--json", claims::to_json(ledger).dump(2) + "\n");
  files.set("--md", claims::to_markdown(ledger));
  files.write();
  bool errors = false;
  for (const auto& r : ledger.claims) {
    std::cout << r.id << ": " << claims::to_string(r.verdict) << "\n";
    errors = errors || !r.error.empty();
  }
  std::cerr << "vla claims: wrote " << a.json << " and " << a.md << "\n";
  return errors ? kExitFail : kExitOk;  // a check that could not run is a failure of the tool, not a finding
}

const Register reg({"claims", "Check every claim of the paper: verdicts, evidence, counterexamples (docs/CLAIMS_SCHEMA.md)",
                    [](CLI::App& sub) -> std::function<int()> {
                      auto a = std::make_shared<ClaimsArgs>();
                      sub.add_flag("--quick", a->quick, "CI-sized run (under 3 minutes on 2 cores)");
                      sub.add_option("--json", a->json, "where to write the ledger as JSON")->capture_default_str();
                      sub.add_option("--md", a->md, "where to write the ledger as Markdown")->capture_default_str();
                      sub.add_option("--only", a->only, "comma-separated claim ids to run (default: all)");
                      sub.add_flag("--force", a->force, "replace existing output files");
                      sub.add_flag("--list", a->list, "print the claim ids and statements, run nothing");
                      return [a] { return run(*a); };
                    }});

}  // namespace
}  // namespace vla::cli
