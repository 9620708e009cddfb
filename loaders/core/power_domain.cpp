// SPDX-License-Identifier: GPL-3.0-or-later
// Power domains: derivation from GpuInfo::package and validation (power_domain.h).
#include "loaders/core/power_domain.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace wl {

bool PowerDomain::operator==(const PowerDomain& o) const {
  const bool sameLimit = (std::isnan(power_limit_w) && std::isnan(o.power_limit_w)) ||
                         power_limit_w == o.power_limit_w;
  return id == o.id && kind == o.kind && name == o.name && node == o.node && sameLimit &&
         gpus == o.gpus && power_gpu == o.power_gpu;
}

std::string_view powerRoleId(PowerRole r) {
  switch (r) {
    case PowerRole::Whole:
      return "whole";
    case PowerRole::Share:
      return "share";
    case PowerRole::None:
      return "none";
  }
  return "none";
}

PowerRole powerRole(const PowerDomain& d, int gpu) {
  if (d.power_gpu == gpu) return PowerRole::Whole;
  if (d.power_gpu < 0 && std::find(d.gpus.begin(), d.gpus.end(), gpu) != d.gpus.end())
    return d.gpus.size() == 1 ? PowerRole::Whole : PowerRole::Share;
  return PowerRole::None;
}

std::vector<PowerDomain> deriveDomains(const std::vector<GpuInfo>& gpus,
                                       const std::vector<bool>& hasPower) {
  // Group key: (node, package) for GPUs with a package, else the GPU alone.
  std::map<std::pair<int, int>, std::vector<int>> packages;
  for (size_t g = 0; g < gpus.size(); ++g)
    if (gpus[g].package >= 0)
      packages[{gpus[g].node, gpus[g].package}].push_back(static_cast<int>(g));
  std::vector<std::vector<int>> groups;
  std::vector<bool> placed(gpus.size(), false);
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (placed[g]) continue;
    std::vector<int> members{static_cast<int>(g)};
    if (gpus[g].package >= 0) members = packages[{gpus[g].node, gpus[g].package}];
    for (int m : members)
      placed[static_cast<size_t>(m)] = true;
    groups.push_back(std::move(members));
  }

  std::vector<PowerDomain> out;
  for (const std::vector<int>& members : groups) {
    PowerDomain d;
    d.id = static_cast<int>(out.size());
    d.gpus = members;
    const GpuInfo& first = gpus[static_cast<size_t>(members.front())];
    d.node = first.node;
    if (members.size() == 1) {
      d.kind = domain_kind::kBoard;
      d.name = fmt::format("gpu {}", members.front());
      d.power_gpu = members.front();
    } else {
      d.kind = domain_kind::kPackage;
      d.name = fmt::format("package {}", first.package);
      int withPower = 0, which = -1;
      for (int m : members)
        if (static_cast<size_t>(m) < hasPower.size() && hasPower[static_cast<size_t>(m)])
          ++withPower, which = m;
      d.power_gpu = withPower == 1 ? which : -1;
    }
    if (d.power_gpu >= 0) d.power_limit_w = gpus[static_cast<size_t>(d.power_gpu)].power_limit_w;
    if (!std::isfinite(d.power_limit_w))
      for (int m : members) {
        const float l = gpus[static_cast<size_t>(m)].power_limit_w;
        if (std::isfinite(l) && (std::isnan(d.power_limit_w) || l > d.power_limit_w))
          d.power_limit_w = l;
      }
    out.push_back(std::move(d));
  }
  return out;
}

std::string domainProblem(const std::vector<PowerDomain>& domains, size_t gpuCount) {
  std::vector<int> owner(gpuCount, -1);
  for (size_t i = 0; i < domains.size(); ++i) {
    const PowerDomain& d = domains[i];
    if (d.id != static_cast<int>(i))
      return fmt::format("domain {} has id {} (ids are dense)", i, d.id);
    if (d.gpus.empty()) return fmt::format("domain {} has no GPU", i);
    if (!std::is_sorted(d.gpus.begin(), d.gpus.end()))
      return fmt::format("the GPUs of domain {} are not in ascending order", i);
    for (int g : d.gpus) {
      if (g < 0 || static_cast<size_t>(g) >= gpuCount)
        return fmt::format("domain {} names GPU {}, but the run has {} GPUs", i, g, gpuCount);
      if (owner[static_cast<size_t>(g)] >= 0)
        return fmt::format("GPU {} belongs to domains {} and {}", g, owner[static_cast<size_t>(g)],
                           i);
      owner[static_cast<size_t>(g)] = static_cast<int>(i);
    }
    if (d.power_gpu >= 0 && std::find(d.gpus.begin(), d.gpus.end(), d.power_gpu) == d.gpus.end())
      return fmt::format("the power GPU {} of domain {} is not one of its GPUs", d.power_gpu, i);
  }
  for (size_t g = 0; g < gpuCount; ++g)
    if (owner[g] < 0) return fmt::format("GPU {} belongs to no domain", g);
  return "";
}

std::vector<int> domainOfGpus(const std::vector<PowerDomain>& domains, size_t gpuCount) {
  std::vector<int> out(gpuCount, -1);
  for (const PowerDomain& d : domains)
    for (int g : d.gpus)
      if (g >= 0 && static_cast<size_t>(g) < gpuCount) out[static_cast<size_t>(g)] = d.id;
  return out;
}

}  // namespace wl
