// SPDX-License-Identifier: GPL-3.0-or-later
// The CharLLM-PPT results folder. No real one is public, so each test writes a small folder in a
// temporary directory from the model below (simulated data, laid out as the artifact's modified
// Zeus writes it: one headerless "epoch_seconds,value" file per metric per global rank, all metrics
// of one rank stamped with the same time by one polling loop every 50 ms) and checks the imported
// values against the numbers it wrote.
//
// Model, rank r, sample k (k = 0..N-1), t_k = T0 + 0.05 k (+ 20 ms for rank 9's mem_clock file):
//   gpu_power = 300 + 10 r + 5 k W (rank 1: -1 at k = 7)   mem_power = 50 + r W
//   gpu_util = (7 k + r) mod 101 %                           mem_util = 20 + r %
//   gpu_thermal = 40 + r + 0.1 k C                           mem_thermal = 45 + r C
//   sm_clock = 1980 - 5 k MHz                                mem_clock = 2619 MHz
//   pcie_tx/rx_throughput = 1000 r + k KB/s
//   pcie_tx_bytes = (1e9 r + 1.5e8 k) mod 2^32               pcie_rx_bytes = 1e6 k
//   nvlink_tx/rx_throughput = (4e9 + 1e7 k) mod 2^32 KiB (cumulative despite the name)
// System files of node leaders (ranks 0 and 8), two CPUs with cumulative node_cpu_seconds:
//   cpu_usage: per CPU c rows "user" 1000 + c + 0.03 k and "system" 500 + 0.01 k -> 80 % busy
//   cpu_idle: 20000 + c + 0.01 k -> 20 %;  cpu_temp zones 0, 1: 50 + 0.1 k and 55 (max wins)
//   memory_used 1e12, memory_free 5e11 - 1e6 k; ib_rx_bytes on ib0, ib1: 1e9 + 1e6 k each

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "importers_telemetry/telemetry_test_util.h"
#include "loaders/core/metrics.h"
#include "support/temp_dir.h"

namespace wl::test {
namespace {

namespace fs = std::filesystem;

constexpr double kT0 = 1727385120.0;
constexpr int kSamples = 60;  // 3 s at 50 ms
constexpr double k2_32 = 4294967296.0;

std::string series(const std::function<double(int)>& value, double offset = 0.0,
                   const std::function<bool(int)>& missing = nullptr) {
  std::string s;
  for (int k = 0; k < kSamples; ++k) {
    const double v = (missing && missing(k)) ? -1.0 : value(k);
    s += fmt::format("{:.6f},{}\n", kT0 + 0.05 * k + offset, v);
  }
  return s;
}

double pcieTx(int r, int k) {
  return std::fmod(1e9 * r + 1.5e8 * k, k2_32);
}
double nvlink(int k) {
  return std::fmod(4e9 + 1e7 * k, k2_32);
}

void writeRank(const fs::path& dir, int r, bool nvidia) {
  auto put = [&](const std::string& stem, const std::string& text) {
    writeText(dir / fmt::format("{}_{}.csv", stem, r), text);
  };
  put("gpu_power", series([&](int k) { return 300.0 + 10 * r + 5 * k; }, 0.0,
                          [&](int k) { return r == 1 && k == 7; }));
  put("gpu_util", series([&](int k) { return double((7 * k + r) % 101); }));
  put("mem_util", series([&](int) { return 20.0 + r; }));
  put("gpu_thermal", series([&](int k) { return 40.0 + r + 0.1 * k; }));
  put("mem_thermal", series([&](int) { return 45.0 + r; }));
  put("sm_clock", series([&](int k) { return 1980.0 - 5 * k; }));
  put("mem_clock", series([&](int) { return 2619.0; }, r == 9 ? 0.020 : 0.0));
  if (!nvidia) return;
  put("mem_power", series([&](int) { return 50.0 + r; }));
  put("pcie_tx_throughput", series([&](int k) { return 1000.0 * r + k; }));
  put("pcie_rx_throughput", series([&](int k) { return 1000.0 * r + k; }));
  put("pcie_tx_bytes", series([&](int k) { return pcieTx(r, k); }));
  put("pcie_rx_bytes", series([&](int k) { return 1e6 * k; }));
  put("nvlink_tx_throughput", series([&](int k) { return nvlink(k); }));
  put("nvlink_rx_throughput", series([&](int k) { return nvlink(k); }));
}

void writeSystem(const fs::path& dir, int r) {
  for (int c = 0; c < 2; ++c) {
    std::string usage;
    for (int k = 0; k < kSamples; ++k) {
      const double t = kT0 + 0.05 * k + 0.002;  // the system poller runs in its own process
      usage += fmt::format("{:.6f},{}\n", t, 1000.0 + c + 0.03 * k);
      usage += fmt::format("{:.6f},{}\n", t, 500.0 + 0.01 * k);
    }
    writeText(dir / fmt::format("system_cpu_usage_rank_{}_id_{}.csv", r, c), usage);
    writeText(dir / fmt::format("system_cpu_idle_rank_{}_id_{}.csv", r, c),
              series([&](int k) { return 20000.0 + c + 0.01 * k; }, 0.002));
    writeText(dir / fmt::format("system_cpu_temp_rank_{}_id_{}.csv", r, c),
              series([&](int k) { return c == 0 ? 50.0 + 0.1 * k : 55.0; }, 0.002));
    writeText(dir / fmt::format("system_ib_rx_bytes_rank_{}_id_ib{}.csv", r, c),
              series([&](int k) { return 1e9 + 1e6 * k; }, 0.002));
  }
  writeText(dir / fmt::format("system_memory_used_{}.csv", r),
            series([](int) { return 1e12; }, 0.002));
  writeText(dir / fmt::format("system_memory_free_{}.csv", r),
            series([](int k) { return 5e11 - 1e6 * k; }, 0.002));
}

int64_t tk(int k, double offset = 0.0) {
  // The importer parses the printed decimal exactly: round the printed text the same way.
  const std::string s = fmt::format("{:.6f}", kT0 + 0.05 * k + offset);
  const size_t dot = s.find('.');
  return std::stoll(s.substr(0, dot)) * 1'000'000'000 + std::stoll(s.substr(dot + 1)) * 1000;
}

TEST(CharLlm, NvidiaRunFolderImportsEveryMetricWithConfigNodesAndWraps) {
  TempDir tmp;
  const fs::path run = tmp / "optimization-sweep-h200" / "llama3-70b" / "llama3-70b_1_10000";
  for (int r : {0, 1, 8, 9})
    writeRank(run, r, true);
  writeSystem(run, 0);
  writeSystem(run, 8);
  EXPECT_EQ(detectedFormat(run), "charllm");
  const import::ImportedData d = importWith("charllm", run);

  // Configuration: the matrix row of (optimization-sweep-h200, llama3-70b, llama3-70b_1_10000)
  // read here from the repository's copy of the matrix, and the name's bits (overlap on).
  std::map<std::string, std::string> row;
  {
    const auto lines = readLines(fs::path(WATTLINE_SOURCE_DIR) /
                                 "loaders/import/telemetry/charllm-experiment-matrix.csv");
    const auto header = split(lines[0], ',');
    for (size_t i = 1; i < lines.size(); ++i) {
      const auto f = split(lines[i], ',');
      if (f[0] == "optimization-sweep-h200" && f[1] == "llama3-70b" && f[2] == "llama3-70b_1_10000")
        for (size_t c = 0; c < header.size() && c < f.size(); ++c)
          row[header[c]] = f[c];
    }
  }
  ASSERT_FALSE(row.empty());
  EXPECT_EQ(d.name, "llama3-70b_1_10000");
  EXPECT_EQ(d.model, "llama3-70b");
  EXPECT_EQ(d.platform, "H200");
  EXPECT_EQ(d.config.tp, std::stoi(row["tp"]));
  EXPECT_EQ(d.config.pp, std::stoi(row["pp"]));
  EXPECT_EQ(d.config.dp, std::stoi(row["dp"]));
  EXPECT_EQ(d.config.nodes, std::stoi(row["nodes"]));
  EXPECT_EQ(d.config.gpus_per_node, std::stoi(row["gpus_per_node"]));
  EXPECT_EQ(d.config.gbs, std::stoi(row["gbs"]));
  EXPECT_EQ(d.config.seq_len, std::stoi(row["seq"]));
  EXPECT_EQ(d.config.overlap, true);
  EXPECT_EQ(d.config.recompute, false);

  // GPUs: global rank = node x 8 + local index.
  ASSERT_EQ(d.gpus.size(), 4u);
  for (const auto& g : d.gpus) {
    const int r = g.info.rank;
    EXPECT_EQ(g.info.node, r / 8);
    EXPECT_EQ(g.info.local_index, r % 8);
    EXPECT_TRUE(g.nodeKnown);
    const size_t rows = r == 9 ? 2 * kSamples : kSamples;  // rank 9's mem_clock is 20 ms late
    ASSERT_EQ(g.table.size(), rows) << "rank " << r;
    if (r == 9) {
      EXPECT_EQ(finiteCount(column(g, "mem_clock_mhz").values), size_t(kSamples));
      EXPECT_EQ(finiteCount(column(g, "power_w").values), size_t(kSamples));
      continue;
    }
    for (int k = 0; k < kSamples; ++k) {
      EXPECT_EQ(g.table.t_ns[k], tk(k));
      const double p = column(g, "power_w").values[k];
      if (r == 1 && k == 7)
        EXPECT_TRUE(std::isnan(p));
      else
        EXPECT_DOUBLE_EQ(p, 300.0 + 10 * r + 5 * k);
      EXPECT_DOUBLE_EQ(column(g, "mem_power_w").values[k], 50.0 + r);
      EXPECT_DOUBLE_EQ(column(g, "util_pct").values[k], double((7 * k + r) % 101));
      EXPECT_DOUBLE_EQ(column(g, "mem_util_pct").values[k], 20.0 + r);
      EXPECT_DOUBLE_EQ(column(g, "temp_c").values[k], 40.0 + r + 0.1 * k);
      EXPECT_DOUBLE_EQ(column(g, "mem_temp_c").values[k], 45.0 + r);
      EXPECT_DOUBLE_EQ(column(g, "sm_clock_mhz").values[k], 1980.0 - 5 * k);
      EXPECT_DOUBLE_EQ(column(g, "pcie_tx_kbs").values[k], 1000.0 * r + k);
      EXPECT_DOUBLE_EQ(column(g, "pcie_tx_bytes").values[k], pcieTx(r, k));  // raw counter
      EXPECT_DOUBLE_EQ(column(g, "nvlink_tx_kib").values[k], nvlink(k));
    }
    EXPECT_FALSE(g.table.column("mem_used_pct"));  // NVIDIA: mem_util is the controller
  }
  // Wraps: counted independently from the model.
  const QualityNote* wrap = findNote(d.notes, "counter_wrap");
  ASSERT_NE(wrap, nullptr);
  for (int r : {0, 1, 8}) {
    const int wraps = static_cast<int>((1e9 * r + 1.5e8 * (kSamples - 1)) / k2_32) -
                      static_cast<int>(1e9 * r / k2_32);
    EXPECT_NE(wrap->message.find(fmt::format("rank {} pcie_tx_bytes x{}", r, wraps)),
              std::string::npos)
        << wrap->message;
  }
  const int nvWraps = static_cast<int>((4e9 + 1e7 * (kSamples - 1)) / k2_32);
  EXPECT_NE(wrap->message.find(fmt::format("rank 0 nvlink_tx_kib x{}", nvWraps)),
            std::string::npos);
  const QualityNote* missing = findNote(d.notes, "missing_values");
  ASSERT_NE(missing, nullptr);
  EXPECT_NE(missing->message.find("1 samples were -1"), std::string::npos) << missing->message;

  // Nodes from the system files of ranks 0 and 8.
  ASSERT_EQ(d.nodes.size(), 2u);
  for (const auto& n : d.nodes) {
    EXPECT_EQ(n.table.size(), size_t(kSamples));
    auto col = [&](std::string_view m) -> const std::vector<double>& {
      const TelemetryColumn* c = n.table.column(m);
      EXPECT_NE(c, nullptr) << m;
      static const std::vector<double> none;
      return c ? c->values : none;
    };
    EXPECT_TRUE(std::isnan(col("cpu_usage_pct")[0]));  // a rate needs two samples
    for (int k = 1; k < kSamples; ++k) {
      EXPECT_NEAR(col("cpu_usage_pct")[k], 80.0, 1e-6);  // 0.04 s x 2 CPUs per 50 ms
      EXPECT_NEAR(col("cpu_idle_pct")[k], 20.0, 1e-6);
    }
    for (int k = 0; k < kSamples; ++k) {
      EXPECT_DOUBLE_EQ(col("cpu_temp_c")[k], std::max(50.0 + 0.1 * k, 55.0));
      EXPECT_DOUBLE_EQ(col("ib_rx_bytes")[k], 2 * (1e9 + 1e6 * k));
      EXPECT_DOUBLE_EQ(col("host_mem_used")[k], 1e12);
      EXPECT_DOUBLE_EQ(col("host_mem_free")[k], 5e11 - 1e6 * k);
    }
  }
  EXPECT_EQ(d.nodes[0].node, 0);
  EXPECT_EQ(d.nodes[1].node, 1);
  EXPECT_NEAR(d.sample_interval_s, 0.05, 1e-6);
}

TEST(CharLlm, AmdRunStoresVramUsedAndPairsMi250Gcds) {
  TempDir tmp;
  const fs::path run = tmp / "mi250-sweep" / "llama3-70b" / "myrun_mbs4";
  for (int r = 0; r < 4; ++r)
    writeRank(run, r, false);
  // MI250: board power on the first GCD of each package only; the second reads 0.
  for (int r : {1, 3})
    writeText(run / fmt::format("gpu_power_{}.csv", r), series([](int) { return 0.0; }));
  const import::ImportedData d = importWith("charllm", run);
  EXPECT_EQ(d.platform, "MI250");
  EXPECT_EQ(d.config.mbs, 4);  // from the name: not in the matrix
  EXPECT_TRUE(hasNote(d.notes, "config_not_in_matrix"));
  ASSERT_EQ(d.gpus.size(), 4u);
  for (const auto& g : d.gpus) {
    EXPECT_EQ(g.info.package, g.info.rank / 2);
    EXPECT_DOUBLE_EQ(column(g, "mem_used_pct").values[3], 20.0 + g.info.rank);  // VRAM used
    EXPECT_FALSE(g.table.column("mem_util_pct"));
  }
  EXPECT_EQ(finiteCount(column(d.gpus[1], "power_w").values), 0u);
  EXPECT_EQ(finiteCount(column(d.gpus[0], "power_w").values), size_t(kSamples));
  EXPECT_TRUE(hasNote(d.notes, "gcd_pairs"));
}

TEST(CharLlm, GpusPerNodeFromTheRanksThatWroteSystemFiles) {
  TempDir tmp;
  const fs::path run = tmp / "custom" / "run";
  for (int r = 0; r < 6; ++r)
    writeRank(run, r, true);
  writeSystem(run, 0);
  writeSystem(run, 3);
  const import::ImportedData d = importWith("charllm", run);
  EXPECT_EQ(d.config.gpus_per_node, 3);  // 6 ranks on 2 nodes
  EXPECT_EQ(d.config.nodes, 2);
  for (const auto& g : d.gpus) {
    EXPECT_EQ(g.info.node, g.info.rank / 3);
    EXPECT_EQ(g.info.local_index, g.info.rank % 3);
  }
  ASSERT_EQ(d.nodes.size(), 2u);
  EXPECT_EQ(d.nodes[1].node, 1);
}

TEST(CharLlm, KinetoTracesAlongsideAreReadThroughTheRegistry) {
  TempDir tmp;
  const fs::path run = tmp / "results" / "run";
  writeRank(run, 0, true);
  writeText(run / "4242_kineto" / "rank-0.json",
            R"({"schemaVersion":1,"distributedInfo":{"rank":0,"world_size":1},"traceEvents":[)"
            R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1727385120100000,)"
            R"("dur":10,"args":{"device":0,"stream":7}}]})");
  const import::ImportedData d = importWith("charllm", run);
  ASSERT_EQ(d.gpus.size(), 1u);
  if (!import::findImporter("kineto")) {
    // This build has no kineto importer: the traces are reported, not silently dropped.
    const QualityNote* n = findNote(d.notes, "kineto_importer_unavailable");
    ASSERT_NE(n, nullptr);
    EXPECT_NE(n->message.find("1 Kineto traces"), std::string::npos) << n->message;
    EXPECT_TRUE(d.ranks.empty());
  } else {
    ASSERT_EQ(d.ranks.size(), 1u);
    EXPECT_EQ(d.ranks[0].info.rank, 0);
  }
}

TEST(CharLlm, BadFilesAreNamedWithTheirLine) {
  TempDir tmp;
  const fs::path run = tmp / "run";
  writeRank(run, 0, true);
  writeText(run / "gpu_util_0.csv", "1727385120.0,50\n1727385120.05,fifty\n");
  const std::string e = errorMessage([&] { importWith("charllm", run); });
  EXPECT_NE(e.find("gpu_util_0.csv:2: expected a number (or -1), found 'fifty'"), std::string::npos)
      << e;
  writeText(run / "gpu_util_0.csv", "1727385120.0,50,3\n");
  EXPECT_NE(errorMessage([&] {
              importWith("charllm", run);
            }).find("gpu_util_0.csv:1: expected 2 fields 'epoch_seconds,value', found 3"),
            std::string::npos);
  // An empty folder, and a file instead of a folder.
  fs::create_directories(tmp / "empty");
  EXPECT_NE(errorMessage([&] {
              importWith("charllm", tmp / "empty");
            }).find("no CharLLM-PPT metric files"),
            std::string::npos);
  EXPECT_NE(errorMessage([&] {
              importWith("charllm", run / "gpu_power_0.csv");
            }).find("expected a CharLLM-PPT results folder"),
            std::string::npos);
}

// A local experiment matrix needs only a 'name' column: one without 'model' and 'sweep' (found
// by the charllm fuzzer, where it ended the import with "map::at") still gives the run's
// configuration, and the run name's _mbs wins as with the compiled-in matrix.
TEST(CharLlm, ALocalMatrixWithoutModelOrSweepColumnsStillGivesTheConfig) {
  TempDir tmp;
  const fs::path run = tmp / "my-sweep" / "my-model" / "myrun_mbs4";
  writeRank(run, 0, true);
  writeText(run / "experiment-matrix.csv",
            "name,tp,pp,dp,mbs\nother,8,1,1,1\nmyrun_mbs4,2,4,8,1\n");
  const import::ImportedData d = importWith("charllm", run);
  EXPECT_EQ(d.name, "myrun_mbs4");
  EXPECT_EQ(d.model, "");
  EXPECT_EQ(d.config.tp, 2);
  EXPECT_EQ(d.config.pp, 4);
  EXPECT_EQ(d.config.dp, 8);
  EXPECT_EQ(d.config.mbs, 4);
}

TEST(CharLlm, OutOfOrderRowsAreSortedWithANote) {
  TempDir tmp;
  const fs::path run = tmp / "run";
  writeRank(run, 0, false);
  writeText(run / "gpu_power_0.csv", "1727385120.10,300\n1727385120.00,100\n1727385120.05,200\n");
  const import::ImportedData d = importWith("charllm", run);
  const import::ImportedGpu& g = d.gpus[0];
  const auto& p = column(g, "power_w").values;
  EXPECT_DOUBLE_EQ(p[0], 100.0);
  EXPECT_DOUBLE_EQ(p[1], 200.0);
  EXPECT_DOUBLE_EQ(p[2], 300.0);
  EXPECT_TRUE(hasNote(d.notes, "non_monotonic_timestamps"));
}

}  // namespace
}  // namespace wl::test
