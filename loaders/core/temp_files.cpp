// SPDX-License-Identifier: GPL-3.0-or-later
// Temporary files, their removal on SIGINT/SIGTERM and the cleanup of stale ones (temp_files.h).
//
// The signal handler may only do async-signal-safe work, so the registry of live temporary files
// is a fixed array of path buffers with atomic states that the handler reads without locks, and
// the handler itself only unlinks, writes its message and re-raises the signal.
#include "loaders/core/temp_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>

namespace wl {
namespace {

constexpr int kSlots = 64;
constexpr size_t kPathBytes = 4096;

struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 a live temporary file
  char path[kPathBytes];
};

Slot g_slots[kSlots];
std::atomic<int> g_deferDepth{0};
std::atomic<int> g_pendingSignal{0};
char g_command[96] = "wattline";
bool g_tty = false;

static_assert(std::atomic<int>::is_always_lock_free);

int registerPath(const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(2);
      return i;
    }
  }
  return -1;  // more than kSlots at once: still removed by the destructor, not on a signal
}

void unregisterSlot(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0);
}

// Appends text to buf (async-signal-safe).
void append(char* buf, size_t cap, size_t& len, const char* text) {
  while (*text && len + 1 < cap)
    buf[len++] = *text++;
  buf[len] = '\0';
}

const char* signalName(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

[[noreturn]] void cleanUpAndDie(int sig) {
  int removed = 0;
  for (Slot& s : g_slots)
    if (s.state.load() == 2 && ::unlink(s.path) == 0) ++removed;
  char msg[256];
  size_t len = 0;
  msg[0] = '\0';
  if (g_tty) append(msg, sizeof msg, len, "\r\033[K");  // over a progress line
  append(msg, sizeof msg, len, g_command);
  append(msg, sizeof msg, len, ": interrupted (");
  append(msg, sizeof msg, len, signalName(sig));
  append(msg, sizeof msg, len, ")");
  if (removed > 0) {
    char digits[16];
    const auto r = std::to_chars(digits, digits + sizeof digits - 1, removed);
    *r.ptr = '\0';
    append(msg, sizeof msg, len, "; removed ");
    append(msg, sizeof msg, len, digits);
    append(msg, sizeof msg, len, removed == 1 ? " unfinished file" : " unfinished files");
  }
  append(msg, sizeof msg, len, "\n");
  ssize_t ignored = ::write(STDERR_FILENO, msg, len);
  (void)ignored;
  // End by the same signal (the parent sees how the process ended): default action, unblocked
  // (it is blocked while its handler runs).
  ::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);
}

void onSignal(int sig) {
  if (g_deferDepth.load() > 0) {
    g_pendingSignal.store(sig);
    return;
  }
  cleanUpAndDie(sig);
}

// "1234-5" -> 1234; 0 if the text is not PID-N.
pid_t pidOfSuffix(std::string_view s) {
  const size_t dash = s.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 >= s.size()) return 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != dash && (s[i] < '0' || s[i] > '9')) return 0;
  long pid = 0;
  const auto r = std::from_chars(s.data(), s.data() + dash, pid);
  if (r.ec != std::errc() || pid <= 0 || pid > 0x3fffffff) return 0;
  return static_cast<pid_t>(pid);
}

}  // namespace

TempFile::TempFile(const std::filesystem::path& target) : target_(target) {
  static std::atomic<uint64_t> counter{0};
  path_ = target.parent_path() /
          fmt::format(".{}.tmp-{}-{}", target.filename().string(), ::getpid(), counter++);
  slot_ = registerPath(path_.string());
}

TempFile::~TempFile() {
  if (!done_) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  release();
}

void TempFile::lock() {
  if (lockFd_ >= 0) return;
  lockFd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (lockFd_ < 0) return;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (::fcntl(lockFd_, F_SETLK, &fl) != 0) {
    ::close(lockFd_);
    lockFd_ = -1;
  }
}

void TempFile::commit(std::error_code& ec) {
  std::filesystem::rename(path_, target_, ec);
  if (!ec) release();
}

void TempFile::release() {
  done_ = true;
  unregisterSlot(slot_);
  slot_ = -1;
  if (lockFd_ >= 0) {
    ::close(lockFd_);
    lockFd_ = -1;
  }
}

size_t removeStaleTempFiles(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = folder.empty() ? fs::path(".") : folder;
  size_t removed = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 8 || name.front() != '.') continue;
    const size_t tmp = name.rfind(".tmp-");
    if (tmp == std::string::npos || tmp == 0) continue;
    const pid_t pid = pidOfSuffix(std::string_view(name).substr(tmp + 5));
    if (pid == 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // the writer may still run
    std::error_code fec;
    if (!it->is_regular_file(fec)) continue;
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    const bool locked = ::fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type != F_UNLCK;
    ::close(fd);
    if (locked) continue;  // a writer (perhaps on another host) holds it
    if (fs::remove(it->path(), fec)) ++removed;
  }
  return removed;
}

void installInterruptCleanup(std::string_view command) {
  static std::atomic<bool> installed{false};
  const std::string prefix = fmt::format("wattline {}", command);
  std::strncpy(g_command, prefix.c_str(), sizeof g_command - 1);
  g_tty = ::isatty(STDERR_FILENO) == 1;
  if (installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

DeferInterrupts::DeferInterrupts() {
  g_deferDepth.fetch_add(1);
}

DeferInterrupts::~DeferInterrupts() {
  if (g_deferDepth.fetch_sub(1) == 1) {
    const int sig = g_pendingSignal.exchange(0);
    if (sig != 0) cleanUpAndDie(sig);
  }
}

}  // namespace wl
