// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Kernel classes of docs/analyses.md (after HTA, without its "every ^hip name is communication"
// rule): communication, memory, compute, other. First match wins.

#include <cstdint>
#include <string_view>

namespace wl {

enum class KernelClass : uint8_t { Compute = 0, Communication = 1, Memory = 2, Other = 3 };
inline constexpr int kKernelClassCount = 4;

std::string_view kernelClassName(KernelClass c);  // "compute", "communication", ...

// What kind of GPU activity a trace event is, as far as its source says.
enum class GpuEventKind : uint8_t {
  Kernel,  // a kernel launch (cat "kernel"/"Kernel", CUPTI kernel, rocprof dispatch)
  Memcpy,  // cat gpu_memcpy / Memcpy, CUPTI memcpy, rocprof memory_copy
  Memset,  // cat gpu_memset / Memset
  Other,   // anything else that runs on the device (sync, markers)
};

// Classifies a device event. hasCollectiveMetadata is true when the source attached NCCL/RCCL
// collective arguments to it.
KernelClass classifyKernel(std::string_view name, GpuEventKind kind, bool hasCollectiveMetadata);

// True if the kernel name is an NCCL/RCCL kernel by name alone.
bool isCollectiveKernelName(std::string_view name);

}  // namespace wl
