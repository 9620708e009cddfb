// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/kernel_class.h"

namespace wl {
namespace {

bool startsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

}  // namespace

std::string_view kernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::Compute:
      return "compute";
    case KernelClass::Communication:
      return "communication";
    case KernelClass::Memory:
      return "memory";
    case KernelClass::Other:
      return "other";
  }
  return "other";
}

bool isCollectiveKernelName(std::string_view name) {
  return startsWith(name, "nccl") || startsWith(name, "rccl") || contains(name, "ncclKernel") ||
         contains(name, "ncclDevKernel");
}

KernelClass classifyKernel(std::string_view name, GpuEventKind kind, bool hasCollectiveMetadata) {
  if (hasCollectiveMetadata || isCollectiveKernelName(name)) return KernelClass::Communication;
  if (kind == GpuEventKind::Memcpy || kind == GpuEventKind::Memset) return KernelClass::Memory;
  if (contains(name, "Memcpy") || contains(name, "Memset") || contains(name, "memcpy") ||
      contains(name, "memset") || contains(name, "dma"))
    return KernelClass::Memory;
  if (kind == GpuEventKind::Kernel) return KernelClass::Compute;
  return KernelClass::Other;
}

}  // namespace wl
