// A kernel outside this repository reached through a process (external.hpp):
// started once per stream (command_candidate), or once per run and fed streams
// over a line protocol (server_candidate), for harnesses whose start-up costs
// seconds (a Python interpreter importing torch). Both write the stream to a
// temporary folder, let the kernel write its outputs there, and read them back.
#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
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
#include "interrupt_cleanup.hpp"

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
  const FolderGuard removed_if_interrupted(dir);
  CommandResult r;
  try {
    write_case_stream(in, s, opt, policy);
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

// A candidate named kExternalName whose streams go through `invoke`. judge_in_domain
// asks outside() and then run() about the same stream: one invocation answers both
// (kept until run() takes it).
Candidate invoke_candidate(Invoke invoke, const Policy& policy, std::string description) {
  Candidate c;
  c.name = kExternalName;
  c.policy = policy;
  c.role = Role::production;
  c.description = std::move(description);
  auto last = std::make_shared<std::pair<std::string, CommandResult>>();
  auto result = [invoke = std::move(invoke), policy, last](const Stream& s, const Options& opt) -> CommandResult& {
    const std::string key = case_hash(kExternalName, s, opt);
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
  Server(std::string cmd, double limit_s) : cmd_(std::move(cmd)), limit_s_(limit_s) {}
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() { stop(); }

  Outcome ask(const fs::path& in, const fs::path& out, const std::string& options) {
    if (!started_) start();
    if (!to_ || from_ < 0) return {Outcome::failed, "the server is no longer running" + status_note()};
    const std::string line = in.string() + '\t' + out.string() + '\t' + options + '\n';
    if (std::fputs(line.c_str(), to_) == EOF || std::fflush(to_) == EOF) return lost("could not send it the stream");
    std::string reply;
    switch (read_line(reply)) {
      case Read::line: break;
      case Read::closed: return lost("it closed its output without answering");
      case Read::timed_out:
        if (pid_ > 0) ::kill(-pid_, SIGKILL);  // a server that stopped answering gets no grace period
        return lost(fmt::format("no answer within --external-timeout {} s; it was killed", limit_s_));
    }
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
      ::setpgid(0, 0);  // its own process group, so that stopping it stops what it started
      ::dup2(down[0], 0);
      ::dup2(up[1], 1);
      ::close(down[0]), ::close(down[1]), ::close(up[0]), ::close(up[1]);
      ::execl("/bin/sh", "sh", "-c", cmd_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);  // as the child does: whichever runs first
    group_ = std::make_unique<GroupGuard>(pid_);
    ::close(down[0]);
    ::close(up[1]);
    to_ = ::fdopen(down[1], "w");
    from_ = up[0];
  }
  // One answer line from the server (raw reads: poll() sees what stdio would buffer).
  enum class Read { line, closed, timed_out };
  Read read_line(std::string& reply) {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      if (const auto nl = buf_.find('\n'); nl != std::string::npos) {
        reply = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return Read::line;
      }
      int wait_ms = -1;
      if (limit_s_ > 0) {
        const double left = limit_s_ - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (left <= 0) return Read::timed_out;
        wait_ms = static_cast<int>(std::ceil(left * 1000));
      }
      pollfd p{from_, POLLIN, 0};
      const int r = ::poll(&p, 1, wait_ms);
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) return Read::timed_out;
      char chunk[4096];
      const ssize_t n = ::read(from_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Read::closed;
      buf_.append(chunk, static_cast<std::size_t>(n));
    }
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
    if (from_ >= 0) ::close(from_), from_ = -1;
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
      ::kill(-pid_, SIGTERM);
      if (!reaped(50)) {
        ::kill(-pid_, SIGKILL);
        while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
      }
    }
    status_ = st;
    pid_ = -1;
    group_.reset();
  }
  std::string cmd_;
  double limit_s_ = 0;  // per answer; 0: none
  bool started_ = false;
  pid_t pid_ = -1;
  std::unique_ptr<GroupGuard> group_;  // killed if vla is interrupted
  int status_ = -1;
  std::FILE* to_ = nullptr;
  int from_ = -1;
  std::string buf_;  // read from the server, not yet a whole line
};

// `/bin/sh -c line` with standard output discarded and standard error to `err`,
// in a process group of its own that is killed when it outlives limit_s (> 0).
// Returns its exit code (128 + signal when killed by one), or -2 when timed out.
int run_shell(const std::string& line, const fs::path& err, double limit_s) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot start the command: fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_WRONLY), e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (devnull >= 0) ::dup2(devnull, 1);
    if (e >= 0) ::dup2(e, 2);
    ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first
  const GroupGuard killed_if_interrupted(pid);
  const auto t0 = std::chrono::steady_clock::now();
  int st = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &st, limit_s > 0 ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw std::runtime_error("lost the command's process");
    if (limit_s > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit_s) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      return -2;
    }
    if (limit_s > 0) ::usleep(2000);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

Candidate command_candidate(const std::string& cmd, const Policy& policy, double limit_s) {
  if (cmd.find("{input}") == std::string::npos || cmd.find("{output}") == std::string::npos)
    throw std::invalid_argument("--external-cmd must name {input} and {output} (and may name {options})");
  Invoke invoke = [cmd, limit_s](const fs::path& in, const fs::path& out, const std::string& options) -> Outcome {
    std::string line;
    for (std::size_t i = 0; i < cmd.size();) {
      auto take = [&](const char* key, const std::string& value) {
        const std::size_t n = std::char_traits<char>::length(key);
        if (cmd.compare(i, n, key) != 0) return false;
        line += value;
        i += n;
        return true;
      };
      if (take("{input}", shell_quoted(in.string())) || take("{output}", shell_quoted(out.string())) || take("{options}", options)) continue;
      line += cmd[i++];
    }
    const fs::path err = in.parent_path() / "stderr";
    const int code = run_shell(line, err, limit_s);
    const std::string tail = tail_of(err, 400);
    if (code == -2) return {Outcome::failed, fmt::format("the command ran past --external-timeout {} s and was killed", limit_s)};
    if (code == kCommandSkip) return {Outcome::skipped, tail.empty() ? "the command skipped it (exit 77)" : tail};
    if (code != 0) return {Outcome::failed, fmt::format("the command exited {}{}", code, tail.empty() ? "" : ": " + tail)};
    return {Outcome::done, ""};
  };
  return invoke_candidate(std::move(invoke), policy, "the command: " + cmd);
}

Candidate server_candidate(const std::string& cmd, const Policy& policy, double limit_s) {
  if (cmd.empty()) throw std::invalid_argument("--external-serve needs a command");
  auto server = std::make_shared<Server>(cmd, limit_s);
  Invoke invoke = [server](const fs::path& in, const fs::path& out, const std::string& options) { return server->ask(in, out, options); };
  return invoke_candidate(std::move(invoke), policy, "the server: " + cmd);
}

std::string command_replay(const std::string& replay, const std::string& flag, const std::string& cmd, const std::string& dtype) {
  const std::string with = " " + flag + " " + shell_quoted(cmd) + " --dtype " + dtype;
  const std::string impl = " --impl external";
  std::string r = replay;
  if (const auto at = r.find(impl); at != std::string::npos) return r.replace(at, impl.size(), with);
  return r + with;
}

}  // namespace vla::gate
