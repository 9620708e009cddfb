// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/memory_model.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace wl::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

int recomputedLayers(const SimConfig& c) {
  const int layers = c.model.layers / c.pp;
  if (!c.recompute) return 0;
  return c.recomputeLayers < 0 ? layers : std::min(layers, c.recomputeLayers);
}

}  // namespace

const RankMemory& MemoryReport::worst() const {
  return *std::max_element(
      stages.begin(), stages.end(),
      [](const RankMemory& a, const RankMemory& b) { return a.total() < b.total(); });
}

double loraAdapterParams(const SimConfig& c, int /*stage*/) {
  if (c.workload != Workload::Lora) return 0.0;
  const ModelShape& m = c.model;
  const double r = c.loraRank, t = c.tp, h = m.hidden, f = m.ffn;
  const double kv = 2.0 * m.query_groups * (h / m.heads);
  const double ffnOut = (m.mlp == MlpKind::SwiGlu ? 2.0 : 1.0) * f;
  // A (in x r) and B (r x out) per adapted matrix; the tensor-parallel side is split over t.
  const double perLayer = r * (h + (h + kv) / t)  // QKV
                          + r * (h / t + h)       // projection
                          + r * (h + ffnOut / t)  // FC1
                          + r * (f / t + h);      // FC2
  return perLayer * (m.layers / c.pp);
}

MemoryReport estimateMemory(const SimConfig& c, const std::vector<double>& denseParamsPerStage,
                            const std::vector<double>& expertParamsPerStage) {
  const PlatformProfile& P = c.platform;
  const ModelShape& m = c.model;
  MemoryReport rep;
  rep.capacity = P.hbm_usable_gib * kGiB;
  const double s = c.seqLen, b = c.mbs, h = m.hidden, f = m.ffn, t = c.tp, V = m.vocab;
  const double kv = 2.0 * m.query_groups * (h / m.heads);
  const bool swiglu = m.mlp == MlpKind::SwiGlu;
  const double mlpWidth = (swiglu ? 6.0 : 4.0) * f;
  const double replicated = c.sequenceParallel ? 10.0 * h / t : 10.0 * h;
  const double mlp = m.moe() ? m.topk * (mlpWidth + 4.0 * h) : mlpWidth;
  const double layerAct = s * b * (replicated + (2.0 * (h + kv) + 2.0 * h + mlp) / t);
  const double checkpoint = 2.0 * s * b * h / (c.sequenceParallel ? t : 1.0);
  const int layers = m.layers / c.pp;
  const int recomputed = recomputedLayers(c);
  const bool training = c.workload != Workload::Inference;
  const double expertDp = m.moe() ? std::max(1, c.dp / c.ep) : 1;

  for (int st = 0; st < c.pp; ++st) {
    RankMemory r;
    r.stage = st;
    r.rank = st * c.tp * c.dp;  // tp 0, dp 0 of the stage (Megatron's rank order)
    const double dense = denseParamsPerStage[static_cast<size_t>(st)];
    const double expert = expertParamsPerStage[static_cast<size_t>(st)];
    const double stored = dense + expert;
    double trainedDense = 0, trainedExpert = 0;
    if (c.workload == Workload::Pretrain) trainedDense = dense, trainedExpert = expert;
    if (c.workload == Workload::Lora) trainedDense = loraAdapterParams(c, st);
    if (c.fsdp) {
      const double perLayer = stored / std::max(1, layers);
      r.weights = 2.0 * stored / c.dp + 2.0 * 2.0 * perLayer;
      r.gradients = 4.0 * (trainedDense + trainedExpert) / c.dp;
      r.optimizer = 12.0 * (trainedDense + trainedExpert) / c.dp;
      r.comm += 2.0 * perLayer * 2.0;  // the reduce-scatter input of one layer's gradients
    } else {
      r.weights = 2.0 * (stored + trainedDense * (c.workload == Workload::Lora));
      r.gradients = 4.0 * (trainedDense + trainedExpert);
      r.optimizer = c.distributedOptimizer ? 12.0 * (trainedDense / c.dp + trainedExpert / expertDp)
                                           : 12.0 * (trainedDense + trainedExpert);
    }
    if (training) {
      const int inflight = std::min(c.pp - st, c.microbatches());
      r.activations =
          inflight * ((layers - recomputed) * layerAct + recomputed * checkpoint) + layerAct;
    } else {
      r.activations = layerAct;
    }
    if (st == c.pp - 1) r.logits = (training ? 6.0 : 2.0) * s * b * V / t;
    if (c.pp > 1) r.comm += 4.0 * s * b * h / t * 2.0;
    r.reserve = P.memory_reserve_gib * kGiB;
    rep.stages.push_back(r);
  }
  return rep;
}

nlohmann::json memoryToJson(const MemoryReport& m) {
  nlohmann::json j;
  j["usable_gib"] = m.capacity / kGiB;
  j["fits"] = m.fits();
  for (const RankMemory& r : m.stages)
    j["stages"].push_back({{"stage", r.stage},
                           {"rank", r.rank},
                           {"weights_gib", r.weights / kGiB},
                           {"gradients_gib", r.gradients / kGiB},
                           {"optimizer_gib", r.optimizer / kGiB},
                           {"activations_gib", r.activations / kGiB},
                           {"logits_gib", r.logits / kGiB},
                           {"buffers_and_reserve_gib", (r.comm + r.reserve) / kGiB},
                           {"total_gib", r.total() / kGiB}});
  return j;
}

std::string describeShortfall(const SimConfig& c, const MemoryReport& m) {
  const RankMemory& w = m.worst();
  return fmt::format(
      "out of memory: rank {} (pipeline stage {}) needs {:.1f} GiB but an {} has {:.1f} GiB "
      "(weights {:.1f}, gradients {:.1f}, optimizer {:.1f}, activations {:.1f}, logits {:.1f}, "
      "buffers and reserve {:.1f} GiB)",
      w.rank, w.stage, w.total() / kGiB, c.platform.platform, m.capacity / kGiB, w.weights / kGiB,
      w.gradients / kGiB, w.optimizer / kGiB, w.activations / kGiB, w.logits / kGiB,
      (w.comm + w.reserve) / kGiB);
}

}  // namespace wl::sim
