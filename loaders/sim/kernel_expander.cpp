// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/kernel_expander.h"

#include <algorithm>
#include <cmath>

namespace wl::sim {
namespace {

int64_t toNs(double s) {
  return std::llround(s * 1e9);
}

}  // namespace

KernelSink::KernelSink(const Topology& topo, const std::vector<int>& tracedRanks,
                       ScratchFile& scratch, StringTable& names)
    : topo_(topo),
      names_(names),
      tracedRanks_(tracedRanks),
      tracedIndex_(static_cast<size_t>(topo.world()), -1),
      kernelSpill_(scratch, tracedRanks.size() * kStreams.size(), size_t{64} << 20),
      collectiveSpill_(scratch, tracedRanks.size() * kStreams.size(), size_t{32} << 20),
      eventCount_(tracedRanks.size() * kStreams.size(), 0),
      groupStrings_(topo.groups().size(), {0, 0, 0}) {
  for (size_t i = 0; i < tracedRanks_.size(); ++i)
    tracedIndex_[static_cast<size_t>(tracedRanks_[i])] = static_cast<int>(i);
}

size_t KernelSink::slotOf(int rank, int64_t stream) const {
  size_t s = 0;
  while (s + 1 < kStreams.size() && kStreams[s] != stream)
    ++s;
  return static_cast<size_t>(tracedIndex_[static_cast<size_t>(rank)]) * kStreams.size() + s;
}

int KernelSink::groupFor(CommScope scope, int rank) const {
  switch (scope) {
    case CommScope::Tp:
      return topo_.groupOf(GroupKind::Tp, rank);
    case CommScope::Ep:
      return topo_.groupOf(GroupKind::Ep, rank);
    case CommScope::Dp:
      return topo_.groupOf(GroupKind::Dp, rank);
    case CommScope::ExpertDp:
      return topo_.groupOf(GroupKind::ExpertDp, rank);
    case CommScope::ModelParallel:
      return topo_.groupOf(GroupKind::ModelParallel, rank);
    case CommScope::Embedding:
      return topo_.groupOf(GroupKind::Embedding, rank);
    case CommScope::P2pPrev:
      return topo_.p2pPrevOf(rank);
    case CommScope::P2pNext:
      return topo_.groupOf(GroupKind::P2pPair, rank);
    case CommScope::None:
      break;
  }
  return -1;
}

const std::array<uint32_t, 3>& KernelSink::groupStrings(int group) {
  std::array<uint32_t, 3>& s = groupStrings_[static_cast<size_t>(group)];
  if (s[0] == 0) {
    const ProcessGroup& g = topo_.groups()[static_cast<size_t>(group)];
    s = {names_.intern(g.name), names_.intern(g.desc), names_.intern(g.ranksText)};
  }
  return s;
}

void KernelSink::emit(int rank, double startS, double endS, const KernelSpec& k, float clockMhz,
                      int64_t seq) {
  const size_t slot = slotOf(rank, k.stream);
  Kernel e{};
  e.startNs = toNs(startS);
  e.durNs = std::max<int64_t>(0, toNs(endS) - e.startNs);
  e.name = k.name;
  e.clockMhz = clockMhz;
  e.cls = static_cast<uint8_t>(k.cls);
  e.kind = static_cast<uint8_t>(k.kind);
  kernelSpill_.push(slot, e);
  if (k.scope != CommScope::None) {
    const int g = groupFor(k.scope, rank);
    if (g >= 0) {
      const std::array<uint32_t, 3>& s = groupStrings(g);
      Collective c{};
      c.event = eventCount_[slot];
      c.collective = k.collective;
      c.inNelems = k.nelems;
      c.outNelems = k.outNelems;
      c.groupSize = static_cast<int32_t>(topo_.groups()[static_cast<size_t>(g)].ranks.size());
      c.dtype = k.dtype;
      c.pgName = s[0];
      c.pgDesc = s[1];
      c.pgRanks = s[2];
      c.seq = seq;
      collectiveSpill_.push(slot, c);
    }
  }
  ++eventCount_[slot];
  ++kernels_;
}

void KernelSink::annotate(int rank, double startS, double endS, uint32_t name) {
  Annotation a;
  a.rank = rank;
  a.start_ns = toNs(startS);
  a.dur_ns = std::max<int64_t>(0, toNs(endS) - a.start_ns);
  a.name = name;
  a.on_gpu = true;
  annotations_.push_back(a);
}

KernelTrack KernelSink::takeTrack(size_t slot, int64_t startNs) {
  KernelTrack t;
  t.rank = tracedRanks_[slot / kStreams.size()];
  t.stream = kStreams[slot % kStreams.size()];
  t.device = topo_.placement(t.rank).local;
  const std::vector<Kernel> ks = kernelSpill_.take(slot);
  t.events.reserve(ks.size());
  t.truth_clock_mhz.reserve(ks.size());
  for (size_t i = 0; i < ks.size(); ++i) {
    const Kernel& k = ks[i];
    KernelEvent e;
    e.start_ns = startNs + k.startNs;
    e.dur_ns = k.durNs;
    e.name = k.name;
    e.cls = static_cast<KernelClass>(k.cls);
    e.kind = static_cast<GpuEventKind>(k.kind);
    e.correlation = static_cast<int64_t>(i) + 1;
    t.events.push_back(e);
    t.truth_clock_mhz.push_back(k.clockMhz);
  }
  for (const Collective& c : collectiveSpill_.take(slot)) {
    CollectiveInfo ci;
    ci.event = c.event;
    ci.collective = c.collective;
    ci.in_nelems = c.inNelems;
    ci.out_nelems = c.outNelems;
    ci.group_size = c.groupSize;
    ci.dtype = c.dtype;
    ci.pg_name = c.pgName;
    ci.pg_desc = c.pgDesc;
    ci.pg_ranks = c.pgRanks;
    ci.seq = c.seq;
    t.collectives.push_back(ci);
  }
  return t;
}

std::vector<Annotation> KernelSink::takeAnnotations(int64_t startNs) {
  std::vector<Annotation> out = std::move(annotations_);
  annotations_.clear();
  for (Annotation& a : out)
    a.start_ns += startNs;
  return out;
}

void KernelExpander::expandPhase(const PhaseLayout& p) {
  const OpCost& cost = *p.cost;
  const std::vector<int>& members = *p.members;
  const size_t n = members.size();
  const std::vector<double>& hs = *p.historyS;
  const std::vector<float>& hc = *p.historyMhz;
  cursor_.assign(n, p.startS);
  hist_.assign(n, 0);
  placed_.clear();
  Rng noise = Rng::keyed(p.seed, RandomPurpose::KernelNoise, p.unit,
                         static_cast<uint64_t>(p.iteration), p.op);
  auto clockAt = [&](size_t m, double t) {
    size_t& i = hist_[m];
    while (i + 1 < hs.size() && hs[i + 1] <= t)
      ++i;
    return hc[i * n + m];
  };
  for (uint32_t ki = 0; ki < cost.kernels.size(); ++ki) {
    const KernelSpec& k = cost.kernels[ki];
    if (k.scope != CommScope::None) {
      // A collective inside the unit: every member waits for the last to arrive.
      double last = p.startS;
      for (size_t m = 0; m < n; ++m)
        last = std::max(last, cursor_[m]);
      const double end = last + k.commS;
      for (size_t m = 0; m < n; ++m) {
        if (sink_.traced(members[m])) {
          const double start = std::max(p.startS, cursor_[m] - k.hiddenS);
          placed_.push_back({static_cast<uint32_t>(m), ki, start, end, clockAt(m, cursor_[m])});
        }
        cursor_[m] = end;
      }
      continue;
    }
    const double gap = std::min(kLaunchGapS, k.fixedS);
    for (size_t m = 0; m < n; ++m) {
      const float f = clockAt(m, cursor_[m]);
      const double jitter =
          1.0 + std::clamp(kKernelNoise * noise.normal(), -3 * kKernelNoise, 3 * kKernelNoise);
      const double factor = (*p.factor)[m] * (k.expert ? (*p.expertFactor)[m] : 1.0) * jitter;
      const double start = cursor_[m] + gap;
      const double end = start + (k.smS * factor * p.maxClockMhz / f + (k.fixedS - gap)) * jitter;
      if (sink_.traced(members[m]))
        placed_.push_back({static_cast<uint32_t>(m), ki, start, end, f});
      cursor_[m] = end;
    }
  }
  double walkEnd = p.startS;
  for (double c : cursor_)
    walkEnd = std::max(walkEnd, c);
  const double scale = walkEnd > p.startS ? (p.endS - p.startS) / (walkEnd - p.startS) : 1.0;
  for (const Placed& pl : placed_) {
    const KernelSpec& k = cost.kernels[pl.kernel];
    const double s = p.startS + (pl.start - p.startS) * scale;
    const double e = std::min({p.endS, p.cutS, p.startS + (pl.end - p.startS) * scale});
    if (s >= p.cutS) continue;
    const int64_t seq = k.scope != CommScope::None
                            ? collectiveSeq(k, p.iteration, *p.seqBase, *p.perIteration)
                            : -1;
    sink_.emit(members[pl.member], s, e, k, pl.clock, seq);
  }
}

void KernelExpander::expandComm(const OpCost& cost, const std::vector<int>& members,
                                double arrivalS, double endS, const std::vector<double>& clockMhz,
                                int64_t iteration, const std::array<int, kCommScopes>& seqBase,
                                const std::array<int, kCommScopes>& perIteration) {
  // Back to back from the end: the first kernel also holds the wait for the other side.
  double after = 0;
  std::vector<double> ends(cost.kernels.size());
  for (size_t i = cost.kernels.size(); i-- > 0;) {
    ends[i] = endS - after;
    after += cost.kernels[i].commS;
  }
  for (size_t m = 0; m < members.size(); ++m) {
    const int rank = members[m];
    if (!sink_.traced(rank)) continue;
    double start = arrivalS;
    for (size_t i = 0; i < cost.kernels.size(); ++i) {
      const KernelSpec& k = cost.kernels[i];
      const double end = std::max(start, ends[i]);
      sink_.emit(rank, start, end, k, static_cast<float>(clockMhz[static_cast<size_t>(rank)]),
                 collectiveSeq(k, iteration, seqBase, perIteration));
      start = end;
    }
  }
}

}  // namespace wl::sim
