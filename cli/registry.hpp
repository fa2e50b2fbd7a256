// Subcommands register themselves here (one file per subcommand, cmd_*.cpp), so
// that adding a command touches no shared file.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace vla::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;        // pass / success
inline constexpr int kExitFail = 1;      // a check ran and failed
inline constexpr int kExitBadInput = 2;  // bad input, bad option, malformed file

// Thrown for any problem with what the user gave us; main() prints it and exits 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A numeric option's lower bound, checked by CLI11 with a message a person can read
// (CLI11's own range validators print the type's whole range).
inline CLI::Validator at_least(long min) {
  return CLI::Validator(
      [min](std::string& v) -> std::string {
        try {
          std::size_t n = 0;
          const double x = std::stod(v, &n);
          if (n == v.size() && x >= static_cast<double>(min)) return {};
        } catch (const std::exception&) {
        }
        return "must be a number >= " + std::to_string(min) + " (got '" + v + "')";
      },
      ">=" + std::to_string(min));
}

// A path option given with an empty value: without this it would read as "not given" (an output silently not
// written, or a required one failing only after the work).
inline CLI::Validator a_path() {
  return CLI::Validator([](std::string& v) -> std::string { return v.empty() ? "needs a path (got '')" : ""; }, "PATH");
}

struct Command {
  std::string name;
  std::string description;
  // Adds the subcommand's options to `sub` and returns the action to run after parsing.
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Command>& registry();

struct Register {
  explicit Register(Command c) { registry().push_back(std::move(c)); }
};

}  // namespace vla::cli
