// SPDX-License-Identifier: GPL-3.0-or-later
// The seed paper's experiment matrix (tests/data/charllm, a copy of the real file).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "loaders/core/error.h"
#include "loaders/sim/experiment_matrix.h"
#include "support/temp_dir.h"

namespace wl::sim {
namespace {

const std::filesystem::path kMatrix = std::filesystem::path(WATTLINE_SOURCE_DIR) /
                                      "loaders/import/telemetry/charllm-experiment-matrix.csv";

TEST(ExperimentMatrix, ReadsEveryConfigurationOfTheRealFile) {
  const auto rows = readExperimentMatrix(kMatrix);
  EXPECT_EQ(rows.size(), 386u);
  // Line 268 of the file, read by eye:
  // optimization-sweep-h100,gpt3-175b,gpt3-175b_1_00000,8,8,64,2,32,1,,,1,,True,1,128,2048,96,
  // 12288,49152,96,,,,,,,False,False,False,...
  const MatrixEntry& e =
      findMatrixEntry(rows, "optimization-sweep-h100/gpt3-175b_1_00000", "", "", kMatrix);
  EXPECT_EQ(e.line, 268);
  EXPECT_EQ(e.platformId, "h100");
  EXPECT_EQ(e.nodes, 8);
  EXPECT_EQ(e.gpusPerNode, 8);
  EXPECT_EQ(e.tp, 2);
  EXPECT_EQ(e.pp, 32);
  EXPECT_EQ(e.dp, 1);
  EXPECT_EQ(e.mbs, 1);
  EXPECT_EQ(e.gbs, 128);
  EXPECT_EQ(e.seq, 2048);
  EXPECT_EQ(e.model.layers, 96);
  EXPECT_EQ(e.model.hidden, 12288);
  EXPECT_EQ(e.model.ffn, 49152);
  EXPECT_EQ(e.model.query_groups, 96);
  EXPECT_TRUE(e.sequenceParallel);
  EXPECT_FALSE(e.recompute);
  EXPECT_FALSE(e.overlap);
  // Line 230: microbatch-sweep-h200,llama3-70b,llama3-70b_2_mbs4,4,8,32,4,4,1,,,2,,True,4,128,
  // 8192,80,8192,28672,64,8,,,full,block,20,False,False,False,...
  const MatrixEntry& l = findMatrixEntry(rows, "llama3-70b_2_mbs4", "h200", "", kMatrix);
  EXPECT_EQ(l.line, 230);
  EXPECT_EQ(l.mbs, 4);
  EXPECT_EQ(l.model.query_groups, 8);
  EXPECT_TRUE(l.recompute);
  EXPECT_EQ(l.recomputeLayers, 20);
  EXPECT_TRUE(l.distributedOptimizer);  // optim = distributed_fused_adam
  EXPECT_EQ(l.workload, Workload::Pretrain);
  SimConfig c;
  applyMatrixEntry(l, c);
  EXPECT_EQ(c.tp * c.pp * c.dp, c.nodes * c.gpusPerNode);
  EXPECT_EQ(c.model.name, "Llama3-70B");
  EXPECT_TRUE(c.distributedOptimizer);
  // Line 2: inference,gpt3-175b,gpt3-175b_1_mbs1,... optim fused_adam, peft none.
  const MatrixEntry& inf = findMatrixEntry(rows, "inference/gpt3-175b_1_mbs1", "", "", kMatrix);
  EXPECT_EQ(inf.line, 2);
  EXPECT_EQ(inf.workload, Workload::Inference);
  EXPECT_FALSE(inf.distributedOptimizer);
  // The lora sweep: peft = lora.
  const MatrixEntry& lo = findMatrixEntry(rows, "lora/llama3-70b_1_mbs1", "", "", kMatrix);
  EXPECT_EQ(lo.workload, Workload::Lora);
}

TEST(ExperimentMatrix, AmbiguousAndUnknownNamesAreClearErrors) {
  const auto rows = readExperimentMatrix(kMatrix);
  try {
    findMatrixEntry(rows, "gpt3-175b_1_00000", "", "", kMatrix);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("names 2 configurations"), std::string::npos) << e.what();
  }
  EXPECT_EQ(findMatrixEntry(rows, "gpt3-175b_1_00000", "h200", "", kMatrix).line, 336);
  // NAME@LINE picks a row by its line; a line that holds another name matches nothing.
  EXPECT_EQ(findMatrixEntry(rows, "gpt3-175b_1_00000@336", "", "", kMatrix).line, 336);
  EXPECT_THROW(findMatrixEntry(rows, "gpt3-175b_1_00000@2", "", "", kMatrix), Error);
  // Rows repeating one SWEEP/NAME in a sweep (Mixtral in the lora sweep) are told apart by line.
  std::vector<int> lines;
  for (const MatrixEntry& e : rows)
    if (e.sweep == "lora" && e.name == "mixtral-8x22b_4_mbs8") lines.push_back(e.line);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THROW(findMatrixEntry(rows, "lora/mixtral-8x22b_4_mbs8", "", "", kMatrix), Error);
  EXPECT_EQ(
      findMatrixEntry(rows, fmt::format("lora/mixtral-8x22b_4_mbs8@{}", lines[1]), "", "", kMatrix)
          .line,
      lines[1]);
  EXPECT_THROW(findMatrixEntry(rows, "no-such-run", "", "", kMatrix), Error);
}

TEST(ExperimentMatrix, AFileWithoutTheColumnsIsRejectedNamingTheLine) {
  test::TempDir dir;
  std::ofstream(dir / "bad.csv") << "a,b,c\n1,2,3\n";
  try {
    readExperimentMatrix(dir / "bad.csv");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wl::sim
