// SPDX-License-Identifier: GPL-3.0-or-later
// GPU memory per rank (loaders/sim/memory_model.h) against hand counts, the refusal of
// configurations that do not fit, --allow-oom runs marked invalid, and the LoRA and inference
// workloads (what they run and what they leave out).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "loaders/core/error.h"
#include "loaders/sim/memory_model.h"
#include "sim_test_support.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// TinyLlama-1.1B counted by hand: per layer the QKV (2048 x (2048 + 2 x 4 x 64)), projection
// (2048 x 2048) and SwiGLU MLP (3 x 2048 x 5632) weights and two norms (2 x 2048); 22 layers; the
// untied input and output embeddings (32000 x 2048 each) and the final norm.
constexpr double kTinyLayer = 2048.0 * 2560 + 2048.0 * 2048 + 3.0 * 2048 * 5632 + 2 * 2048;
constexpr double kTinyParams = 22 * kTinyLayer + 2 * 32000.0 * 2048 + 2048;

TEST(Memory, DataParallelTinyLlamaMatchesTheHandCount) {
  sim::SimConfig c = test::tinyConfig();  // dp 8, mbs 2, seq 2048, no recompute
  const sim::MemoryReport m = sim::memoryPlan(c);
  ASSERT_EQ(m.stages.size(), 1u);
  const sim::RankMemory& r = m.stages[0];
  EXPECT_NEAR(r.weights, 2 * kTinyParams, 1);
  EXPECT_NEAR(r.gradients, 4 * kTinyParams, 1);
  EXPECT_NEAR(r.optimizer, 12 * kTinyParams, 1);
  // Activations per layer and microbatch: s b [10 h + 2 (h + 2 g d) + 2 h + 6 f] with s 2048,
  // b 2, h 2048, g d = 4 x 64, f 5632; one microbatch in flight (no pipeline) plus the working
  // copy of the layer being back-propagated.
  const double layer = 2048.0 * 2 * (10 * 2048 + 2 * (2048 + 512) + 2 * 2048 + 6 * 5632);
  EXPECT_NEAR(r.activations, 23 * layer, 1);
  EXPECT_NEAR(r.logits, 6.0 * 2048 * 2 * 32000, 1);
  EXPECT_NEAR(r.reserve, 3 * kGiB, 1);
  EXPECT_TRUE(m.fits());
  EXPECT_NEAR(m.capacity, 79.18 * kGiB, 1e3);

  // The distributed optimizer shards the 12 bytes of optimizer state over the 8 replicas.
  c.distributedOptimizer = true;
  EXPECT_NEAR(sim::memoryPlan(c).stages[0].optimizer, 12 * kTinyParams / 8, 1);
  // Full recomputation keeps only each layer's 2 s b h input.
  c.recompute = true;
  EXPECT_NEAR(sim::memoryPlan(c).stages[0].activations, 22 * 2.0 * 2048 * 2 * 2048 + layer, 1);
}

TEST(Memory, PipelineStagesHoldTheMicrobatchesInFlight) {
  sim::SimConfig c = test::tinyConfig();
  c.tp = 2, c.pp = 2, c.dp = 2;
  c.sequenceParallel = true;
  c.gbs = 64;  // 16 microbatches per replica
  const sim::MemoryReport m = sim::memoryPlan(c);
  ASSERT_EQ(m.stages.size(), 2u);
  // With SP every activation term is split over the 2 tensor-parallel ranks; 11 layers a stage.
  const double layer = 2048.0 * 2 * (10 * 2048 + 2 * (2048 + 512) + 2 * 2048 + 6 * 5632) / 2;
  EXPECT_NEAR(m.stages[0].activations, 2 * 11 * layer + layer, 1);  // 1F1B: stage 0 holds 2
  EXPECT_NEAR(m.stages[1].activations, 1 * 11 * layer + layer, 1);
  EXPECT_EQ(m.stages[0].logits, 0);
  EXPECT_NEAR(m.stages[1].logits, 6.0 * 2048 * 2 * 32000 / 2, 1);
  EXPECT_EQ(m.stages[0].rank, 0);
  EXPECT_EQ(m.stages[1].rank, 4);  // rank = tp + 2 (dp + 2 pp)
}

TEST(Memory, AConfigurationThatDoesNotFitIsRefusedNamingRankNeedAndCapacity) {
  // Llama3-70B without model parallelism on 80 GB GPUs: 70 B parameters x 18 bytes per rank.
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.model = *sim::findModel("Llama3-70B");
  c.mbs = 1, c.gbs = 8, c.seqLen = 8192;
  try {
    sim::simulate(c, dir / "oom.h5");
    FAIL() << "a 70B model on one GPU per replica was simulated";
  } catch (const sim::InvalidConfig& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("out of memory: rank 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("79.2 GiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--allow-oom"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));

  c.allowOom = true;
  c.durationS = 0, c.iterations = 1;
  const auto run = test::simulateAndOpen(c, dir / "oom.h5");
  bool noted = false;
  for (const QualityNote& n : run->quality())
    noted = noted || (n.code == "out_of_memory" && n.subject == "rank 0");
  EXPECT_TRUE(noted);
  const auto params = nlohmann::json::parse(run->info().parameters_json);
  EXPECT_FALSE(params["memory"]["fits"].get<bool>());
  // The GPU reports its memory full (nvidia-smi memory.used), not more than it has.
  const test::Series used = test::series(*run, 0, "mem_used_mib");
  ASSERT_FALSE(used.v.empty());
  EXPECT_NEAR(used.v.back(), 79.18 * 1024, 0.01);
}

TEST(Memory, TheMemoryTrackHoldsThePersistentPartThenThePeak) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.durationS = 3;
  const auto run = test::simulateAndOpen(c, dir / "mem.h5");
  const sim::RankMemory m = sim::memoryPlan(c).stages[0];
  const test::Series used = test::series(*run, 3, "mem_used_mib");
  ASSERT_GT(used.v.size(), 20u);
  EXPECT_NEAR(used.v.front(), m.persistent() / (1024.0 * 1024.0), 0.01);
  EXPECT_NEAR(used.v.back(), m.total() / (1024.0 * 1024.0), 0.01);
}

// Kernels of a traced run whose name contains `part`.
size_t count(const RunFile& run, const std::string& part) {
  size_t n = 0;
  for (size_t t = 0; t < run.tracks().size(); ++t)
    for (const KernelEvent& e : run.readAllKernels(t))
      n += run.str(e.name).find(part) != std::string::npos;
  return n;
}

TEST(Workloads, LoraRunsNoWeightGradientsAndReducesOnlyTheAdapters) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.gpusPerNode = 2, c.dp = 2, c.gbs = 4;
  c.durationS = 0, c.iterations = 2;
  c.trace.ranks = sim::TraceSelection::Ranks::All;
  const auto full = test::simulateAndOpen(c, dir / "full.h5");
  c.workload = sim::Workload::Lora;
  const auto lora = test::simulateAndOpen(c, dir / "lora.h5");
  const std::string wgrad = "_nt_n_tilesize256x128";  // cuBLAS weight-gradient GEMM
  EXPECT_GT(count(*full, wgrad), 100u);
  EXPECT_EQ(count(*lora, wgrad), 0u);
  // The data-parallel all-reduce carries the adapters' bf16 gradients: rank 32 on QKV
  // (2048 -> 2560), projection (2048 -> 2048), FC1 (2048 -> 11264) and FC2 (5632 -> 2048).
  const double adapters =
      22 * 32.0 * ((2048 + 2560) + (2048 + 2048) + (2048 + 11264) + (5632 + 2048));
  EXPECT_NEAR(sim::loraAdapterParams(c, 0), adapters, 1e-6);
  std::set<int64_t> dpSizes;
  for (const CollectiveRecord& r : lora->collectives())
    if (lora->str(r.info.pg_desc) == "DATA_PARALLEL_GROUP") dpSizes.insert(r.info.in_nelems);
  EXPECT_EQ(dpSizes, (std::set<int64_t>{static_cast<int64_t>(adapters)}));
  // Frozen weights need no gradients or optimizer state.
  const sim::RankMemory m = sim::memoryPlan(c).stages[0];
  EXPECT_NEAR(m.gradients, 4 * adapters, 1);
  EXPECT_NEAR(m.optimizer, 12 * adapters, 1);
}

TEST(Workloads, InferenceRunsForwardPassesOnly) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.gpusPerNode = 4, c.tp = 1, c.pp = 2, c.dp = 2, c.gbs = 8;
  c.durationS = 0, c.iterations = 2;
  c.workload = sim::Workload::Inference;
  c.trace.ranks = sim::TraceSelection::Ranks::All;
  const auto run = test::simulateAndOpen(c, dir / "inference.h5");
  std::map<std::string, int> phases;
  for (const Annotation& a : run->annotations())
    ++phases[run->str(a.name)];
  EXPECT_EQ(phases["backward"], 0);
  EXPECT_EQ(phases["optimizer"], 0);
  EXPECT_EQ(phases["forward"], 4 * 2 * 2);  // 4 ranks, 2 microbatches, 2 iterations
  EXPECT_EQ(count(*run, "flash_bwd"), 0u);
  EXPECT_EQ(count(*run, "AdamFunctor"), 0u);
  std::set<std::string> collectives;
  for (const CollectiveRecord& r : run->collectives())
    collectives.insert(run->str(r.info.collective));
  EXPECT_EQ(collectives, (std::set<std::string>{"sendrecv"}));
}

}  // namespace
}  // namespace wl
