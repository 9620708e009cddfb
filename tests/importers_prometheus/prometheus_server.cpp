// SPDX-License-Identifier: GPL-3.0-or-later
#include "prometheus_server.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace wl::test {
namespace {

std::mutex gMutex;
std::set<pid_t> gRunning;

void killRunning() {
  std::lock_guard lock(gMutex);
  for (pid_t pid : gRunning) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  gRunning.clear();
}

void registerServer(pid_t pid) {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(killRunning); });
  std::lock_guard lock(gMutex);
  gRunning.insert(pid);
}

void unregisterServer(pid_t pid) {
  std::lock_guard lock(gMutex);
  gRunning.erase(pid);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > 2000 ? s.substr(s.size() - 2000) : s;
}

// Forks and execs `argv` with stdout and stderr to `log`; the child dies with this process.
pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

bool ready(const std::string& url, const WebOptions& web) {
  CURL* c = curl_easy_init();
  if (!c) return false;
  curl_easy_setopt(c, CURLOPT_URL, (url + "/-/ready").c_str());
  if (!web.user.empty()) {
    curl_easy_setopt(c, CURLOPT_USERNAME, web.user.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, web.password.c_str());
  }
  if (!web.caFile.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, web.caFile.c_str());
  curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 1000L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  long status = 0;
  const bool ok = curl_easy_perform(c) == CURLE_OK &&
                  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK &&
                  status == 200;
  curl_easy_cleanup(c);
  return ok;
}

}  // namespace

std::string findExecutable(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::filesystem::path candidate =
        std::filesystem::path(dirs.substr(start, end - start)) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return {};
}

int runTool(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  const pid_t pid = spawn(argv, log);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("bind to 127.0.0.1 failed");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

PrometheusServer::PrometheusServer(const std::filesystem::path& openMetrics,
                                   const std::filesystem::path& workDir, WebOptions web)
    : web_(std::move(web)) {
  const std::string promtool = findExecutable("promtool");
  if (promtool.empty()) throw std::runtime_error("promtool is not installed");
  std::filesystem::create_directories(workDir / "data");
  log_ = workDir / "prometheus.log";
  const pid_t tool = spawn({promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet",
                            openMetrics.string(), (workDir / "data").string()},
                           log_);
  int status = 0;
  ::waitpid(tool, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("promtool tsdb create-blocks-from failed: " + slurp(log_));
  std::ofstream(workDir / "prometheus.yml")
      << "global:\n  scrape_interval: 1h\nscrape_configs: []\n";
  // A port found free can be taken before the server binds it: try a few.
  for (int attempt = 0; attempt < 3 && pid_ < 0; ++attempt) {
    try {
      start(workDir);
    } catch (const std::runtime_error&) {
      if (attempt == 2) throw;
    }
  }
}

void PrometheusServer::start(const std::filesystem::path& workDir) {
  const std::string prometheus = findExecutable("prometheus");
  if (prometheus.empty()) throw std::runtime_error("prometheus is not installed");
  port_ = freeLoopbackPort();
  std::vector<std::string> argv = {prometheus,
                                   "--config.file=" + (workDir / "prometheus.yml").string(),
                                   "--storage.tsdb.path=" + (workDir / "data").string(),
                                   "--storage.tsdb.retention.time=100y",
                                   "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                   "--log.level=warn"};
  if (!web_.webConfigYaml.empty()) {
    std::ofstream(workDir / "web.yml") << web_.webConfigYaml;
    argv.push_back("--web.config.file=" + (workDir / "web.yml").string());
  }
  const pid_t pid = spawn(argv, log_);
  registerServer(pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      unregisterServer(pid);
      throw std::runtime_error("prometheus exited at start: " + slurp(log_));
    }
    if (ready(url(), web_)) {
      pid_ = pid;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  unregisterServer(pid);
  throw std::runtime_error("prometheus was not ready within 30 s: " + slurp(log_));
}

PrometheusServer::~PrometheusServer() {
  stop();
}

void PrometheusServer::stop() {
  if (pid_ < 0) return;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool exited = false;
  while (!exited && std::chrono::steady_clock::now() < deadline) {
    exited = ::waitpid(pid_, nullptr, WNOHANG) == pid_;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!exited) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  unregisterServer(pid_);
  pid_ = -1;
}

}  // namespace wl::test
