// SPDX-License-Identifier: GPL-3.0-or-later
// Real traces: the 8 ranks of the PARAM DLRM Kineto traces (tests/data/kineto). A Python script
// (dlrm_reference.py) extracts the GPU events and computes the HTA breakdown of every rank on its
// own; the events are stored in a run with RunWriter and the library's breakdown must equal it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>

#include "analysis/run_analysis.h"
#include "analysis_test_util.h"
#include "loaders/core/kernel_class.h"
#include "support/missing.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

// One CSV row: rank,stream,start_ns,dur_ns,kind,name (name possibly quoted).
bool parseRow(const std::string& line, int& rank, int64_t& stream, int64_t& start, int64_t& dur,
              int& kind, std::string& name) {
  std::vector<std::string> f;
  size_t pos = 0;
  for (int i = 0; i < 5; ++i) {
    const size_t c = line.find(',', pos);
    if (c == std::string::npos) return false;
    f.push_back(line.substr(pos, c - pos));
    pos = c + 1;
  }
  name = line.substr(pos);
  if (!name.empty() && name.front() == '"') {
    std::string u;
    for (size_t i = 1; i + 1 < name.size(); ++i) {
      u += name[i];
      if (name[i] == '"' && name[i + 1] == '"') ++i;
    }
    name = u;
  }
  rank = std::stoi(f[0]);
  stream = std::stoll(f[1]);
  start = std::stoll(f[2]);
  dur = std::stoll(f[3]);
  kind = std::stoi(f[4]);
  return true;
}

TEST(DlrmBreakdown, EightRanksMatchAnIndependentReference) {
  if (!test::havePythonNumpy())
    WL_SKIP_OR_FAIL_MISSING("/usr/bin/python3 with numpy not available");
  test::TempDir dir;
  const auto ref = test::runProcess(
      "/usr/bin/python3", {std::string(WATTLINE_ANALYSIS_TEST_DIR) + "/dlrm_reference.py",
                           std::string(WATTLINE_TEST_DATA) + "/kineto/param-dlrm-8rank-v100.tar.gz",
                           dir.path().string()});
  ASSERT_EQ(ref.exitCode, 0) << ref.err;
  const auto want = nlohmann::json::parse(ref.out);
  ASSERT_EQ(want.size(), 8u);

  test::RunSpec s = test::baseRun(0, 1.0);
  s.info.name = "param-dlrm-8rank";
  s.info.simulated = false;
  std::map<std::pair<int, int64_t>, KernelTrack> tracks;
  std::ifstream in(dir / "events.csv");
  std::string line;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    int rank = 0, kind = 0;
    int64_t stream = 0, start = 0, dur = 0;
    std::string name;
    ASSERT_TRUE(parseRow(line, rank, stream, start, dur, kind, name)) << line;
    const auto k = static_cast<GpuEventKind>(kind);
    KernelTrack& t = tracks[{rank, stream}];
    t.rank = rank;
    t.stream = stream;
    t.events.push_back({start, dur, s.names.intern(name), classifyKernel(name, k, false), k, -1});
    lo = std::min(lo, start);
    hi = std::max(hi, start + dur);
  }
  for (auto& [key, t] : tracks)
    s.tracks.push_back(std::move(t));
  for (int r = 0; r < 8; ++r)
    s.ranks.push_back({r, -1, "dlrm", -1, "trace"});
  s.info.start_ns = lo;
  s.info.end_ns = hi;
  const auto run = test::writeAndOpen(s, dir / "dlrm.h5");
  const RunAnalysis a = analyzeRun(*run);
  ASSERT_EQ(a.ranks.size(), 8u);
  for (const RankAnalysis& r : a.ranks) {
    const auto& w = want[std::to_string(r.breakdown.rank)];
    const RankBreakdown& b = r.breakdown;
    SCOPED_TRACE(testing::Message() << "rank " << b.rank);
    EXPECT_EQ(b.kernels, w["kernels"].get<uint64_t>());
    EXPECT_EQ(b.comm_kernels, w["comm_kernels"].get<uint64_t>());
    EXPECT_EQ(b.span_ns, w["span_ns"].get<int64_t>());
    EXPECT_EQ(b.idle_ns, w["idle_ns"].get<int64_t>());
    EXPECT_EQ(b.compute_ns, w["compute_ns"].get<int64_t>());
    EXPECT_EQ(b.non_compute_ns, w["non_compute_ns"].get<int64_t>());
    EXPECT_EQ(b.comm_ns, w["comm_ns"].get<int64_t>());
    EXPECT_EQ(b.exposed_comm_ns, w["exposed_comm_ns"].get<int64_t>());
    EXPECT_EQ(b.memory_ns, w["memory_ns"].get<int64_t>());
    EXPECT_EQ(b.overlap_ns, w["overlap_ns"].get<int64_t>());
    EXPECT_GT(b.comm_ns, 0);
  }
}

}  // namespace
}  // namespace wl
