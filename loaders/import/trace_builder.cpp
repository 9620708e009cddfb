// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/trace_builder.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

namespace wl::import {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The '_'-separated fields of an NCCL kernel name after its prefix, or empty.
std::vector<std::string_view> ncclFields(std::string_view name) {
  for (std::string_view prefix : {"ncclKernel_", "ncclDevKernel_", "rcclKernel_"}) {
    const size_t at = name.find(prefix);
    if (at == std::string_view::npos) continue;
    std::string_view rest = name.substr(at + prefix.size());
    // Cut at the first character that cannot be part of the identifier ("(", " ", "<").
    size_t end = 0;
    while (end < rest.size() &&
           (std::isalnum(static_cast<unsigned char>(rest[end])) || rest[end] == '_'))
      ++end;
    rest = rest.substr(0, end);
    std::vector<std::string_view> fields;
    while (!rest.empty()) {
      const size_t u = rest.find('_');
      fields.push_back(rest.substr(0, u));
      if (u == std::string_view::npos) break;
      rest.remove_prefix(u + 1);
    }
    return fields;
  }
  return {};
}

}  // namespace

std::string collectiveFromKernelName(std::string_view name) {
  const auto f = ncclFields(name);
  if (f.empty() || f[0] == "Generic") return {};
  return lower(f[0]);
}

std::string dtypeFromKernelName(std::string_view name) {
  if (name.find("ncclKernel_") == std::string_view::npos) return {};
  const auto f = ncclFields(name);
  // <Coll>_<Algo>_<Proto>_<Op>_<dtype>
  if (f.size() >= 5) return std::string(f.back());
  return {};
}

size_t TraceBuilder::trackFor(int device, int64_t stream) {
  if (last_ < tracks_.size() && tracks_[last_].device == device && tracks_[last_].stream == stream)
    return last_;
  for (size_t i = 0; i < tracks_.size(); ++i)
    if (tracks_[i].device == device && tracks_[i].stream == stream) {
      last_ = i;
      return i;
    }
  KernelTrack t;
  t.device = device;
  t.stream = stream;
  tracks_.push_back(std::move(t));
  if (spool_) pending_.emplace_back();
  last_ = tracks_.size() - 1;
  return last_;
}

uint64_t TraceBuilder::eventsIn(size_t track) const {
  return spool_ ? pending_[track].spilled->count : tracks_[track].events.size();
}

void TraceBuilder::addEvent(int device, int64_t stream, int64_t start_ns, int64_t dur_ns,
                            std::string_view name, GpuEventKind kind, int64_t correlation,
                            const CollectiveArgs* collective) {
  const size_t ti = trackFor(device, stream);
  KernelTrack& t = tracks_[ti];
  const bool meta = collective && collective->present;
  KernelEvent e;
  e.start_ns = start_ns;
  e.dur_ns = dur_ns;
  e.name = strings_.intern(name);
  e.kind = kind;
  e.cls = classifyKernel(name, kind, meta);
  e.correlation = correlation;
  const bool isCollective = e.cls == KernelClass::Communication && kind == GpuEventKind::Kernel;
  if (isCollective) {
    CollectiveInfo c;
    c.event = static_cast<uint32_t>(eventsIn(ti));
    if (meta && !collective->collective.empty())
      c.collective = strings_.intern(lower(collective->collective));
    else
      c.collective = strings_.intern(collectiveFromKernelName(name));
    if (meta) {
      c.in_nelems = collective->inNelems;
      c.out_nelems = collective->outNelems;
      c.group_size = collective->groupSize;
      c.dtype = strings_.intern(collective->dtype);
      c.pg_name = strings_.intern(collective->pgName);
      c.pg_desc = strings_.intern(collective->pgDesc);
      c.pg_ranks = strings_.intern(collective->pgRanks);
    }
    if (c.dtype == 0) c.dtype = strings_.intern(dtypeFromKernelName(name));
    t.collectives.push_back(c);
  }
  ++events_;
  if (!spool_) {
    t.events.push_back(e);
    return;
  }
  Pending& p = pending_[ti];
  SpillRecord r;
  r.start_ns = e.start_ns;
  r.dur_ns = e.dur_ns;
  r.correlation = e.correlation;
  r.name = e.name;
  r.cls = static_cast<uint8_t>(e.cls);
  r.kind = static_cast<uint8_t>(e.kind);
  if (isCollective) {
    r.collective = static_cast<uint32_t>(t.collectives.size() - 1);
    p.collectiveStart.push_back(start_ns);
  }
  const size_t capacity = p.buffer.capacity();
  p.buffer.push_back(r);
  if (p.buffer.capacity() != capacity) {
    const auto grown = static_cast<int64_t>((p.buffer.capacity() - capacity) * sizeof(SpillRecord));
    spool_->hold(grown);
    buffered_ += grown;
  }
  SpilledKernels& s = *p.spilled;
  ++s.count;
  s.minStart = std::min(s.minStart, start_ns);
  s.maxEnd = std::max(s.maxEnd, start_ns + std::max<int64_t>(dur_ns, 0));
  // Half the budget for the buffers of the import; this builder's own are at least an eighth when
  // it spills (the tails other files keep are at most a quarter), so runs are never tiny.
  const auto budget = static_cast<int64_t>(spool_->budget());
  if (spool_->held() > budget / 2 && buffered_ >= budget / 8) spillAll();
}

void TraceBuilder::spill(Pending& p) {
  if (p.buffer.empty()) return;
  std::stable_sort(
      p.buffer.begin(), p.buffer.end(),
      [](const SpillRecord& a, const SpillRecord& b) { return a.start_ns < b.start_ns; });
  p.spilled->runs.push_back(spool_->write(p.buffer));
  const auto bytes = static_cast<int64_t>(p.buffer.capacity() * sizeof(SpillRecord));
  spool_->hold(-bytes);
  buffered_ -= bytes;
  std::vector<SpillRecord>().swap(p.buffer);
}

void TraceBuilder::spillAll() {
  for (Pending& p : pending_)
    spill(p);
}

int TraceBuilder::mainDevice() const {
  std::map<int, size_t> count;
  for (size_t i = 0; i < tracks_.size(); ++i)
    count[tracks_[i].device] += eventsIn(i);
  int best = -1;
  size_t bestCount = 0;
  for (const auto& [d, n] : count)
    if (n > bestCount || (n == bestCount && best < 0)) best = d, bestCount = n;
  return best;
}

// With a spool: each buffer becomes the track's sorted tail and its collectives stay in memory as
// long as what the import keeps (this builder's buffers included) stays within a quarter of the
// budget, so the tails of many files cannot add up past it; else both are spilled. The clock
// offset is applied when the writer reads the events.
void TraceBuilder::finishSpilled(int64_t offset_ns) {
  const auto quarter = static_cast<int64_t>(spool_->budget() / 4);
  for (size_t ti = 0; ti < tracks_.size(); ++ti) {
    Pending& p = pending_[ti];
    std::vector<CollectiveInfo>& colls = tracks_[ti].collectives;
    const auto collBytes = static_cast<int64_t>(colls.capacity() * sizeof(CollectiveInfo));
    if (spool_->held() + collBytes > quarter) {
      spill(p);
      if (!colls.empty()) {  // numbered by now: the writer reads them back with the events
        p.spilled->collectivesAt = spool_->writeCollectives(colls);
        p.spilled->collectiveCount = colls.size();
        std::vector<CollectiveInfo>().swap(colls);
      }
    } else {
      spool_->hold(collBytes);  // kept until the writer takes the track
      std::stable_sort(
          p.buffer.begin(), p.buffer.end(),
          [](const SpillRecord& a, const SpillRecord& b) { return a.start_ns < b.start_ns; });
      p.spilled->tail = std::move(p.buffer);
    }
    p.spilled->spool = spool_;
    p.spilled->shift_ns += offset_ns;
    std::vector<int64_t>().swap(p.collectiveStart);
  }
  buffered_ = 0;  // the tails belong to the tracks now
}

std::vector<KernelTrack> TraceBuilder::finish(int64_t offset_ns) {
  // Number collectives per process group in start order across all streams of the rank (the
  // offset shifts every start alike, so it does not change the order).
  struct Ref {
    int64_t start;
    int64_t stream;
    size_t track, coll;
  };
  std::vector<Ref> refs;
  for (size_t ti = 0; ti < tracks_.size(); ++ti)
    for (size_t ci = 0; ci < tracks_[ti].collectives.size(); ++ci) {
      const CollectiveInfo& c = tracks_[ti].collectives[ci];
      const int64_t start =
          spool_ ? pending_[ti].collectiveStart[ci] : tracks_[ti].events[c.event].start_ns;
      refs.push_back({start, tracks_[ti].stream, ti, ci});
    }
  std::sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
    return std::tie(a.start, a.stream, a.track, a.coll) <
           std::tie(b.start, b.stream, b.track, b.coll);
  });
  std::map<uint32_t, int64_t> next;
  for (const Ref& r : refs) {
    CollectiveInfo& c = tracks_[r.track].collectives[r.coll];
    c.seq = next[c.pg_name]++;
  }
  if (spool_)
    finishSpilled(offset_ns);
  else if (offset_ns != 0)
    for (KernelTrack& t : tracks_)
      for (KernelEvent& e : t.events)
        e.start_ns += offset_ns;
  std::vector<size_t> order(tracks_.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(tracks_[a].device, tracks_[a].stream) <
           std::tie(tracks_[b].device, tracks_[b].stream);
  });
  std::vector<KernelTrack> out;
  out.reserve(order.size());
  spilled_.clear();
  for (size_t i : order) {
    out.push_back(std::move(tracks_[i]));
    if (spool_) spilled_.push_back(std::move(pending_[i].spilled));
  }
  tracks_.clear();
  pending_.clear();
  last_ = 0;
  events_ = 0;
  return out;
}

}  // namespace wl::import
