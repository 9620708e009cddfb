// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/run_alignment.h"

#include <algorithm>
#include <map>
#include <set>

namespace wl {

std::optional<int64_t> iterationStart(const RunFile& run, int64_t step) {
  std::optional<int64_t> best;
  for (const Iteration& it : run.iterations())
    if (it.step == step && (!best || it.start_ns < *best)) best = it.start_ns;
  return best;
}

std::vector<int64_t> commonSteps(const RunFile& a, const RunFile& b) {
  std::set<int64_t> sa, sb;
  for (const Iteration& it : a.iterations())
    sa.insert(it.step);
  for (const Iteration& it : b.iterations())
    sb.insert(it.step);
  std::vector<int64_t> out;
  std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(out));
  return out;
}

int64_t alignAtStart(const RunFile& a, const RunFile& b) {
  return a.info().start_ns - b.info().start_ns;
}

std::optional<int64_t> alignAtIteration(const RunFile& a, const RunFile& b, int64_t step) {
  const auto sa = iterationStart(a, step), sb = iterationStart(b, step);
  if (!sa || !sb) return std::nullopt;
  return *sa - *sb;
}

std::pair<AlignMode, int64_t> defaultAlignment(const RunFile& a, const RunFile& b,
                                               int64_t* stepOut) {
  const auto steps = commonSteps(a, b);
  if (!steps.empty()) {
    const int64_t step = steps.size() > 1 ? steps[1] : steps[0];
    if (stepOut) *stepOut = step;
    return {AlignMode::Warp, *alignAtIteration(a, b, step)};
  }
  return {AlignMode::Start, alignAtStart(a, b)};
}

std::vector<std::pair<int, int>> pairGpus(const RunFile& a, const RunFile& b, PairBy by) {
  std::vector<std::pair<int, int>> out;
  const auto& ga = a.gpus();
  const auto& gb = b.gpus();
  switch (by) {
    case PairBy::Index:
      for (size_t i = 0; i < std::min(ga.size(), gb.size()); ++i)
        out.emplace_back(static_cast<int>(i), static_cast<int>(i));
      break;
    case PairBy::Rank: {
      std::map<int, int> byRank;
      for (const GpuInfo& g : gb)
        if (g.rank >= 0) byRank.emplace(g.rank, g.id);
      for (const GpuInfo& g : ga)
        if (auto it = byRank.find(g.rank); g.rank >= 0 && it != byRank.end())
          out.emplace_back(g.id, it->second);
      break;
    }
    case PairBy::Slot: {
      std::map<std::pair<int, int>, int> bySlot;
      for (const GpuInfo& g : gb)
        bySlot.emplace(std::make_pair(g.node, g.local_index), g.id);
      for (const GpuInfo& g : ga)
        if (auto it = bySlot.find({g.node, g.local_index}); it != bySlot.end())
          out.emplace_back(g.id, it->second);
      break;
    }
  }
  return out;
}

}  // namespace wl
