// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A real Prometheus server for tests and benchmarks: its TSDB is built before start with
// `promtool tsdb create-blocks-from openmetrics` from a file the test writes, and it listens on
// 127.0.0.1 on a free port with an empty scrape configuration. The server is stopped in every
// outcome: by the destructor, by an atexit handler for servers still running when the process
// exits, and by the kernel (PR_SET_PDEATHSIG) if the test process dies.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace wl::test {

// The full path of an executable on PATH, or "" if there is none.
std::string findExecutable(const std::string& name);
// A TCP port on 127.0.0.1 that nothing listens on right now.
int freeLoopbackPort();
// Runs argv[0] (a full path) with its output appended to `log`; returns its exit status.
int runTool(const std::vector<std::string>& argv, const std::filesystem::path& log);

// What the server's --web.config.file holds (basic auth users, TLS), and how to reach it then.
struct WebOptions {
  std::string webConfigYaml;  // empty: no --web.config.file
  bool https = false;
  std::string user, password;  // for the readiness check
  std::string caFile;          // for the readiness check over https
};

class PrometheusServer {
 public:
  // Builds the TSDB under `workDir` from `openMetrics` and starts the server; waits (at most
  // 30 s) until /-/ready answers. Throws std::runtime_error with the tool's output on failure.
  PrometheusServer(const std::filesystem::path& openMetrics, const std::filesystem::path& workDir,
                   WebOptions web = {});
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  // SIGTERM, then SIGKILL after 5 s; idempotent.
  void stop();
  int port() const { return port_; }
  std::string url() const {
    return (web_.https ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_);
  }

 private:
  void start(const std::filesystem::path& workDir);

  WebOptions web_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::filesystem::path log_;
};

}  // namespace wl::test
