// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/kernel_categories.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace wl {
namespace {

struct CategoryDef {
  std::string_view id, label;
};
constexpr std::array<CategoryDef, kKernelCategoryCount> kDefs = {{
    {"allreduce", "AllReduce"},
    {"reducescatter", "ReduceScatter"},
    {"allgather", "AllGather"},
    {"sendrecv", "SendRecv"},
    {"communication", "Communication (other)"},
    {"memory", "Memory"},
    {"matmul", "MatMul"},
    {"elementwise", "Memory/Elementwise"},
    {"layernorm", "LayerNorm"},
    {"attention", "Attention"},
    {"other", "Other"},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool has(const std::string& s, std::string_view p) {
  return s.find(p) != std::string::npos;
}

bool anyOf(const std::string& s, std::initializer_list<std::string_view> ps) {
  return std::any_of(ps.begin(), ps.end(), [&](std::string_view p) { return has(s, p); });
}

// The collective of a communication kernel name, or Communication when none matches.
KernelCategory collectiveOf(const std::string& n) {
  if (has(n, "allreduce")) return KernelCategory::AllReduce;
  if (has(n, "reducescatter")) return KernelCategory::ReduceScatter;
  if (has(n, "allgather")) return KernelCategory::AllGather;
  if (has(n, "sendrecv") || has(n, "broadcast")) return KernelCategory::SendRecv;
  return KernelCategory::Communication;
}

}  // namespace

std::string_view kernelCategoryId(KernelCategory c) {
  return kDefs[static_cast<size_t>(c)].id;
}
std::string_view kernelCategoryLabel(KernelCategory c) {
  return kDefs[static_cast<size_t>(c)].label;
}

KernelCategory seedPaperCategory(std::string_view name) {
  const std::string n = lower(name);
  const bool comm = has(n, "nccl") || has(n, "communication");
  if (comm && has(n, "allreduce")) return KernelCategory::AllReduce;
  if (comm && has(n, "reducescatter")) return KernelCategory::ReduceScatter;
  if (comm && has(n, "allgather")) return KernelCategory::AllGather;
  if (comm && (has(n, "sendrecv") || has(n, "broadcast"))) return KernelCategory::SendRecv;
  if (anyOf(n, {"pushsend", "pushrecv", "buffer", "userbuffer"})) return KernelCategory::Memory;
  if (has(n, "triton_") && anyOf(n, {"sum", "add", "mul", "div"})) return KernelCategory::Memory;
  if (has(n, "triton_") && has(n, "gemm")) return KernelCategory::MatMul;
  if (anyOf(n, {"gemm", "sdpa", "matmul"})) return KernelCategory::MatMul;
  if (has(n, "elementwise") || has(n, "kernel")) return KernelCategory::Elementwise;
  if (has(n, "norm")) return KernelCategory::LayerNorm;
  return KernelCategory::Other;
}

KernelCategory correctedCategory(std::string_view name, KernelClass cls, GpuEventKind kind) {
  const std::string n = lower(name);
  if (cls == KernelClass::Communication || has(n, "nccl") || has(n, "rccl")) return collectiveOf(n);
  if (cls == KernelClass::Memory || kind == GpuEventKind::Memcpy || kind == GpuEventKind::Memset ||
      anyOf(n, {"memcpy", "memset", "pushsend", "pushrecv", "userbuffer"}))
    return KernelCategory::Memory;
  if (anyOf(n, {"flash", "fmha", "sdpa", "attention", "attn"})) return KernelCategory::Attention;
  // nvjet_*: cuBLAS's GEMM kernels on Hopper since CUDA 12.8 (PyTorch 2.11 on an H200).
  if (anyOf(n, {"gemm", "matmul", "cutlass", "xmma", "cublas", "wgmma", "hgemm", "sgemm", "nvjet"}))
    return KernelCategory::MatMul;
  if (has(n, "norm")) return KernelCategory::LayerNorm;
  if (anyOf(n, {"elementwise", "reduce", "softmax", "triton_", "vectorized", "unrolled", "copy",
                "fill", "index", "dropout", "gelu", "silu", "relu", "adam"}))
    return KernelCategory::Elementwise;
  return KernelCategory::Other;
}

}  // namespace wl
