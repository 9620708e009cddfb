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

KernelTrack& TraceBuilder::trackFor(int device, int64_t stream) {
  if (last_ < tracks_.size() && tracks_[last_].device == device && tracks_[last_].stream == stream)
    return tracks_[last_];
  for (size_t i = 0; i < tracks_.size(); ++i)
    if (tracks_[i].device == device && tracks_[i].stream == stream) {
      last_ = i;
      return tracks_[i];
    }
  KernelTrack t;
  t.device = device;
  t.stream = stream;
  tracks_.push_back(std::move(t));
  last_ = tracks_.size() - 1;
  return tracks_.back();
}

void TraceBuilder::addEvent(int device, int64_t stream, int64_t start_ns, int64_t dur_ns,
                            std::string_view name, GpuEventKind kind, int64_t correlation,
                            const CollectiveArgs* collective) {
  KernelTrack& t = trackFor(device, stream);
  const bool meta = collective && collective->present;
  KernelEvent e;
  e.start_ns = start_ns;
  e.dur_ns = dur_ns;
  e.name = strings_.intern(name);
  e.kind = kind;
  e.cls = classifyKernel(name, kind, meta);
  e.correlation = correlation;
  if (e.cls == KernelClass::Communication && kind == GpuEventKind::Kernel) {
    CollectiveInfo c;
    c.event = static_cast<uint32_t>(t.events.size());
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
  t.events.push_back(e);
  ++events_;
}

int TraceBuilder::mainDevice() const {
  std::map<int, size_t> count;
  for (const KernelTrack& t : tracks_)
    count[t.device] += t.events.size();
  int best = -1;
  size_t bestCount = 0;
  for (const auto& [d, n] : count)
    if (n > bestCount || (n == bestCount && best < 0)) best = d, bestCount = n;
  return best;
}

std::vector<KernelTrack> TraceBuilder::finish(int64_t offset_ns) {
  if (offset_ns != 0)
    for (KernelTrack& t : tracks_)
      for (KernelEvent& e : t.events)
        e.start_ns += offset_ns;
  // Number collectives per process group in start order across all streams of the rank.
  struct Ref {
    int64_t start;
    int64_t stream;
    size_t track, coll;
  };
  std::vector<Ref> refs;
  for (size_t ti = 0; ti < tracks_.size(); ++ti)
    for (size_t ci = 0; ci < tracks_[ti].collectives.size(); ++ci) {
      const CollectiveInfo& c = tracks_[ti].collectives[ci];
      refs.push_back({tracks_[ti].events[c.event].start_ns, tracks_[ti].stream, ti, ci});
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
  std::sort(tracks_.begin(), tracks_.end(), [](const KernelTrack& a, const KernelTrack& b) {
    return std::tie(a.device, a.stream) < std::tie(b.device, b.stream);
  });
  std::vector<KernelTrack> out = std::move(tracks_);
  tracks_.clear();
  last_ = 0;
  events_ = 0;
  return out;
}

}  // namespace wl::import
