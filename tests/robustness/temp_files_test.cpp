// SPDX-License-Identifier: GPL-3.0-or-later
// TempFile and removeStaleTempFiles (core/temp_files.h): names, removal, commit, and which stale
// files a later run removes: only those whose writer is gone (no such process, no lock held).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "loaders/core/temp_files.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& p, const std::string& text = "x") {
  std::ofstream(p, std::ios::binary) << text;
}

// The pid of a process that has exited (and been reaped): no process has it right now.
pid_t deadPid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

TEST(TempFile, IsAHiddenNameBesideTheTargetWithThePid) {
  test::TempDir dir;
  TempFile t(dir / "run.h5");
  EXPECT_EQ(t.path().parent_path(), dir.path());
  const std::string name = t.path().filename().string();
  const std::string prefix = ".run.h5.tmp-" + std::to_string(getpid()) + "-";
  EXPECT_EQ(name.rfind(prefix, 0), 0u) << name;
  EXPECT_FALSE(fs::exists(t.path()));  // nothing is created until the caller writes it
}

TEST(TempFile, RemovedUnlessCommitted) {
  test::TempDir dir;
  fs::path kept;
  {
    TempFile t(dir / "a.json");
    touch(t.path(), "partial");
    kept = t.path();
  }
  EXPECT_FALSE(fs::exists(kept));
  {
    TempFile t(dir / "a.json");
    touch(t.path(), "complete");
    t.lock();
    std::error_code ec;
    t.commit(ec);
    EXPECT_FALSE(ec) << ec.message();
  }
  std::ifstream in(dir / "a.json");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "complete");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(StaleTempFiles, OnlyFilesOfWritersThatAreGoneAreRemoved) {
  test::TempDir dir;
  const pid_t dead = deadPid();
  const fs::path stale = dir / (".run.h5.tmp-" + std::to_string(dead) + "-0");
  const fs::path staleCache = dir / (".run.h5.summary.json.tmp-" + std::to_string(dead) + "-12");
  const fs::path mine = dir / (".run.h5.tmp-" + std::to_string(getpid()) + "-0");
  const fs::path notOurs = dir / ".notes.tmp-abc-1";                             // not PID-N
  const fs::path visible = dir / ("run.h5.tmp-" + std::to_string(dead) + "-0");  // not hidden
  for (const fs::path& p : {stale, staleCache, mine, notOurs, visible})
    touch(p);

  // A live writer: a child process that exists (its pid is alive).
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  const fs::path live = dir / (".big.h5.tmp-" + std::to_string(child) + "-3");
  touch(live);

  // A writer on another host (its pid means nothing here) that holds the lock: a child locks it.
  const fs::path locked = dir / (".other.h5.tmp-" + std::to_string(dead) + "-7");
  touch(locked);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t holder = fork();
  if (holder == 0) {
    const int fd = open(locked.c_str(), O_RDWR);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    const char ok = fcntl(fd, F_SETLK, &fl) == 0 ? '1' : '0';
    if (write(ready[1], &ok, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');

  EXPECT_EQ(removeStaleTempFiles(dir.path()), 2u);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(staleCache));
  EXPECT_TRUE(fs::exists(mine));
  EXPECT_TRUE(fs::exists(notOurs));
  EXPECT_TRUE(fs::exists(visible));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(locked));

  kill(child, SIGKILL);
  kill(holder, SIGKILL);
  waitpid(child, nullptr, 0);
  waitpid(holder, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  // Both writers are gone now: a later run removes their files.
  EXPECT_EQ(removeStaleTempFiles(dir.path()), 2u);
  EXPECT_FALSE(fs::exists(live));
  EXPECT_FALSE(fs::exists(locked));
}

TEST(StaleTempFiles, AMissingFolderIsNotAnError) {
  EXPECT_EQ(removeStaleTempFiles("/nonexistent/wattline/folder"), 0u);
}

}  // namespace
}  // namespace wl
