// A kernel outside this repository reached through a process (external.hpp):
// started once per stream (command_candidate), or once per run and fed streams
// over a line protocol (server_candidate), for harnesses whose start-up costs
// seconds (a Python interpreter importing torch). Both write the stream to a
// temporary folder, let the kernel write its outputs there, and read them back.
#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <system_error>

#include "vla/gate/candidate_file.hpp"
#include "vla/gate/external.hpp"
#include "vla/gate/fuzz.hpp"
#include "vla/gate/spec_args.hpp"
#include "vla/io/stream_io.hpp"
#include "vla/io/version.hpp"

namespace vla::gate {

namespace fs = std::filesystem;

namespace {

// What the kernel made of one stream.
struct Outcome {
  enum Kind { done, skipped, failed } kind = failed;
  std::string message;  // skipped: why; failed: what went wrong
};
// Hands one stream (already written to `in`) to the kernel, which writes `out`.
using Invoke = std::function<Outcome(const fs::path& in, const fs::path& out, const std::string& options)>;

struct CommandResult {
  Outputs out;
  std::string skipped;  // outside the kernel's domain: why
  std::string error;    // any other failure
};

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string tail_of(const fs::path& file, std::size_t n) {
  std::ifstream f(file);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!all.empty() && (all.back() == '\n' || all.back() == ' ')) all.pop_back();
  return all.size() > n ? "..." + all.substr(all.size() - n) : all;
}

// The stream in a fresh temporary folder (inputs in the policy's input type, the
// options in the metadata as export_battery writes them), the kernel invoked, its
// outputs read back; the folder removed whatever happens.
CommandResult run_once(const Invoke& invoke, const Policy& policy, const Stream& s, const Options& opt) {
  std::string dir = (fs::temp_directory_path() / "vla-ext-XXXXXX").string();
  if (!::mkdtemp(dir.data())) throw std::runtime_error("cannot create a temporary folder under " + fs::temp_directory_path().string());
  const fs::path in = fs::path(dir) / "input.safetensors", out = fs::path(dir) / "output.safetensors";
  CommandResult r;
  try {
    io::Metadata m;
    m["tool"] = io::tool_version();
    m["spec.arguments"] = spec_arguments(opt);
    put_options(m, opt);
    io::save_stream(in, s, policy.input() == impl::Kind::fp32 ? io::DType::F32 : io::DType::BF16, m, false);
    const Outcome o = invoke(in, out, spec_arguments(opt));
    std::error_code ec;
    if (o.kind == Outcome::skipped) {
      r.skipped = o.message;
    } else if (o.kind == Outcome::failed) {
      r.error = o.message;
    } else if (!fs::exists(out, ec)) {
      r.error = "the kernel reported success but wrote no " + out.filename().string() + " at {output}";
    } else {
      r.out = load_candidate(out, s.dims).out;
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

// A candidate named "external" whose streams go through `invoke`. judge_in_domain
// asks outside() and then run() about the same stream: one invocation answers both
// (kept until run() takes it).
Candidate invoke_candidate(Invoke invoke, const Policy& policy, std::string description) {
  Candidate c;
  c.name = "external";
  c.policy = policy;
  c.role = Role::production;
  c.description = std::move(description);
  auto last = std::make_shared<std::pair<std::string, CommandResult>>();
  auto result = [invoke = std::move(invoke), policy, last](const Stream& s, const Options& opt) -> CommandResult& {
    const std::string key = case_hash("external", s, opt);
    if (last->first != key) *last = {key, run_once(invoke, policy, s, opt)};
    return last->second;
  };
  c.outside = [result](const Stream& s, const Options& opt) { return result(s, opt).skipped; };
  c.run = [result, last](const Stream& s, const Options& opt) {
    CommandResult r = std::move(result(s, opt));
    last->first.clear();
    if (!r.error.empty()) throw std::runtime_error(r.error);
    if (!r.skipped.empty()) throw std::runtime_error("the kernel skipped a stream it was asked to run: " + r.skipped);
    return std::move(r.out);
  };
  return c;
}

// The serving process: started on the first stream, fed one request line per
// stream, stopped (its input closed, then waited for) when the last copy of the
// candidate goes.
class Server {
 public:
  explicit Server(std::string cmd) : cmd_(std::move(cmd)) {}
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() { stop(); }

  Outcome ask(const fs::path& in, const fs::path& out, const std::string& options) {
    if (!started_) start();
    if (!to_ || !from_) return {Outcome::failed, "the server is no longer running" + status_note()};
    const std::string line = in.string() + '\t' + out.string() + '\t' + options + '\n';
    if (std::fputs(line.c_str(), to_) == EOF || std::fflush(to_) == EOF) return lost("could not send it the stream");
    std::string reply;
    for (int ch; (ch = std::fgetc(from_)) != EOF && ch != '\n';) reply += static_cast<char>(ch);
    if (reply.empty() && std::feof(from_)) return lost("it closed its output without answering");
    if (reply == "ok") return {Outcome::done, ""};
    if (reply.rfind("skip", 0) == 0) return {Outcome::skipped, reply.size() > 5 ? reply.substr(5) : "the server skipped it"};
    if (reply.rfind("error", 0) == 0) return {Outcome::failed, "the server reported: " + (reply.size() > 6 ? reply.substr(6) : "an error")};
    return {Outcome::failed, "the server answered '" + reply + "' (expected ok, skip REASON or error MESSAGE)"};
  }

 private:
  void start() {
    started_ = true;
    // A server that dies must not take vla with it through SIGPIPE: writes fail instead.
    std::signal(SIGPIPE, SIG_IGN);
    int down[2], up[2];
    if (::pipe(down) != 0 || ::pipe(up) != 0) throw std::runtime_error("cannot create pipes for the server");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("cannot start the server: fork failed");
    if (pid_ == 0) {  // the server: requests on its standard input, answers on its standard output, stderr shared
      ::dup2(down[0], 0);
      ::dup2(up[1], 1);
      ::close(down[0]), ::close(down[1]), ::close(up[0]), ::close(up[1]);
      ::execl("/bin/sh", "sh", "-c", cmd_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(down[0]);
    ::close(up[1]);
    to_ = ::fdopen(down[1], "w");
    from_ = ::fdopen(up[0], "r");
  }
  Outcome lost(const std::string& what) {
    stop();
    return {Outcome::failed, "the server was lost: " + what + status_note()};
  }
  std::string status_note() const {
    if (status_ < 0) return "";
    return WIFEXITED(status_) ? fmt::format(" (it exited {})", WEXITSTATUS(status_)) : fmt::format(" (signal {})", WTERMSIG(status_));
  }
  // Closing its input asks the server to finish; one that has not after 10 s gets
  // SIGTERM, and after 5 s more SIGKILL, so that vla never waits on it for ever.
  void stop() {
    if (to_) std::fclose(to_), to_ = nullptr;
    if (from_) std::fclose(from_), from_ = nullptr;
    if (pid_ <= 0) return;
    int st = 0;
    auto reaped = [&](int tenths) {
      for (int i = 0; i < tenths; ++i) {
        const pid_t r = ::waitpid(pid_, &st, WNOHANG);
        if (r == pid_ || (r < 0 && errno != EINTR)) return true;
        ::usleep(100000);
      }
      return false;
    };
    if (!reaped(100)) {
      ::kill(pid_, SIGTERM);
      if (!reaped(50)) {
        ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
      }
    }
    status_ = st;
    pid_ = -1;
  }
  std::string cmd_;
  bool started_ = false;
  pid_t pid_ = -1;
  int status_ = -1;
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
};

}  // namespace

Candidate command_candidate(const std::string& cmd, const Policy& policy) {
  if (cmd.find("{input}") == std::string::npos || cmd.find("{output}") == std::string::npos)
    throw std::invalid_argument("--external-cmd must name {input} and {output} (and may name {options})");
  Invoke invoke = [cmd](const fs::path& in, const fs::path& out, const std::string& options) -> Outcome {
    std::string line;
    for (std::size_t i = 0; i < cmd.size();) {
      auto take = [&](const char* key, const std::string& value) {
        const std::size_t n = std::char_traits<char>::length(key);
        if (cmd.compare(i, n, key) != 0) return false;
        line += value;
        i += n;
        return true;
      };
      if (take("{input}", quoted(in.string())) || take("{output}", quoted(out.string())) || take("{options}", options)) continue;
      line += cmd[i++];
    }
    const fs::path err = in.parent_path() / "stderr";
    // The command on lines of its own, so that a trailing comment cannot swallow the redirections.
    const int status = std::system(("(\n" + line + "\n) > /dev/null 2> " + quoted(err.string())).c_str());
    const int code = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    const std::string tail = tail_of(err, 400);
    if (code == kCommandSkip) return {Outcome::skipped, tail.empty() ? "the command skipped it (exit 77)" : tail};
    if (code != 0) return {Outcome::failed, fmt::format("the command exited {}{}", code, tail.empty() ? "" : ": " + tail)};
    return {Outcome::done, ""};
  };
  return invoke_candidate(std::move(invoke), policy, "the command: " + cmd);
}

Candidate server_candidate(const std::string& cmd, const Policy& policy) {
  if (cmd.empty()) throw std::invalid_argument("--external-serve needs a command");
  auto server = std::make_shared<Server>(cmd);
  Invoke invoke = [server](const fs::path& in, const fs::path& out, const std::string& options) { return server->ask(in, out, options); };
  return invoke_candidate(std::move(invoke), policy, "the server: " + cmd);
}

std::string command_replay(const std::string& replay, const std::string& flag, const std::string& cmd, const std::string& dtype) {
  const std::string with = " " + flag + " " + quoted(cmd) + " --dtype " + dtype;
  const std::string impl = " --impl external";
  std::string r = replay;
  if (const auto at = r.find(impl); at != std::string::npos) return r.replace(at, impl.size(), with);
  return r + with;
}

}  // namespace vla::gate
