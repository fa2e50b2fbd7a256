// vla: the command-line entry point of vla-verify.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "registry.hpp"
#include "vla/core/refused.hpp"

namespace vla::cli {
std::vector<Command>& registry() {
  static std::vector<Command> r;
  return r;
}
}  // namespace vla::cli

int main(int argc, char** argv) {
  using namespace vla::cli;
  CLI::App app{"vla-verify: numerical verification of Variational Linear Attention kernels"};
  app.require_subcommand(1);
  auto& cmds = registry();
  std::sort(cmds.begin(), cmds.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  std::function<int()> action;
  for (auto& c : cmds) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    auto act = c.setup(*sub);
    sub->callback([&action, act] { action = act; });
  }
  // CLI11 says only "A subcommand is required" for a misspelt command: name it, and the commands there are.
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(cmds.begin(), cmds.end(), [&](const Command& c) { return c.name == argv[1]; })) {
    std::string names;
    for (const auto& c : cmds) names += (names.empty() ? "" : ", ") + c.name;
    std::cerr << "vla: error: unknown command '" << argv[1] << "' (the commands: " << names << "; vla --help)\n";
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }
  try {
    return action ? action() : kExitBadInput;
  } catch (const InputError& e) {
    std::cerr << "vla: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << "vla: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const vla::core::StreamRefused& e) {  // a stream the chosen implementation cannot run (nothing written)
    std::cerr << "vla: refused: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "vla: internal error: " << e.what() << "\n";
    return 3;
  }
}
