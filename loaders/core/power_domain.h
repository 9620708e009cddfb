// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Power domains: what owns power and energy in a run (docs/format.md, "/domains").
//
// A device (a GPU, or one GCD of an AMD MI250) owns its clocks, temperatures, utilization and
// kernels. Power is measured and capped per power domain: an H100 or H200 board holds one device;
// an MI250 OAM package holds two GCDs behind one power sensor and one power cap, and reports the
// package's power on one of them (later: an MI300X socket, a GH200 superchip). Every device belongs
// to exactly one domain. Analyses that involve power (energy, mean and peak power, power-cap
// throttling, burstiness, energy per token) count domains, so a package is counted once; the
// others count devices.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/core/run_model.h"

namespace wl {

namespace domain_kind {
inline constexpr std::string_view kBoard = "board";      // one device with its own power sensor
inline constexpr std::string_view kPackage = "package";  // several devices, one sensor, one cap
}  // namespace domain_kind

struct PowerDomain {
  int id = 0;        // dense index 0..n-1
  std::string kind;  // domain_kind: "board" or "package"; readers accept other kinds as given
  std::string name;  // for display: "gpu 3", "package 1"
  int node = 0;      // node of its devices
  float power_limit_w = kNaNf;  // the domain's power cap (an MI250 package's cap), NaN if unknown
  std::vector<int> gpus;        // its devices (GpuInfo::id), ascending
  // The device whose power_w column carries the domain's power. -1 when every device reports its
  // own share (the domain's power is the sum of its devices' power) or none reports any.
  int power_gpu = -1;

  bool operator==(const PowerDomain& o) const;
};

// What a device's power_w column holds.
enum class PowerRole : uint8_t {
  Whole,  // the domain's power: a board, or the GCD that reports its package's power
  Share,  // its own share: the domain's power is the sum of its devices' columns (power_gpu -1)
  None,   // nothing: the domain's power is on another device (the other GCD of an MI250 package)
};
std::string_view powerRoleId(PowerRole r);  // "whole", "share", "none"
PowerRole powerRole(const PowerDomain& d, int gpu);

// The domains of GPUs whose caller gave none. GPUs with the same GpuInfo::package (>= 0) on the
// same node form one "package" domain when there are several of them; every other GPU is a
// "board" of its own. hasPower[g] says whether GPU g has power samples (empty: unknown): a
// package's power_gpu is its one device with power samples; with none, or several (each reports
// its share), it is -1. A board's power_gpu is its device. The cap is the power device's
// power_limit_w, else the largest of its devices'. Domains are numbered by their first GPU.
std::vector<PowerDomain> deriveDomains(const std::vector<GpuInfo>& gpus,
                                       const std::vector<bool>& hasPower = {});

// Why `domains` are not a valid partition of `gpuCount` GPUs (ids dense, every GPU in exactly one
// domain, members ascending, power_gpu a member or -1), or "" when they are.
std::string domainProblem(const std::vector<PowerDomain>& domains, size_t gpuCount);

// The domain id of every GPU (domains must be valid).
std::vector<int> domainOfGpus(const std::vector<PowerDomain>& domains, size_t gpuCount);

}  // namespace wl
