// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/format/kernel_summary.h"

#include <algorithm>

namespace wl {

void KernelNameTable::add(std::span<const KernelEvent> events, TimeRange range) {
  for (const KernelEvent& e : events) {
    if (!range.contains(e.start_ns)) continue;
    if (e.name >= byName_.size()) byName_.resize(static_cast<size_t>(e.name) + 1);
    KernelNameSummary& a = byName_[e.name];
    const int64_t d = std::max<int64_t>(e.dur_ns, 0);
    if (a.count == 0) {
      a.name = e.name;
      a.min_ns = a.max_ns = d;
      a.cls = e.cls;
      a.kind = e.kind;
    } else {
      a.min_ns = std::min(a.min_ns, d);
      a.max_ns = std::max(a.max_ns, d);
    }
    ++a.count;
    a.total_ns += d;
    ++events_;
  }
}

void KernelNameTable::fold(const KernelNameSummary& b) {
  if (b.count == 0) return;
  if (b.name >= byName_.size()) byName_.resize(static_cast<size_t>(b.name) + 1);
  KernelNameSummary& a = byName_[b.name];
  if (a.count == 0) {
    a = b;
  } else {
    a.min_ns = std::min(a.min_ns, b.min_ns);
    a.max_ns = std::max(a.max_ns, b.max_ns);
    a.count += b.count;
    a.total_ns += b.total_ns;
  }
  events_ += b.count;
}

void KernelNameTable::merge(const KernelNameTable& o) {
  for (const KernelNameSummary& b : o.byName_)
    fold(b);
}

void KernelNameTable::addRows(std::span<const KernelNameSummary> rows) {
  for (const KernelNameSummary& b : rows)
    fold(b);
}

std::vector<KernelNameSummary> KernelNameTable::rows() const {
  std::vector<KernelNameSummary> out;
  for (const KernelNameSummary& a : byName_)
    if (a.count) out.push_back(a);
  return out;
}

}  // namespace wl
