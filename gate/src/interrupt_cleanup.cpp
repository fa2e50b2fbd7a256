#include "interrupt_cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace vla::gate {

namespace {

constexpr int kSlots = 16;
constexpr std::size_t kPath = 4096;

// Lock-free atomics only: the handler reads them. A folder slot: 0 free, 1 being
// filled, 2 live.
std::atomic<pid_t> g_groups[kSlots];
std::atomic<int> g_folder_state[kSlots];
char g_folders[kSlots][kPath];

// Empties and removes one folder with async-signal-safe calls only (open,
// getdents64, unlinkat, close, rmdir): the kernel's files have any names.
void remove_folder(const char* dir) {
  const int fd = ::open(dir, O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    alignas(8) char buf[4096];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
        unsigned short reclen;
        std::memcpy(&reclen, buf + off + 16, sizeof reclen);
        const char* name = buf + off + 19;
        if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) ::unlinkat(fd, name, 0);
        off += reclen;
      }
    }
    ::close(fd);
  }
  ::rmdir(dir);
}

extern "C" void on_ending_signal(int sig) {
  for (auto& g : g_groups)
    if (const pid_t p = g.load(); p > 0) ::kill(-p, SIGKILL);
  for (int i = 0; i < kSlots; ++i)
    if (g_folder_state[i].load() == 2) remove_folder(g_folders[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
      struct sigaction sa {};
      sa.sa_handler = on_ending_signal;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

}  // namespace

GroupGuard::GroupGuard(pid_t pgid) : slot_(-1) {
  static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);
  install_once();
  for (int i = 0; i < kSlots; ++i) {
    pid_t free = 0;
    if (g_groups[i].compare_exchange_strong(free, pgid)) {
      slot_ = i;
      return;
    }
  }
}
GroupGuard::~GroupGuard() {
  if (slot_ >= 0) g_groups[slot_].store(0);
}

FolderGuard::FolderGuard(const std::string& dir) : slot_(-1) {
  install_once();
  if (dir.size() >= kPath) return;
  for (int i = 0; i < kSlots; ++i) {
    int free = 0;
    if (g_folder_state[i].compare_exchange_strong(free, 1)) {
      std::memcpy(g_folders[i], dir.c_str(), dir.size() + 1);
      g_folder_state[i].store(2);
      slot_ = i;
      return;
    }
  }
}
FolderGuard::~FolderGuard() {
  if (slot_ >= 0) g_folder_state[slot_].store(0);
}

}  // namespace vla::gate
