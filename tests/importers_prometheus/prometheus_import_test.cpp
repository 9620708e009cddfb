// SPDX-License-Identifier: GPL-3.0-or-later
// The Prometheus importer against a real server: the test writes an OpenMetrics history of
// dcgm-exporter series (two nodes, two GPUs each, an irregular scrape interval, a gap on one node,
// an energy counter reset), promtool turns it into a TSDB, prometheus serves it on 127.0.0.1, and
// the import through the HTTP API must give back every sample and the energies the generator
// knows. Skipped only when the prometheus binaries are not installed.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <memory>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/import/import_job.h"
#include "loaders/import/prometheus/prometheus_import.h"
#include "prometheus_server.h"
#include "support/missing.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl::import::prom {
namespace {

constexpr int64_t kT0Ms = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr int kSamples = 120;
// Irregular scrape intervals (ms), used in turn.
constexpr int64_t kIntervalsMs[] = {1000, 1500, 750, 2250, 1000, 1250};
// node-b was not scraped in [kGapFromMs, kGapToMs) after kT0Ms.
constexpr int64_t kGapFromMs = 60000, kGapToMs = 90000;
// The energy counter of node-a GPU 1 restarts from zero at this sample.
constexpr int kResetAt = 50;

struct GenGpu {
  std::string host;
  int index = 0;
  std::string uuid, bus;
  std::vector<int64_t> tMs;
  std::vector<double> power, temp, sm, util;
  std::vector<int64_t> counterMj;  // as exported (restarts at the reset)
  std::vector<double> trueMj;      // energy since the first sample plus the first counter value
  std::vector<uint32_t> mask;
};

// The history the server will hold: values the test knows without reading them back.
std::vector<GenGpu> generate() {
  std::vector<GenGpu> gpus;
  int g = 0;
  for (const std::string host : {"node-a", "node-b"})
    for (int index = 0; index < 2; ++index, ++g) {
      GenGpu x;
      x.host = host;
      x.index = index;
      x.uuid = fmt::format("GPU-0000{}-aaaa-bbbb-cccc-00000000000{}", g, g);
      x.bus = fmt::format("00000000:{:02X}:00.0", 0x19 + 0x20 * index);
      int64_t t = kT0Ms + 37 * g;  // scrapes of different GPUs do not line up
      int64_t counter = 1000000 * (g + 1);
      double truth = static_cast<double>(counter);
      for (int k = 0; k < kSamples; ++k) {
        if (k > 0) t += kIntervalsMs[k % 6];
        const double power = 150.0 + 25.0 * g + (k * 7 % 40) * 0.5;
        if (k > 0) {
          const auto inc =
              std::llround(power * static_cast<double>(t - x.tMs.back()));  // W x ms = mJ
          const bool reset = host == "node-a" && index == 1 && k == kResetAt;
          counter = reset ? inc : counter + inc;
          truth += static_cast<double>(inc);
        }
        const int64_t rel = t - kT0Ms;
        if (host == "node-b" && rel >= kGapFromMs && rel < kGapToMs) continue;
        x.tMs.push_back(t);
        x.power.push_back(power);
        x.temp.push_back(50 + k % 9);
        x.sm.push_back(1980 - 15 * (k % 5));
        x.util.push_back((k * 13) % 101);
        x.counterMj.push_back(counter);
        x.trueMj.push_back(truth);
        x.mask.push_back(k % 10 == 3 ? throttle::kSwPowerCap : 0);
      }
      gpus.push_back(std::move(x));
    }
  return gpus;
}

std::string labelsOf(const GenGpu& x) {
  return fmt::format(
      "gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"{}\",device=\"nvidia{}\",modelName=\"NVIDIA H100 80GB "
      "HBM3\",Hostname=\"{}\",job=\"dcgm\",instance=\"{}:9400\"",
      x.index, x.uuid, x.bus, x.index, x.host, x.host);
}

void writeOpenMetrics(const std::vector<GenGpu>& gpus, const std::filesystem::path& file) {
  std::ofstream out(file);
  auto family = [&](std::string_view name, auto value) {
    out << "# TYPE " << name << " gauge\n";
    for (const GenGpu& x : gpus)
      for (size_t i = 0; i < x.tMs.size(); ++i)
        out << fmt::format("{}{{{}}} {} {}.{:03}\n", name, labelsOf(x), value(x, i),
                           x.tMs[i] / 1000, x.tMs[i] % 1000);
  };
  family("DCGM_FI_DEV_POWER_USAGE", [](const GenGpu& x, size_t i) { return x.power[i]; });
  family("DCGM_FI_DEV_GPU_TEMP", [](const GenGpu& x, size_t i) { return x.temp[i]; });
  family("DCGM_FI_DEV_SM_CLOCK", [](const GenGpu& x, size_t i) { return x.sm[i]; });
  family("DCGM_FI_DEV_GPU_UTIL", [](const GenGpu& x, size_t i) { return x.util[i]; });
  family("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
         [](const GenGpu& x, size_t i) { return x.counterMj[i]; });
  family("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", [](const GenGpu& x, size_t i) { return x.mask[i]; });
  // Not GPU telemetry: the default selector leaves it out.
  out << "# TYPE node_load1 gauge\n";
  out << fmt::format("node_load1{{instance=\"node-a:9100\"}} 1.5 {}.000\n", kT0Ms / 1000);
  out << "# EOF\n";
}

class PrometheusImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (test::findExecutable("prometheus").empty() || test::findExecutable("promtool").empty())
      return;
    dir_ = std::make_unique<test::TempDir>();
    gpus_ = generate();
    writeOpenMetrics(gpus_, *dir_ / "history.om");
    server_ = std::make_unique<test::PrometheusServer>(*dir_ / "history.om", *dir_ / "server");
  }
  static void TearDownTestSuite() {
    server_.reset();
    dir_.reset();
  }
  void SetUp() override {
    if (!server_)
      WL_SKIP_OR_FAIL_MISSING(
          "the prometheus and promtool binaries are not installed (Debian package "
          "'prometheus', see scripts/setup-debian.sh)");
  }
  static Source source() {
    Source s;
    s.url = server_->url();
    s.start_ns = kT0Ms * 1'000'000;
    s.end_ns = (kT0Ms + 10 * 60 * 1000) * 1'000'000;
    return s;
  }
  static size_t rows() {
    size_t n = 0;
    for (const GenGpu& x : gpus_)
      n += x.tMs.size();
    return n;
  }

  static inline std::unique_ptr<test::TempDir> dir_;
  static inline std::unique_ptr<test::PrometheusServer> server_;
  static inline std::vector<GenGpu> gpus_;
};

const TelemetryColumn& column(const ImportedGpu& g, std::string_view metric) {
  const TelemetryColumn* c = g.table.column(metric);
  if (!c) throw std::runtime_error("no column " + std::string(metric));
  return *c;
}

// Every sample, label and energy as generated.
void expectHistory(const ImportedData& d, const std::vector<GenGpu>& gen) {
  ASSERT_EQ(d.gpus.size(), gen.size());
  for (size_t g = 0; g < gen.size(); ++g) {
    const ImportedGpu& got = d.gpus[g];
    const GenGpu& x = gen[g];
    SCOPED_TRACE(x.host + " GPU " + std::to_string(x.index));
    EXPECT_EQ(got.info.hostname, x.host);
    EXPECT_EQ(got.info.local_index, x.index);
    EXPECT_EQ(got.info.uuid, x.uuid);
    EXPECT_EQ(got.info.device_name, "NVIDIA H100 80GB HBM3");
    ASSERT_EQ(got.table.t_ns.size(), x.tMs.size());
    for (size_t i = 0; i < x.tMs.size(); ++i)
      ASSERT_EQ(got.table.t_ns[i], x.tMs[i] * 1'000'000) << i;
    const auto& power = column(got, metric::kPower).values;
    const auto& temp = column(got, metric::kTemp).values;
    const auto& sm = column(got, metric::kSmClock).values;
    const auto& util = column(got, metric::kUtil).values;
    const auto& energy = column(got, metric::kEnergy).values;
    ASSERT_EQ(got.table.throttle_reasons.size(), x.tMs.size());
    for (size_t i = 0; i < x.tMs.size(); ++i) {
      ASSERT_EQ(power[i], x.power[i]) << i;
      ASSERT_EQ(temp[i], x.temp[i]) << i;
      ASSERT_EQ(sm[i], x.sm[i]) << i;
      ASSERT_EQ(util[i], x.util[i]) << i;
      ASSERT_EQ(got.table.throttle_reasons[i], x.mask[i]) << i;
      // mJ -> J, continuous across the reset.
      ASSERT_NEAR(energy[i], x.trueMj[i] * 1e-3, 1e-6) << i;
    }
    // The energy over the whole history: the sum of the generator's increments.
    EXPECT_NEAR(energy.back() - energy.front(), (x.trueMj.back() - x.trueMj.front()) * 1e-3, 1e-6);
  }
}

const QualityNote* findNote(const ImportedData& d, std::string_view code) {
  for (const QualityNote& n : d.notes)
    if (n.code == code) return &n;
  return nullptr;
}

TEST_F(PrometheusImport, EverySampleOnceWithItsTimestampInManyWindows) {
  Source s = source();
  s.maxSamplesPerQuery = 100;  // 4 series a metric: 25 s windows, 24 a metric
  s.concurrency = 3;
  FetchStats stats;
  const ImportedData d = fetch(s, {}, &stats);
  expectHistory(d, gpus_);
  EXPECT_EQ(stats.samples, rows() * 6);
  EXPECT_EQ(stats.series, 4u * 6u);
  EXPECT_GE(stats.queries, 6u * 24u);
  EXPECT_EQ(stats.missingWindows, 0u);
  EXPECT_EQ(d.format, "prometheus");
  EXPECT_TRUE(d.energyCounterMeasured);
  EXPECT_EQ(d.platform, "H100");
}

TEST_F(PrometheusImport, OneWindowGivesTheSameHistory) {
  Source s = source();
  s.concurrency = 1;
  FetchStats stats;
  const ImportedData d = fetch(s, {}, &stats);
  expectHistory(d, gpus_);
  EXPECT_EQ(stats.queries, 6u);  // one window per metric
}

TEST_F(PrometheusImport, NotesTheCounterResetAndTheGap) {
  const ImportedData d = fetch(source());
  const QualityNote* reset = findNote(d, "energy_counter_reset");
  ASSERT_NE(reset, nullptr);
  EXPECT_NE(reset->message.find("restarted 1 times on 1 GPUs (first on node-a/1"),
            std::string::npos)
      << reset->message;
  const QualityNote* gap = findNote(d, "prometheus_gap");
  ASSERT_NE(gap, nullptr);
  EXPECT_NE(gap->message.find("2 GPUs have no samples from"), std::string::npos) << gap->message;
  size_t gaps = 0;
  for (const QualityNote& n : d.notes)
    gaps += n.code == "prometheus_gap";
  EXPECT_EQ(gaps, 1u);  // both node-b GPUs skipped the same scrapes
}

TEST_F(PrometheusImport, SelectorLimitsTheGpusAndDiscoveryCountsThem) {
  Source s = source();
  s.selectors = {R"({Hostname="node-b",job="dcgm"})"};
  const Discovery disc = discover(s);
  EXPECT_EQ(disc.gpus, 2u);
  EXPECT_EQ(disc.series.size(), 2u * 6u);
  const ImportedData d = fetch(s);
  ASSERT_EQ(d.gpus.size(), 2u);
  for (const ImportedGpu& g : d.gpus)
    EXPECT_EQ(g.info.hostname, "node-b");
  // A selector naming one metric fetches only it.
  s.selectors = {R"(DCGM_FI_DEV_POWER_USAGE{gpu="1"})"};
  const ImportedData p = fetch(s);
  ASSERT_EQ(p.gpus.size(), 2u);
  ASSERT_EQ(p.gpus[0].table.columns.size(), 1u);
  EXPECT_EQ(p.gpus[0].table.columns[0].metric, metric::kPower);
  EXPECT_EQ(p.gpus[0].table.columns[0].values, gpus_[1].power);
}

TEST_F(PrometheusImport, SeveralSelectorsEachFetchTheirOwnSeries) {
  Source s = source();
  // node-a's series through the first, node-b's through the second, power twice (kept once).
  s.selectors = {R"({Hostname="node-a"})", R"({Hostname="node-b",job="dcgm"})",
                 "DCGM_FI_DEV_POWER_USAGE"};
  FetchStats stats;
  const ImportedData d = fetch(s, {}, &stats);
  expectHistory(d, gpus_);
  EXPECT_EQ(stats.samples, rows() * 6);
}

TEST_F(PrometheusImport, BadSelectorGivesTheServersMessage) {
  Source s = source();
  s.selectors = {R"({Hostname=~"node-(a"})"};
  try {
    fetch(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the server says: bad_data"), std::string::npos) << m;
    EXPECT_NE(m.find("/api/v1/series"), std::string::npos) << m;
    EXPECT_NE(m.find("missing closing )"), std::string::npos) << m;
  }
}

TEST_F(PrometheusImport, EmptyResultNamesTheSelectors) {
  Source s = source();
  s.selectors = {R"({Hostname="node-z"})", R"({job="nope"})"};
  try {
    fetch(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(R"(no GPU series between 2026-01-01)"), std::string::npos) << m;
    EXPECT_NE(m.find(R"(match {Hostname="node-z"}, {job="nope"})"), std::string::npos) << m;
  }
  // A time range before the history: nothing either.
  Source early = source();
  early.start_ns -= 3'600'000'000'000;
  early.end_ns = early.start_ns + 60'000'000'000;
  EXPECT_THROW(fetch(early), Error);
}

TEST_F(PrometheusImport, ClosedPortAndStoppedServerAreUnreachable) {
  Source s = source();
  s.url = fmt::format("http://127.0.0.1:{}", test::freeLoopbackPort());
  try {
    fetch(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be reached"), std::string::npos) << e.what();
  }
  // A server of its own, stopped before the import.
  test::TempDir dir;
  std::vector<GenGpu> one = {gpus_.front()};
  writeOpenMetrics(one, dir / "one.om");
  test::PrometheusServer stopped(dir / "one.om", dir / "server");
  s.url = stopped.url();
  EXPECT_EQ(discover(s).gpus, 1u);  // it served while it ran
  stopped.stop();
  try {
    fetch(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(stopped.url() + "/api/v1/series: the server cannot be reached"),
              std::string::npos)
        << m;
  }
}

TEST_F(PrometheusImport, NotAnApiUrlIsNamed) {
  Source s = source();
  s.url = server_->url() + "/nothing-here";
  try {
    fetch(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("404 Not Found: not a Prometheus API"), std::string::npos)
        << e.what();
  }
}

TEST_F(PrometheusImport, CancelStopsTheFetch) {
  Source s = source();
  s.maxSamplesPerQuery = 50;
  int calls = 0;
  EXPECT_THROW(fetch(s, Progress([&](double, std::string_view) { return ++calls < 2; })),
               Cancelled);
}

TEST_F(PrometheusImport, CliWritesTheRunAndNothingOnError) {
  test::TempDir dir;
  const std::string out = (dir / "run.h5").string();
  const std::string url = "prometheus:" + server_->url();
  const test::ProcessResult r =
      test::runWattline({"import", url, "--start", "2026-01-01T00:00:00Z", "--end",
                         std::to_string(kT0Ms / 1000 + 600), "-o", out, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"], 4);
  EXPECT_EQ(j["telemetry_samples"], rows());
  EXPECT_EQ(j["sources"][0]["format"], "prometheus");
  EXPECT_EQ(j["sources"][0]["path"], url);
  EXPECT_TRUE(std::filesystem::exists(out));

  const std::string bad = (dir / "bad.h5").string();
  const test::ProcessResult e =
      test::runWattline({"import", url, "--start", "1767225600", "--end", "1767226200", "--match",
                         R"({gpu=~"("})", "-o", bad});
  EXPECT_EQ(e.exitCode, 1);
  EXPECT_NE(e.err.find("the server says"), std::string::npos) << e.err;
  // Progress lines come first (stderr is not a terminal); the error is the last line, alone.
  const std::string last = e.err.substr(e.err.rfind('\n', e.err.size() - 2) + 1);
  EXPECT_EQ(last.rfind("wattline import: http://127.0.0.1:", 0), 0u) << e.err;
  EXPECT_NE(last.find("/api/v1/series: HTTP 400: the server says: bad_data"), std::string::npos)
      << e.err;
  EXPECT_FALSE(std::filesystem::exists(bad));

  const test::ProcessResult noTime = test::runWattline({"import", url, "-o", bad});
  EXPECT_EQ(noTime.exitCode, 2);
  EXPECT_NE(noTime.err.find("needs --start T and --end T"), std::string::npos) << noTime.err;
}

TEST_F(PrometheusImport, GpusJoinTheTracesHost) {
  // The rocprofv3 trace's rank ran on host smci350-zts-gtu-c6-25, device 0. Another host sorts
  // first, so only joining by host name puts the rank on the right GPU.
  std::vector<GenGpu> gen = {gpus_[0], gpus_[1], gpus_[0], gpus_[1]};
  gen[0].host = gen[1].host = "aaa-host";
  gen[2].host = gen[3].host = "smci350-zts-gtu-c6-25";
  for (size_t g = 0; g < gen.size(); ++g)
    gen[g].uuid = fmt::format("GPU-join-{}", g);
  test::TempDir dir;
  writeOpenMetrics(gen, dir / "join.om");
  test::PrometheusServer server(dir / "join.om", dir / "server");
  Source s = source();
  s.url = server.url();
  ImportRequest req;
  req.remote.push_back(remoteInput(s));
  req.inputs.push_back(
      {std::filesystem::path(WATTLINE_TEST_DATA) / "rocprof/tracelens-rocprofv3-mi350x.json.gz",
       {}});
  req.output = dir / "run.h5";
  ImportJob job(std::move(req));
  const ImportSummary sum = job.run();
  ASSERT_EQ(sum.gpus.size(), 4u);
  ASSERT_EQ(sum.ranks.size(), 1u);
  ASSERT_GE(sum.ranks[0].gpu, 0);
  const GpuInfo& gpu = sum.gpus[static_cast<size_t>(sum.ranks[0].gpu)];
  EXPECT_EQ(gpu.hostname, "smci350-zts-gtu-c6-25");
  EXPECT_EQ(gpu.local_index, 0);
  EXPECT_EQ(gpu.uuid, "GPU-join-2");
  EXPECT_EQ(sum.info.sources.front().path, "prometheus:" + server.url());
}

// A bcrypt hash of "wattline-test" (Prometheus' web config stores hashes, not passwords).
constexpr const char* kAliceHash = "$2b$10$abcdefghijklmnopqrstuumKHhTYO14jAvqfPDNj8zAstxU5CHlY2";

TEST_F(PrometheusImport, BasicAuthIsRequiredAndSent) {
  test::TempDir dir;
  std::vector<GenGpu> one = {gpus_.front()};
  writeOpenMetrics(one, dir / "one.om");
  test::WebOptions web;
  web.webConfigYaml = fmt::format("basic_auth_users:\n  alice: {}\n", kAliceHash);
  web.user = "alice";
  web.password = "wattline-test";
  test::PrometheusServer server(dir / "one.om", dir / "server", web);
  Source s = source();
  s.url = server.url();
  try {
    fetch(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/api/v1/series: 401 Unauthorized: the server refused "
                                         "the credentials"),
              std::string::npos)
        << e.what();
  }
  s.access.basicUser = "alice";
  s.access.basicPassword = "wrong";
  EXPECT_THROW(fetch(s), Error);
  // Through the CLI, from a file, never echoed.
  std::ofstream(dir / "auth") << "alice:wattline-test\n";
  const test::ProcessResult r = test::runWattline(
      {"import", "prometheus:" + server.url(), "--start", "1767225600", "--end", "1767226200",
       "--basic-auth-file", (dir / "auth").string(), "-o", (dir / "run.h5").string(), "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["gpus"], 1);
  EXPECT_EQ(r.err.find("wattline-test"), std::string::npos);
}

TEST_F(PrometheusImport, HttpsWithTheServersCa) {
  const std::string openssl = test::findExecutable("openssl");
  if (openssl.empty())
    WL_SKIP_OR_FAIL_MISSING(
        "openssl is not installed: no certificate for the https test (scripts/setup-debian.sh)");
  test::TempDir dir;
  const std::string crt = (dir / "server.crt").string(), key = (dir / "server.key").string();
  ASSERT_EQ(test::runTool({openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                           "-out", crt, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                           "subjectAltName=IP:127.0.0.1"},
                          dir / "openssl.log"),
            0);
  std::vector<GenGpu> one = {gpus_.front()};
  writeOpenMetrics(one, dir / "one.om");
  test::WebOptions web;
  web.webConfigYaml =
      fmt::format("tls_server_config:\n  cert_file: {}\n  key_file: {}\n", crt, key);
  web.https = true;
  web.caFile = crt;
  test::PrometheusServer server(dir / "one.om", dir / "server", web);
  Source s = source();
  s.url = server.url();
  try {
    fetch(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(": TLS failure ("), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--cacert"), std::string::npos) << e.what();
  }
  s.access.caCertFile = crt;
  const ImportedData d = fetch(s);
  ASSERT_EQ(d.gpus.size(), 1u);
  EXPECT_EQ(d.gpus[0].table.t_ns.size(), one[0].tMs.size());
}

TEST_F(PrometheusImport, CredentialsAreSentButNeverShown) {
  // Prometheus without auth accepts any credentials; what matters is that no message shows them.
  test::TempDir dir;
  std::ofstream(dir / "token") << "s3cr3t-token\n";
  const std::string url = "prometheus:" + server_->url();
  const test::ProcessResult r = test::runWattline(
      {"import", url, "--start", "1767225600", "--end", "1767226200", "--match", R"({gpu=~"("})",
       "--bearer-token-file", (dir / "token").string(), "-o", (dir / "x.h5").string()});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err.find("s3cr3t"), std::string::npos) << r.err;
  const std::string withUser = "http://alice:pa55word@" + server_->url().substr(7);
  const test::ProcessResult u =
      test::runWattline({"import", "prometheus:" + withUser, "--start", "1767225600", "--end",
                         "1767226200", "--match", R"({gpu=~"("})", "-o", (dir / "x.h5").string()});
  EXPECT_EQ(u.exitCode, 1);
  EXPECT_EQ(u.err.find("pa55word"), std::string::npos) << u.err;
}

}  // namespace
}  // namespace wl::import::prom
