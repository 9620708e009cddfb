// SPDX-License-Identifier: GPL-3.0-or-later
// What differs between two runs: configuration and data differences, the warnings where they make
// the comparison unfair, and the legend labels.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/compare/config_diff.h"
#include "phased_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

constexpr int64_t kS = 1'000'000'000;

class ConfigDiff : public ::testing::Test {
 protected:
  void SetUp() override {
    sa.name = "run A";
    sa.stepNs = {2 * kS, 2 * kS, 2 * kS};
    sa.config.tp = 2, sa.config.pp = 1, sa.config.dp = 1, sa.config.mbs = 4;
    sa.config.gbs = 16, sa.config.seq_len = 4096, sa.config.recompute = false;
    sb = sa;
    sb.name = "run B";
  }
  RunDifferences diff() {
    const auto a = test::writePhasedRun(sa, dir / ("a" + std::to_string(n) + ".h5"));
    const auto b = test::writePhasedRun(sb, dir / ("b" + std::to_string(n++) + ".h5"));
    return runDifferences(*a, *b);
  }
  static bool warns(const RunDifferences& d, const std::string& part) {
    return std::any_of(d.warnings.begin(), d.warnings.end(),
                       [&](const std::string& w) { return w.find(part) != std::string::npos; });
  }
  test::TempDir dir;
  test::PhasedRunSpec sa, sb;
  int n = 0;
};

TEST_F(ConfigDiff, MicrobatchOnly) {
  sb.config.mbs = 1;
  sb.config.gbs = 16;
  const RunDifferences d = diff();
  ASSERT_EQ(d.config.size(), 1u);
  EXPECT_EQ(d.config[0].key, "mbs");
  EXPECT_EQ(d.config[0].label, "microbatch");
  EXPECT_EQ(d.config[0].a, "4");
  EXPECT_EQ(d.config[0].b, "1");
  EXPECT_TRUE(d.data.empty());
  EXPECT_TRUE(d.warnings.empty());
  EXPECT_EQ(d.label_a, "mbs4");
  EXPECT_EQ(d.label_b, "mbs1");
}

TEST_F(ConfigDiff, LayoutAndBatchDifferencesNameBothRunsAndWarnAboutTokens) {
  sa.config.pp = 4;
  sb.config.tp = 4, sb.config.pp = 2, sb.config.gbs = 32;
  sb.config.recompute.reset();
  sb.config.overlap = true;
  const RunDifferences d = diff();
  std::vector<std::string> keys;
  for (const RunDifference& x : d.config)
    keys.push_back(x.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"tp", "pp", "gbs", "recompute", "overlap"}));
  EXPECT_EQ(d.config[3].a, "no");
  EXPECT_EQ(d.config[3].b, "unknown");
  EXPECT_EQ(d.config[4].a, "unknown");
  EXPECT_EQ(d.label_a, "tp2 pp4 gbs16 no-recompute overlap?");
  EXPECT_EQ(d.label_b, "tp4 pp2 gbs32 recompute? overlap");
  EXPECT_TRUE(warns(d, "65536 tokens in A and 131072 in B"));
}

TEST_F(ConfigDiff, DataDifferencesAndTheirWarnings) {
  sb.sampleNs = 50'000'000;  // 20 Hz against 100 Hz
  sb.kernels = false;
  sb.gpus = 3;
  sb.stepNs.push_back(2 * kS);
  const RunDifferences d = diff();
  EXPECT_TRUE(d.config.empty());
  EXPECT_EQ(d.label_a, "run A");  // nothing in the configuration differs: the run names
  EXPECT_EQ(d.label_b, "run B");
  std::map<std::string, std::pair<std::string, std::string>> data;
  for (const RunDifference& x : d.data)
    data[x.key] = {x.a, x.b};
  EXPECT_EQ(data["gpus"], (std::pair<std::string, std::string>{"2", "3"}));
  EXPECT_EQ(data["sampling_hz"], (std::pair<std::string, std::string>{"100 Hz", "20 Hz"}));
  EXPECT_EQ(data["traced_ranks"], (std::pair<std::string, std::string>{"0-1", "none"}));
  EXPECT_EQ(data["steps"], (std::pair<std::string, std::string>{"3", "4"}));
  EXPECT_FALSE(data.count("metrics"));
  EXPECT_TRUE(warns(d, "A has 2 GPUs and B 3"));
  EXPECT_TRUE(warns(d, "A samples at 100 Hz and B at 20 Hz"));
  EXPECT_TRUE(warns(d, "B has no kernel trace"));
  EXPECT_FALSE(warns(d, "share no step"));
}

TEST_F(ConfigDiff, IdenticalRunsFallBackToFileNamesAndNoCommonStepWarns) {
  sb.name = sa.name;
  sb.firstStep = 10;
  const RunDifferences d = diff();
  EXPECT_TRUE(d.config.empty());
  EXPECT_EQ(d.label_a, "a0.h5");
  EXPECT_EQ(d.label_b, "b0.h5");
  EXPECT_TRUE(warns(d, "share no step"));
}

}  // namespace
}  // namespace wl
