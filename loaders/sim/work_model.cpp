// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/work_model.h"

#include <algorithm>

#include "loaders/sim/memory_model.h"

namespace wl::sim {
namespace {

constexpr double kBf16 = 2.0;

// Builds the work of one pipeline stage: its kernels, their costs and the collectives, per op
// (docs/simulator.md, "Work: kernels and their cost"). The members are named as the formulas of
// the docs name them (T tokens, h hidden, f FFN, V vocabulary, tp tensor parallelism).
class StageBuilder {
 public:
  StageBuilder(const SimConfig& config, const Topology& topo, StringTable& names,
               const KernelNames& kn, int stage)
      : c(config),
        P(config.platform),
        m(config.model),
        topo_(topo),
        names_(names),
        kn_(kn),
        s(stage),
        tp(config.tp),
        T(static_cast<double>(config.mbs) * config.seqLen),
        h(m.hidden),
        f(m.ffn),
        V(m.vocab),
        kvWidth(2.0 * m.query_groups * (static_cast<double>(m.hidden) / m.heads)),
        Tnorm(config.sequenceParallel ? T / tp : T),
        first(stage == 0),
        last(stage == config.pp - 1),
        layers(m.layers / config.pp),
        recomputed(
            !config.recompute ? 0 : (config.recomputeLayers < 0 ? layers : config.recomputeLayers)),
        swiglu(m.mlp == MlpKind::SwiGlu),
        lora(config.workload == Workload::Lora),
        peak(P.peak_bf16_tflops * 1e12),
        hbm(P.hbm_bandwidth_gbs * 1e9 * P.hbm_efficiency),
        tokenScale(T / (T + config.gemmHalfTokens)),
        gemmEff(P.gemm_efficiency * tokenScale),
        gemmActivity(static_cast<float>(P.activity_gemm * (0.55 + 0.45 * tokenScale))),
        memActivity(static_cast<float>(P.activity_memory)),
        bf16(names.intern("BFloat16")),
        fp32(names.intern("Float")),
        tpGroup(config.tp > 1 ? group(GroupKind::Tp) : nullptr),
        epGroup(config.ep > 1 ? group(GroupKind::Ep) : nullptr),
        dpGroup(config.dp > 1 ? group(GroupKind::Dp) : nullptr),
        tpHidden(config.overlap ? config.tpOverlapFraction : 0.0),
        normF(m.norm == NormKind::LayerNorm ? kn.layerNormForward : kn.rmsNormForward),
        normB(m.norm == NormKind::LayerNorm ? kn.layerNormBackward : kn.rmsNormBackward),
        attnFlops(2.0 * config.mbs * static_cast<double>(config.seqLen) * config.seqLen * h / tp),
        ffnOut((swiglu ? 2.0 : 1.0) * f / tp) {}

  StageWork build() {
    parameters();
    forwardPass();
    backwardPass();
    optimizerOps();
    communicationOps();
    return w;
  }

 private:
  const ProcessGroup* group(GroupKind k) const { return topo_.worstGroup(k, s); }

  void gemm(OpCost& op, const std::string& name, double M, double N, double K, bool expert = false,
            double effScale = 1.0) {
    KernelSpec k;
    k.name = names_.intern(name);
    k.smS = 2.0 * M * N * K / (peak * gemmEff * effScale);
    k.fixedS = kLaunchGapS;
    k.activity = gemmActivity;
    k.expert = expert;
    // Roofline: a thin GEMM (a LoRA adapter of rank r, the MoE router's few columns) does too
    // few FLOPs per byte to keep the tensor cores busy; it runs at the speed of HBM reading its
    // operands and writing its result (bf16), independent of the SM clock, and draws the power
    // of a memory-bound kernel.
    const double memS = 2.0 * (M * K + K * N + M * N) / hbm;
    if (memS > k.smS) {
      k.smS = 0;
      k.fixedS += memS;
      k.activity = memActivity;
    }
    op.add(k);
  }
  // One adapter beside a GEMM of input width `in` and output width `out`: x A (in x r) then B
  // (r x out), counted as one small GEMM; the backward pass runs it twice (data and adapter
  // gradients).
  void adapter(OpCost& op, double in, double out, int times) {
    if (!lora) return;
    for (int i = 0; i < times; ++i)
      gemm(op, kn_.gemmSmall, T, c.loraRank, in + out, false, 0.5);
  }
  // The weight gradient of a base GEMM: none when the weights are frozen.
  void wgrad(OpCost& op, double M, double N, double K) {
    if (!lora) gemm(op, kn_.gemmWgrad, M, N, K);
  }
  void attention(OpCost& op, const std::string& name, double flops) {
    KernelSpec k;
    k.name = names_.intern(name);
    k.smS = flops / (peak * P.attention_efficiency);
    k.fixedS = kLaunchGapS;
    k.activity = static_cast<float>(P.activity_attention);
    op.add(k);
  }
  void memory(OpCost& op, const std::string& name, double bytes,
              GpuEventKind kind = GpuEventKind::Kernel) {
    KernelSpec k;
    k.name = names_.intern(name);
    k.kind = kind;
    k.cls = classifyKernel(name, kind, false);
    k.fixedS = bytes / hbm + kLaunchGapS;
    k.activity = memActivity;
    op.add(k);
  }
  // A collective of `bytes` (see comm_model.h for what bytes means per kind).
  void collective(OpCost& op, CommScope scope, const ProcessGroup* g, CollectiveKind kind,
                  double bytes, bool isFp32, bool sync, int64_t stream,
                  double hiddenFraction = 0.0) {
    if (!g) return;
    KernelSpec k;
    const CollectivePlan plan = planCollective(kind, bytes, *g, P);
    k.name = names_.intern(kn_.collective(kind, isFp32, plan.algorithm, plan.protocol));
    k.cls = KernelClass::Communication;
    k.stream = stream;
    const double t = plan.seconds;
    k.commS = t * (1.0 - hiddenFraction);
    k.hiddenS = t * hiddenFraction;
    k.linkBytes = plan.bytesPerRank * (1.0 - plan.netFraction);
    k.netBytes = plan.bytesPerRank * plan.netFraction;
    // Overlapped communication runs its NCCL kernel on SMs the compute it hides behind would
    // have used: that compute kernel slows by overlap_sm_slowdown for the hidden time.
    if (k.hiddenS > 0 && !op.kernels.empty() && op.kernels.back().smS > 0) {
      KernelSpec& before = op.kernels.back();
      const double extra = k.hiddenS * P.overlap_sm_slowdown;
      before.smS += extra;
      op.smS += extra;
      if (before.expert) op.expertSmS += extra;
      op.smActivityS += static_cast<double>(before.activity) * extra;
    }
    k.activity = static_cast<float>(P.activity_comm);
    k.sync = sync;
    k.scope = scope;
    k.collective = names_.intern(collectiveId(kind));
    k.dtype = isFp32 ? fp32 : bf16;
    const double elem = isFp32 ? 4.0 : 2.0;
    const double n = static_cast<double>(g->ranks.size());
    switch (kind) {
      case CollectiveKind::AllGather:
        k.nelems = static_cast<int64_t>(bytes / elem / n);
        k.outNelems = static_cast<int64_t>(bytes / elem);
        break;
      case CollectiveKind::ReduceScatter:
        k.nelems = static_cast<int64_t>(bytes / elem);
        k.outNelems = static_cast<int64_t>(bytes / elem / n);
        break;
      default:
        k.nelems = k.outNelems = static_cast<int64_t>(bytes / elem);
    }
    op.add(k);
  }
  void tpReduce(OpCost& op, double bytes) {  // after a row-parallel GEMM
    collective(op, CommScope::Tp, tpGroup,
               c.sequenceParallel ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
               bytes, false, true, kTensorParallelStream, tpHidden);
  }
  void tpGather(OpCost& op, double bytes) {  // before a column-parallel GEMM (SP only)
    if (c.sequenceParallel)
      collective(op, CommScope::Tp, tpGroup, CollectiveKind::AllGather, bytes, false, true,
                 kTensorParallelStream, tpHidden);
  }
  void layerForward(OpCost& op) {
    if (c.fsdp)
      collective(op, CommScope::Dp, dpGroup, CollectiveKind::AllGather, fsdpLayerBytes, false, true,
                 kDataParallelStream, c.overlap ? 0.9 : 0.0);
    memory(op, normF, 2.0 * Tnorm * h * kBf16);
    tpGather(op, T * h * kBf16);
    gemm(op, kn_.gemmForward, T, (h + kvWidth) / tp, h);
    adapter(op, h, (h + kvWidth) / tp, 1);
    if (m.rotary) memory(op, kn_.ropeForward, 2.0 * T * (h + kvWidth / 2) / tp * kBf16);
    attention(op, kn_.attentionForward, attnFlops);
    gemm(op, kn_.gemmForward, T, h, h / tp);
    adapter(op, h / tp, h, 1);
    tpReduce(op, T * h * kBf16);
    memory(op, kn_.residualAdd, 3.0 * Tnorm * h * kBf16);
    memory(op, normF, 2.0 * Tnorm * h * kBf16);
    if (!m.moe()) {
      tpGather(op, T * h * kBf16);
      gemm(op, kn_.gemmForward, T, ffnOut, h);
      adapter(op, h, ffnOut, 1);
      memory(op, swiglu ? kn_.swigluForward : kn_.geluForward,
             (swiglu ? 3.0 : 2.0) * T * f / tp * kBf16);
      gemm(op, kn_.gemmForward, T, h, f / tp);
      adapter(op, f / tp, h, 1);
      tpReduce(op, T * h * kBf16);
    } else {
      const double routed = T * m.topk;
      gemm(op, kn_.gemmSmall, T, m.experts, h, false, 0.5);
      memory(op, kn_.routerTopk, T * m.experts * 4.0 * 2.0);
      memory(op, kn_.permute, 2.0 * routed * h * kBf16);
      collective(op, CommScope::Ep, epGroup, CollectiveKind::AllToAll, routed * h * kBf16, false,
                 true, kExpertStream);
      gemm(op, kn_.gemmGrouped, routed, 2.0 * f / tp, h, true, 0.9);
      memory(op, kn_.swigluForward, 3.0 * routed * f / tp * kBf16);
      gemm(op, kn_.gemmGrouped, routed, h, f / tp, true, 0.9);
      collective(op, CommScope::Ep, epGroup, CollectiveKind::AllToAll, routed * h * kBf16, false,
                 true, kExpertStream);
      memory(op, kn_.unpermute, 2.0 * routed * h * kBf16);
      tpReduce(op, T * h * kBf16);
    }
    memory(op, kn_.residualAdd, 3.0 * Tnorm * h * kBf16);
  }
  void layerBackward(OpCost& op) {
    if (c.fsdp)
      collective(op, CommScope::Dp, dpGroup, CollectiveKind::AllGather, fsdpLayerBytes, false, true,
                 kDataParallelStream, c.overlap ? 0.9 : 0.0);
    memory(op, kn_.residualAdd, 3.0 * Tnorm * h * kBf16);
    if (!m.moe()) {
      tpGather(op, T * h * kBf16);
      gemm(op, kn_.gemmDgrad, T, f / tp, h);
      wgrad(op, T, f / tp, h);
      adapter(op, f / tp, h, 2);
      memory(op, swiglu ? kn_.swigluBackward : kn_.geluBackward,
             (swiglu ? 5.0 : 3.0) * T * f / tp * kBf16);
      gemm(op, kn_.gemmDgrad, T, h, ffnOut);
      wgrad(op, T, h, ffnOut);
      adapter(op, h, ffnOut, 2);
      tpReduce(op, T * h * kBf16);
    } else {
      const double routed = T * m.topk;
      memory(op, kn_.unpermute, 2.0 * routed * h * kBf16);
      collective(op, CommScope::Ep, epGroup, CollectiveKind::AllToAll, routed * h * kBf16, false,
                 true, kExpertStream);
      gemm(op, kn_.gemmGrouped, routed, f / tp, h, true, 0.9);
      if (!lora) gemm(op, kn_.gemmGrouped, routed, f / tp, h, true, 0.9);  // weight gradient
      memory(op, kn_.swigluBackward, 5.0 * routed * f / tp * kBf16);
      gemm(op, kn_.gemmGrouped, routed, h, 2.0 * f / tp, true, 0.9);
      if (!lora) gemm(op, kn_.gemmGrouped, routed, h, 2.0 * f / tp, true, 0.9);
      collective(op, CommScope::Ep, epGroup, CollectiveKind::AllToAll, routed * h * kBf16, false,
                 true, kExpertStream);
      memory(op, kn_.permute, 2.0 * routed * h * kBf16);
      gemm(op, kn_.gemmSmall, T, h, m.experts, false, 0.5);
      tpReduce(op, T * h * kBf16);
    }
    memory(op, normB, 3.0 * Tnorm * h * kBf16);
    memory(op, kn_.residualAdd, 3.0 * Tnorm * h * kBf16);
    tpGather(op, T * h * kBf16);
    gemm(op, kn_.gemmDgrad, T, h / tp, h);
    wgrad(op, T, h / tp, h);
    adapter(op, h / tp, h, 2);
    memory(op, kn_.attentionBackwardDot, 2.0 * T * h / tp * kBf16);
    attention(op, kn_.attentionBackward, 2.5 * attnFlops);
    memory(op, kn_.attentionBackwardConvert, T * h / tp * (4.0 + 2.0));
    if (m.rotary) memory(op, kn_.ropeBackward, 2.0 * T * (h + kvWidth / 2) / tp * kBf16);
    gemm(op, kn_.gemmDgrad, T, h, (h + kvWidth) / tp);
    wgrad(op, T, h, (h + kvWidth) / tp);
    adapter(op, h, (h + kvWidth) / tp, 2);
    tpReduce(op, T * h * kBf16);
    memory(op, normB, 3.0 * Tnorm * h * kBf16);
    if (c.fsdp)
      collective(op, CommScope::Dp, dpGroup, CollectiveKind::ReduceScatter, fsdpLayerBytes, false,
                 true, kDataParallelStream, c.overlap ? 0.9 : 0.0);
  }

  // Parameters held by one rank of this stage.
  void parameters() {
    const double attnParams = (h * (h + kvWidth) + h * h) / tp + 2.0 * h;
    const double denseMlpParams = (swiglu ? 3.0 : 2.0) * h * f / tp;
    const double routerParams = m.moe() ? h * m.experts : 0.0;
    const double expertParamsPerLayer =
        m.moe() ? static_cast<double>(m.experts) / c.ep * 3.0 * h * f / tp : 0.0;
    const double layerParams = attnParams + (m.moe() ? routerParams : denseMlpParams);
    w.denseParams = layers * layerParams;
    if (first) w.denseParams += V * h / tp;
    if (last) w.denseParams += V * h / tp + h;
    w.expertParams = layers * expertParamsPerLayer;
    fsdpLayerBytes = (layerParams + expertParamsPerLayer) * kBf16;
  }
  // The forward pass of one microbatch.
  void forwardPass() {
    // Forward pass of one microbatch: the first stage copies the token ids in, the last the labels
    // (int64 each, over PCIe).
    if (first) w.forward.hostBytes += T * 8.0;
    if (last && c.workload != Workload::Inference) w.forward.hostBytes += T * 8.0;
    if (first) {
      memory(w.forward, kn_.embeddingForward, 2.0 * T * h * kBf16);
      if (tpGroup)
        collective(w.forward, CommScope::Tp, tpGroup, CollectiveKind::AllReduce, T * h * kBf16,
                   false, true, kTensorParallelStream);
    }
    for (int l = 0; l < layers; ++l)
      layerForward(w.forward);
    if (last) {
      memory(w.forward, normF, 2.0 * Tnorm * h * kBf16);
      gemm(w.forward, kn_.gemmForward, T, V / tp, h);
      memory(w.forward, kn_.lossForward, 3.0 * T * V / tp * kBf16);
      for (int i = 0; i < 3 && tpGroup; ++i)  // vocab-parallel cross entropy: max, sum, target
        collective(w.forward, CommScope::Tp, tpGroup, CollectiveKind::AllReduce, T * 4.0, true,
                   true, kTensorParallelStream);
    }
  }
  // The backward pass of one microbatch.
  void backwardPass() {
    // Backward pass (with the recomputed forward of checkpointed layers).
    if (last) {
      memory(w.backward, kn_.lossBackward, 2.0 * T * V / tp * kBf16);
      gemm(w.backward, kn_.gemmDgrad, T, h, V / tp);
      wgrad(w.backward, T, h, V / tp);
      if (tpGroup && !c.sequenceParallel)
        collective(w.backward, CommScope::Tp, tpGroup, CollectiveKind::AllReduce, T * h * kBf16,
                   false, true, kTensorParallelStream, tpHidden);
      memory(w.backward, normB, 3.0 * Tnorm * h * kBf16);
    }
    for (int l = layers - 1; l >= 0; --l) {
      if (l < recomputed) layerForward(w.backward);
      layerBackward(w.backward);
    }
    if (first && !lora) memory(w.backward, kn_.embeddingBackward, 2.0 * T * h * 4.0);
  }
  // Iteration start, gradient norm and optimizer step.
  void optimizerOps() {
    // Iteration start, gradient norm, optimizer: over the trained parameters (LoRA: the adapters);
    // the distributed optimizer updates its 1/dp shard of them.
    adapters = loraAdapterParams(c, s);
    w.trainedParams = c.workload == Workload::Pretrain ? w.denseParams + w.expertParams
                      : lora                           ? adapters
                                                       : 0.0;
    const double trained = w.trainedParams;
    const double sharded = c.distributedOptimizer && c.dp > 1 ? trained / c.dp : trained;
    memory(w.zeroGrad, kn_.memset, 4.0 * 1024 * 1024, GpuEventKind::Memset);
    memory(w.zeroGrad, kn_.fill, trained * 4.0);
    memory(w.gradNormLocal, kn_.l2norm, sharded * 4.0);
    memory(w.optimizer, kn_.scale, sharded * 4.0);
    memory(w.optimizer, kn_.adam, sharded * 28.0);
    memory(w.optimizer, kn_.scale, sharded * 6.0);
  }
  // Pipeline exchanges, data-parallel reduction and the small collectives.
  void communicationOps() {
    // Communication ops.
    const double p2pBytes = T * h * kBf16 / tp;  // scatter-gather across tensor-parallel ranks
    if (s > 0) {
      const int rank = topo_.rankOf(0, 0, s);
      collective(w.p2pPrev, CommScope::P2pPrev,
                 &topo_.groups()[static_cast<size_t>(topo_.p2pPrevOf(rank))],
                 CollectiveKind::SendRecv, p2pBytes, false, false, kPipelineStream);
    }
    if (!last) {
      const int rank = topo_.rankOf(0, 0, s);
      collective(w.p2pNext, CommScope::P2pNext,
                 &topo_.groups()[static_cast<size_t>(topo_.groupOf(GroupKind::P2pPair, rank))],
                 CollectiveKind::SendRecv, p2pBytes, false, false, kPipelineStream);
    }
    // Gradient reduction over data parallel: an all-reduce, or with the distributed optimizer a
    // reduce-scatter (and the all-gather of the updated parameters after the step).
    const double denseGrads = lora ? adapters : w.denseParams;
    const double expertGrads = lora ? 0.0 : w.expertParams;
    const CollectiveKind reduceKind =
        c.distributedOptimizer ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;
    auto dpCollectives = [&](OpCost& op, double fraction, CollectiveKind kind, double hidden = 0) {
      if (c.workload == Workload::Inference) return;
      if (!c.fsdp && dpGroup)
        collective(op, CommScope::Dp, dpGroup, kind, denseGrads * kBf16 * fraction, false, false,
                   kDataParallelStream, hidden);
      if (m.moe() && c.dp / c.ep > 1 && expertGrads > 0)
        collective(op, CommScope::ExpertDp, group(GroupKind::ExpertDp), kind,
                   expertGrads * kBf16 * fraction, false, false, kDataParallelStream, hidden);
    };
    dpCollectives(w.dpReduce, 1.0, reduceKind);
    const double buckets = c.dpBuckets;
    dpCollectives(w.dpMain, (buckets - 1.0) / buckets, reduceKind);
    dpCollectives(w.dpTail, 1.0 / buckets, reduceKind);
    // With overlap (overlap_param_sync) the gather runs under the next iteration's first forward
    // passes; 10 % of it stays exposed, as for the FSDP gathers.
    if (c.distributedOptimizer)
      dpCollectives(w.paramGather, 1.0, CollectiveKind::AllGather, c.overlap ? 0.9 : 0.0);
    if (m.tied_embeddings && c.pp > 1 && (first || last)) {
      const int rank = topo_.rankOf(0, 0, s);
      const int g = topo_.groupOf(GroupKind::Embedding, rank);
      if (g >= 0)
        collective(w.embeddingSync, CommScope::Embedding, &topo_.groups()[static_cast<size_t>(g)],
                   CollectiveKind::AllReduce, V * h / tp * kBf16, false, false,
                   kDataParallelStream);
    }
    if (c.tp * c.pp > 1)
      collective(w.gradNorm, CommScope::ModelParallel, group(GroupKind::ModelParallel),
                 CollectiveKind::AllReduce, 4.0, true, false, kDataParallelStream);
  }

  const SimConfig& c;
  const PlatformProfile& P;
  const ModelShape& m;
  const Topology& topo_;
  StringTable& names_;
  const KernelNames& kn_;
  const int s;
  const double tp, T, h, f, V;
  const double kvWidth;  // K and V projection width
  const double Tnorm;    // rows a norm / residual touches
  const bool first, last;
  const int layers, recomputed;
  const bool swiglu;
  // LoRA: the base weights are frozen (no weight-gradient GEMMs), rank-r adapters beside the QKV,
  // projection, FC1 and FC2 GEMMs run their own small GEMMs forward and backward.
  const bool lora;
  const double peak, hbm, tokenScale, gemmEff;
  const float gemmActivity, memActivity;
  const uint32_t bf16, fp32;
  const ProcessGroup *tpGroup, *epGroup, *dpGroup;
  const double tpHidden;
  const std::string& normF;
  const std::string& normB;
  const double attnFlops;
  const double ffnOut;  // fc1 output width
  double fsdpLayerBytes = 0;
  double adapters = 0;  // LoRA adapter parameters of a rank of this stage
  StageWork w;
};

}  // namespace

void OpCost::add(KernelSpec k) {
  if (k.scope != CommScope::None) k.scopeIndex = scopeCount[static_cast<size_t>(k.scope)]++;
  smS += k.smS;
  if (k.expert) expertSmS += k.smS;
  fixedS += k.fixedS;
  commS += k.commS;
  hiddenS += k.hiddenS;
  smActivityS += static_cast<double>(k.activity) * k.smS;
  fixedActivityS += static_cast<double>(k.activity) * k.fixedS;
  linkBytes += k.linkBytes;
  netBytes += k.netBytes;
  kernels.push_back(k);
}

WorkModel::WorkModel(const SimConfig& c, const Topology& topo, StringTable& names)
    : c_(c), topo_(topo), names_(names), kn_(kernelNamesFor(c.platform.vendor)) {
  for (int s = 0; s < c.pp; ++s)
    stages_.push_back(buildStage(s));
}

double WorkModel::nominalIterationS(int s, int microbatches) const {
  const StageWork& w = stage(s);
  auto t = [](const OpCost& o) { return o.smS + o.fixedS + o.commS; };
  double total = c_.hostGapS + t(w.zeroGrad) + microbatches * (t(w.forward) + t(w.backward)) +
                 t(w.gradNormLocal) + t(w.optimizer) + t(w.embeddingSync) + t(w.gradNorm);
  total += 2.0 * microbatches * std::max(t(w.p2pPrev), t(w.p2pNext));
  total += c_.overlap ? t(w.dpTail) : t(w.dpReduce);
  total += t(w.paramGather);
  if (c_.workload == Workload::Inference)
    total = c_.hostGapS + microbatches * (t(w.forward) + std::max(t(w.p2pPrev), t(w.p2pNext)));
  return total;
}

StageWork WorkModel::buildStage(int s) {
  return StageBuilder(c_, topo_, names_, kn_, s).build();
}

}  // namespace wl::sim
