// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Temporary files that never outlive the work that writes them.
//
// Wattline writes every output (run files, study summary caches) to a temporary file beside it and
// renames it into place when complete. TempFile names that file ".NAME.tmp-PID-N" and registers it
// so that:
// - a SIGINT or SIGTERM of a command-line run removes it before the process exits
//   (installInterruptCleanup(), called once by the CLI);
// - a later run in the same folder removes it if its writer was killed (SIGKILL, a crash, a power
//   cut): removeStaleTempFiles() deletes only files whose writer process is gone, i.e. whose PID
//   is no running process and on which no process holds the lock TempFile::lock() takes (the lock
//   also protects the files of writers on other hosts of a shared file system).

#include <filesystem>
#include <string_view>

namespace wl {

class TempFile {
 public:
  // Picks the name beside `target` and registers it for removal on an interrupt. Creates nothing.
  explicit TempFile(const std::filesystem::path& target);
  // Removes the file unless it was committed.
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Once the file exists: holds a lock on it until commit() or destruction, so that other
  // processes' removeStaleTempFiles() leave it alone. Best effort (no error if it cannot).
  void lock();
  // Renames the file onto the target (atomically replacing it); afterwards nothing is removed.
  // Throws nothing; ec says why the rename failed.
  void commit(std::error_code& ec);
  // Forgets the file without renaming it (the caller moved or removed it).
  void release();

 private:
  std::filesystem::path path_, target_;
  int slot_ = -1;
  int lockFd_ = -1;
  bool done_ = false;
};

// Removes the temporary files (".*.tmp-PID-N") in `folder` whose writer is gone; returns how many.
// Never throws; files it cannot judge or remove are left alone.
size_t removeStaleTempFiles(const std::filesystem::path& folder);

// For a command-line run: on SIGINT or SIGTERM, removes every registered temporary file, prints
// "wattline COMMAND: interrupted (SIGTERM); N unfinished files removed" on stderr and ends the
// process by the same signal (exit status 128 + signal in a shell). Installs once; `command`
// names the subcommand in the message.
void installInterruptCleanup(std::string_view command);

// While one lives, an interrupt waits: the signal is remembered and acted on when the last
// section ends (for short writes whose temporary file the program cannot name, such as Qt's
// QSaveFile in `wattline export`).
class DeferInterrupts {
 public:
  DeferInterrupts();
  ~DeferInterrupts();
  DeferInterrupts(const DeferInterrupts&) = delete;
  DeferInterrupts& operator=(const DeferInterrupts&) = delete;
};

}  // namespace wl
