// SPDX-License-Identifier: GPL-3.0-or-later
// SIGTERM / SIGINT during `wattline simulate` and `wattline import` leave nothing behind (the
// unfinished run is removed) and say so; a temporary file left by a killed writer (SIGKILL) is
// removed by the next run in that folder, and one of a writer that still runs is not. The commands
// run as child processes of the built binary, as a user's shell or a batch scheduler runs them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Child {
  pid_t pid = -1;
  fs::path err;
};

Child start(const std::vector<std::string>& args, const fs::path& errFile) {
  Child c{-1, errFile};
  c.pid = fork();
  if (c.pid == 0) {
    const int err = open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(err, 2);
    unsetenv("DISPLAY");
    unsetenv("QT_QPA_PLATFORM");
    std::vector<char*> argv{const_cast<char*>(WATTLINE_BIN)};
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(WATTLINE_BIN, argv.data());
    _exit(127);
  }
  return c;
}

std::vector<std::string> names(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    out.push_back(e.path().filename().string());
  return out;
}

bool hasTemp(const fs::path& dir) {
  for (const std::string& n : names(dir))
    if (n.find(".tmp-") != std::string::npos) return true;
  return false;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits until the child has its temporary run file in `dir` (true), or has exited (false).
bool waitForTemp(const Child& c, const fs::path& dir, int& status, bool& exited) {
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (hasTemp(dir)) return true;
    if (waitpid(c.pid, &status, WNOHANG) == c.pid) {
      exited = true;
      return false;
    }
    std::this_thread::sleep_for(2ms);
  }
  return false;
}

// How a command interrupted while it wrote its run ended.
struct Interrupted {
  bool caught = false;  // signalled while its temporary run file was in the folder
  int status = 0;
  std::string err;
};

// Runs command(size) for size = first, 2 first, ... up to last until a run is caught while its
// temporary run file exists in `out` (the output half written), and sends it `sig` then. A run
// that finishes before it can be caught is removed and the next, larger one tried.
Interrupted interruptWhileWriting(const std::function<std::vector<std::string>(int)>& command,
                                  int first, int last, const fs::path& out, const fs::path& err,
                                  int sig) {
  for (int size = first; size <= last; size *= 2) {
    const Child c = start(command(size), err);
    Interrupted r;
    bool exited = false;
    if (waitForTemp(c, out, r.status, exited)) {
      r.caught = hasTemp(out);
      kill(c.pid, sig);
      waitpid(c.pid, &r.status, 0);
      if (!(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)) {
        r.err = slurp(err);
        return r;
      }
    } else if (!exited) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &r.status, 0);
    } else if (!(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)) {
      r.err = slurp(err);  // failed before writing: say why
      return r;
    }
    fs::remove_all(out);  // finished before the signal: try a larger one
    fs::create_directory(out);
  }
  return {};
}

// The simulator runs its engine before it opens the run file (it needs the end time), then
// writes the run to a temporary file beside the output. SIGTERM once that file exists (the run is
// half written): the process ends by SIGTERM (a shell reports 143), says it removed the
// unfinished file, and the folder is empty. If the writing finished before the signal could be
// sent, the run is made longer (more kernels to write) and tried again.
TEST(Interrupt, SigtermWhileSimulateWritesItsRunRemovesTheHalfWrittenFile) {
  test::TempDir dir;
  const fs::path out = dir / "runs";
  fs::create_directory(out);
  const Interrupted r = interruptWhileWriting(
      [&](int seconds) {
        std::vector<std::string> args{"simulate", "-o", (out / "long.h5").string()};
        std::istringstream more(
            "--model TinyLlama-1.1B --gpus-per-node 4 --tp 2 --iterations 100000 --trace-ranks "
            "all --quiet --duration " +
            std::to_string(seconds));
        for (std::string w; more >> w;)
          args.push_back(w);
        return args;
      },
      20, 640, out, dir / "err.txt", SIGTERM);
  ASSERT_TRUE(r.caught) << "the simulation always finished before it could be interrupted: "
                        << r.err;
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "exit status " << r.status << ": " << r.err;
  EXPECT_EQ(WTERMSIG(r.status), SIGTERM);  // a shell reports exit status 143
  EXPECT_EQ(r.err, "wattline simulate: interrupted (SIGTERM); removed 1 unfinished file\n");
  EXPECT_TRUE(names(out).empty()) << names(out).front();
}

// Whether a process has a handler for `sig` (Linux: the SigCgt mask of /proc/PID/status).
bool catchesSignal(pid_t pid, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("SigCgt:", 0) == 0)
      return ((std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1u) != 0;
  return false;
}

// Before the run file exists (the engine is still running; its scratch file is unlinked when
// created), SIGTERM leaves nothing either, and there is nothing to remove. The signal goes once
// the process has its handler (a fixed wait was too short for a sanitizer build under load: the
// default action killed it without a word).
TEST(Interrupt, SigtermBeforeSimulateOpensItsRunLeavesNothing) {
  test::TempDir dir;
  const fs::path out = dir / "runs";
  fs::create_directory(out);
  const Child c = start({"simulate", "-o", (out / "long.h5").string(), "--model", "TinyLlama-1.1B",
                         "--gpus-per-node", "4", "--tp", "2", "--duration", "3600", "--quiet"},
                        dir / "err.txt");
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!catchesSignal(c.pid, SIGTERM) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(catchesSignal(c.pid, SIGTERM)) << "no SIGTERM handler after 60 s";
  // Usually before the run's temporary file exists; on a loaded machine it may already be there
  // (CI's -j2 run once saw it): either way nothing may be left.
  kill(c.pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(c.pid, &status, 0), c.pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status << ": " << slurp(c.err);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(slurp(c.err), "wattline simulate: interrupted (SIGTERM)\n");
  EXPECT_TRUE(names(out).empty()) << names(out).front();
}

// A telemetry CSV big enough that writing its run takes a while: GPUs x rows samples.
void writeBigCsv(const fs::path& p, int gpus, int rows) {
  std::ofstream f(p);
  f << "timestamp, index, power.draw [W], temperature.gpu, clocks.sm [MHz], "
       "utilization.gpu [%]\n";
  for (int r = 0; r < rows; ++r) {
    const int ms = r * 50;
    char ts[64];
    std::snprintf(ts, sizeof ts, "2025/09/24 %02d:%02d:%02d.%03d", 3 + ms / 3600000,
                  ms / 60000 % 60, ms / 1000 % 60, ms % 1000);
    for (int g = 0; g < gpus; ++g)
      f << ts << ", " << g << ", " << 300 + (r * 7 + g) % 200 << ".5 W, " << 40 + r % 30
        << ", 1980 MHz, " << (r % 10) * 10 << " %\n";
  }
}

TEST(Interrupt, SigintDuringImportRemovesTheUnfinishedRun) {
  test::TempDir dir;
  const fs::path out = dir / "runs";
  fs::create_directory(out);
  // The temporary run exists only while the run is written (after reading): grow the input until
  // the writing is slow enough to be caught.
  const Interrupted r = interruptWhileWriting(
      [&](int rows) {
        writeBigCsv(dir / "smi.csv", 8, rows);
        return std::vector<std::string>{"import", (dir / "smi.csv").string(), "-o",
                                        (out / "big.h5").string()};
      },
      20000, 640000, out, dir / "err.txt", SIGINT);
  ASSERT_TRUE(r.caught) << "the import always finished before it could be interrupted: " << r.err;
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "exit status " << r.status << ": " << r.err;
  EXPECT_EQ(WTERMSIG(r.status), SIGINT);
  EXPECT_NE(r.err.find("wattline import: interrupted (SIGINT); removed 1 unfinished file\n"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(names(out).empty()) << names(out).front();
}

// The pid of a process that has exited and been reaped.
pid_t deadPid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

TEST(Interrupt, AKilledWritersTemporaryFileIsRemovedByTheNextRunInThatFolder) {
  test::TempDir dir;
  // A writer killed with SIGKILL leaves its temporary file: make one as the writer names it.
  const fs::path stale = dir / (".old.h5.tmp-" + std::to_string(deadPid()) + "-0");
  std::ofstream(stale) << "half a run";
  // One of a writer that still runs (this test process) stays.
  const fs::path live = dir / (".busy.h5.tmp-" + std::to_string(getpid()) + "-0");
  std::ofstream(live) << "being written";
  const fs::path csv = dir / "smi.csv";
  writeBigCsv(csv, 1, 10);
  const auto r = test::runWattline({"import", csv.string(), "-o", (dir / "new.h5").string()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(dir / "new.h5"));
}

}  // namespace
}  // namespace wl
