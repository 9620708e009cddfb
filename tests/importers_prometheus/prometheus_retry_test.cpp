// SPDX-License-Identifier: GPL-3.0-or-later
// Retries and missing windows. A real prometheus does not answer 503 or 429 on demand, so these
// tests talk to a minimal HTTP server on 127.0.0.1 that answers the two API calls with canned
// replies and fails the queries the test chooses.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "loaders/core/error.h"
#include "loaders/import/prometheus/prometheus_import.h"

namespace wl::import::prom {
namespace {

constexpr int64_t kT0 = 1767225600;

// Answers each request with handler(path, body) -> {status, body}; one request per connection.
class CannedServer {
 public:
  using Handler =
      std::function<std::pair<int, std::string>(const std::string&, const std::string&)>;
  explicit CannedServer(Handler h) : handler_(std::move(h)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("cannot listen on 127.0.0.1");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~CannedServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::string req;
      char buf[4096];
      size_t need = std::string::npos;
      while (need == std::string::npos || req.size() < need) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        req.append(buf, static_cast<size_t>(n));
        const size_t end = req.find("\r\n\r\n");
        if (need == std::string::npos && end != std::string::npos) {
          const size_t cl = req.find("Content-Length: ");
          need = end + 4 + (cl < end ? std::stoul(req.substr(cl + 16)) : 0);
        }
      }
      const size_t sp = req.find(' ');
      const std::string path = req.substr(sp + 1, req.find(' ', sp + 1) - sp - 1);
      const auto [status, body] = handler_(path, req.substr(req.find("\r\n\r\n") + 4));
      const std::string reply = fmt::format(
          "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nRetry-After: 0\r\nContent-Length: "
          "{}\r\nConnection: close\r\n\r\n{}",
          status, body.size(), body);
      ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }

  Handler handler_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

const std::string kSeries =
    R"({"status":"success","data":[{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0","Hostname":"n1"}]})";

// The samples of the window ending at `time` (seconds): one per second in (time-30, time].
std::string matrix(int64_t time) {
  std::string values;
  for (int64_t t = time - 29; t <= time; ++t)
    values += fmt::format("{}[{},\"{}\"]", values.empty() ? "" : ",", t, 100 + (t - kT0));
  return fmt::format(
      R"({{"status":"success","data":{{"resultType":"matrix","result":[{{"metric":{{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0","Hostname":"n1"}},"values":[{}]}}]}}}})",
      values);
}

int64_t timeOf(const std::string& body) {
  const size_t p = body.find("time=");
  return std::stoll(body.substr(p + 5));
}

Source sourceFor(const CannedServer& s) {
  Source src;
  src.url = s.url();
  // 30 samples a query: windows (kT0, kT0+30] and (kT0+30, kT0+60].
  src.start_ns = kT0 * 1'000'000'000;
  src.end_ns = (kT0 + 60) * 1'000'000'000;
  src.maxSamplesPerQuery = 30;
  src.backoffS = 0.01;
  src.concurrency = 1;
  return src;
}

TEST(PrometheusRetry, RetriesServerErrorsThenReadsEverySample) {
  std::atomic<int> queries{0};
  CannedServer server([&](const std::string& path, const std::string& body) {
    if (path == "/api/v1/series") return std::pair{200, kSeries};
    if (++queries <= 3) return std::pair{queries % 2 ? 503 : 429, std::string("busy")};
    return std::pair{200, matrix(timeOf(body))};
  });
  FetchStats stats;
  const ImportedData d = fetch(sourceFor(server), {}, &stats);
  EXPECT_EQ(stats.retries, 3u);
  EXPECT_EQ(stats.missingWindows, 0u);
  ASSERT_EQ(d.gpus.size(), 1u);
  // kT0 itself lies before the first window's samples (kT0+1 ..); 60 samples in all.
  ASSERT_EQ(d.gpus[0].table.t_ns.size(), 60u);
  for (size_t i = 0; i < 60; ++i) {
    EXPECT_EQ(d.gpus[0].table.t_ns[i], (kT0 + 1 + static_cast<int64_t>(i)) * 1'000'000'000);
    EXPECT_EQ(d.gpus[0].table.columns[0].values[i], 101.0 + static_cast<double>(i));
  }
}

TEST(PrometheusRetry, AWindowThatKeepsFailingBecomesANote) {
  CannedServer server([&](const std::string& path, const std::string& body) {
    if (path == "/api/v1/series") return std::pair{200, kSeries};
    if (timeOf(body) == kT0 + 60)
      return std::pair{
          503, std::string(R"({"status":"error","errorType":"unavailable","error":"store down"})")};
    return std::pair{200, matrix(timeOf(body))};
  });
  Source src = sourceFor(server);
  src.retries = 2;
  FetchStats stats;
  const ImportedData d = fetch(src, {}, &stats);
  EXPECT_EQ(stats.missingWindows, 1u);
  EXPECT_EQ(stats.retries, 2u);
  ASSERT_EQ(d.gpus[0].table.t_ns.size(), 30u);  // the first window only
  const auto note = std::find_if(d.notes.begin(), d.notes.end(), [](const QualityNote& n) {
    return n.code == "prometheus_missing_window";
  });
  ASSERT_NE(note, d.notes.end());
  EXPECT_NE(note->message.find("no samples of DCGM_FI_DEV_POWER_USAGE from 2026-01-01 00:00:30.000 "
                               "UTC to 2026-01-01 00:01:00.000 UTC"),
            std::string::npos)
      << note->message;
  EXPECT_NE(note->message.find("HTTP 503: unavailable: store down"), std::string::npos)
      << note->message;

  // Every window failing is an error, not an empty run.
  CannedServer down([&](const std::string& path, const std::string&) {
    if (path == "/api/v1/series") return std::pair{200, kSeries};
    return std::pair{500, std::string("internal")};
  });
  Source all = sourceFor(down);
  all.retries = 1;
  EXPECT_THROW(fetch(all), Error);
}

}  // namespace
}  // namespace wl::import::prom
