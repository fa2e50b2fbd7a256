// Runs the checks of the ledger in the paper's order.
#include "vla/claims/ledger.hpp"

#include <chrono>
#include <exception>
#include <set>
#include <stdexcept>

#include "vla/io/version.hpp"

namespace vla::claims {

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::holds: return "holds";
    case Verdict::refuted: return "refuted";
    case Verdict::conditional: return "conditional";
    case Verdict::inconclusive: return "inconclusive";
  }
  return "?";
}

Verdict parse_verdict(std::string_view s) {
  for (Verdict v : {Verdict::holds, Verdict::refuted, Verdict::conditional, Verdict::inconclusive})
    if (s == to_string(v)) return v;
  throw std::invalid_argument("unknown verdict '" + std::string(s) + "' (expected holds, refuted, conditional, inconclusive)");
}

std::string RunContext::root() const { return repo_root.empty() ? std::string(VLA_SOURCE_DIR) : repo_root; }

std::string to_string(Budget b) { return b == Budget::quick ? "quick" : "full"; }

const ClaimDef& find_claim(const std::string& id) {
  for (const auto& c : all_claims())
    if (c.id == id) return c;
  std::string known;
  for (const auto& c : all_claims()) known += (known.empty() ? "" : ", ") + c.id;
  throw std::invalid_argument("unknown claim id '" + id + "' (known: " + known + ")");
}

std::string reproduce_command(const std::string& id, Budget b) {
  return std::string("vla claims") + (b == Budget::quick ? " --quick" : "") + " --only " + id;
}

Ledger run_ledger(const LedgerOptions& opt) {
  std::set<std::string> wanted;
  for (const auto& id : opt.only) wanted.insert(find_claim(id).id);  // validates every id first
  RunContext ctx = opt.context;
  ctx.budget = opt.budget;
  Ledger l;
  l.budget = opt.budget;
  l.tool = io::tool_version();
  const auto& all = all_claims();
  std::size_t n = 0;
  for (const auto& c : all) n += wanted.empty() || wanted.count(c.id);
  std::size_t i = 0;
  for (const auto& c : all) {
    if (!wanted.empty() && !wanted.count(c.id)) continue;
    ++i;
    ctx.say("[" + std::to_string(i) + "/" + std::to_string(n) + "] " + c.id + " ...");
    ClaimResult r;
    r.id = c.id;
    r.section = c.section;
    r.statement = c.statement;
    r.command = reproduce_command(c.id, opt.budget);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      c.run(ctx, r);
    } catch (const std::exception& e) {
      // A check that cannot run settles nothing; the ledger says so rather than stopping.
      r.verdict = Verdict::inconclusive;
      r.error = e.what();
      r.summary = "the check failed to run: " + r.error;
    }
    r.runtime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ctx.say("[" + std::to_string(i) + "/" + std::to_string(n) + "] " + c.id + ": " + to_string(r.verdict) + " (" +
            std::to_string(r.runtime_s).substr(0, 5) + " s)");
    l.claims.push_back(std::move(r));
  }
  return l;
}

}  // namespace vla::claims
