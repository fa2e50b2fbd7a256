// What an interrupted vla leaves of a kernel outside this repository: nothing.
// The kernel runs in a process group of its own (so that a timeout stops all it
// started), which the terminal's Ctrl-C does not reach, and its stream sits in a
// temporary folder. While either lives, SIGINT, SIGTERM and SIGHUP kill the group
// and empty and remove the folder, then vla ends as the signal says. The handler
// is installed only where the signal's disposition is the default (a command with
// its own handler, as vla report's, keeps it; so does nohup's SIG_IGN).
#pragma once

#include <sys/types.h>

#include <string>

namespace vla::gate {

// Each guard takes one of a few slots for its lifetime (beyond them it guards
// nothing: more external kernels than slots never run at once here).
class GroupGuard {
 public:
  explicit GroupGuard(pid_t pgid);
  ~GroupGuard();
  GroupGuard(const GroupGuard&) = delete;
  GroupGuard& operator=(const GroupGuard&) = delete;

 private:
  int slot_;
};

class FolderGuard {
 public:
  explicit FolderGuard(const std::string& dir);
  ~FolderGuard();
  FolderGuard(const FolderGuard&) = delete;
  FolderGuard& operator=(const FolderGuard&) = delete;

 private:
  int slot_;
};

}  // namespace vla::gate
