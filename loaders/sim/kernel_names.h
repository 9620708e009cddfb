// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Kernel names as the profilers of real training runs show them: cuBLAS (sm90_xmma_gemm_...),
// FlashAttention, Transformer Engine and PyTorch elementwise kernels, apex optimizers and NCCL
// (ncclDevKernel_...) on NVIDIA; Tensile (Cijk_...), Composable Kernel attention, apex and RCCL
// (ncclDevKernel_Generic) on AMD. Names follow those seen in public Kineto traces; they matter
// because the analyses classify kernels by name (wl::classifyKernel and the seed paper's
// categories).

#include <string>

#include "loaders/sim/comm_model.h"
#include "loaders/sim/platform_profile.h"

namespace wl::sim {

struct KernelNames {
  std::string gemmForward, gemmDgrad, gemmWgrad, gemmSmall, gemmGrouped;
  std::string attentionForward, attentionBackwardDot, attentionBackward, attentionBackwardConvert;
  std::string layerNormForward, layerNormBackward, rmsNormForward, rmsNormBackward;
  std::string ropeForward, ropeBackward;
  std::string residualAdd, geluForward, geluBackward, swigluForward, swigluBackward;
  std::string embeddingForward, embeddingBackward, lossForward, lossBackward;
  std::string routerTopk, permute, unpermute;
  std::string adam, l2norm, scale, fill, memset;
  Vendor vendor = Vendor::Nvidia;

  // The communication kernel of a collective ("bf16" or "f32" reductions) as NCCL names it for
  // the algorithm and protocol it picked (RCCL: ncclDevKernel_Generic).
  std::string collective(CollectiveKind kind, bool fp32, Algorithm algorithm = Algorithm::Ring,
                         Protocol protocol = Protocol::LL) const;
};

KernelNames kernelNamesFor(Vendor v);

// "allreduce", "allgather", ... as CollectiveInfo::collective spells it.
const char* collectiveId(CollectiveKind kind);

}  // namespace wl::sim
