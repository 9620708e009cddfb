// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/kernel_table.h"

#include <algorithm>

#include "loaders/format/run_file.h"

namespace wl {

void KernelTableBuilder::add(std::span<const KernelEvent> events, TimeRange range) {
  for (const KernelEvent& e : events) {
    if (!range.contains(e.start_ns)) continue;
    if (e.name >= byName_.size()) byName_.resize(static_cast<size_t>(e.name) + 1);
    Acc& a = byName_[e.name];
    const int64_t d = std::max<int64_t>(e.dur_ns, 0);
    if (a.count == 0) {
      a.min = a.max = d;
      a.cls = e.cls;
      a.kind = e.kind;
    } else {
      a.min = std::min(a.min, d);
      a.max = std::max(a.max, d);
    }
    ++a.count;
    a.total += d;
    ++events_;
  }
}

void KernelTableBuilder::merge(const KernelTableBuilder& o) {
  if (o.byName_.size() > byName_.size()) byName_.resize(o.byName_.size());
  for (size_t i = 0; i < o.byName_.size(); ++i) {
    const Acc& b = o.byName_[i];
    if (b.count == 0) continue;
    Acc& a = byName_[i];
    if (a.count == 0) {
      a = b;
    } else {
      a.min = std::min(a.min, b.min);
      a.max = std::max(a.max, b.max);
      a.count += b.count;
      a.total += b.total;
    }
  }
  events_ += o.events_;
}

std::vector<KernelStat> KernelTableBuilder::all(const RunFile& run) const {
  std::vector<KernelStat> out;
  for (size_t i = 0; i < byName_.size(); ++i) {
    const Acc& a = byName_[i];
    if (a.count == 0) continue;
    KernelStat s;
    s.name = static_cast<uint32_t>(i);
    s.name_text = run.str(s.name);
    s.cls = a.cls;
    s.kind = a.kind;
    s.count = a.count;
    s.total_ns = a.total;
    s.min_ns = a.min;
    s.max_ns = a.max;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const KernelStat& a, const KernelStat& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return out;
}

std::vector<KernelStat> KernelTableBuilder::top(const RunFile& run, size_t top) const {
  std::vector<KernelStat> rows = all(run);
  if (rows.size() <= top) return rows;
  KernelStat others;
  others.others = true;
  others.name_text = "others";
  others.cls = KernelClass::Other;
  others.min_ns = rows[top].min_ns;
  for (size_t i = top; i < rows.size(); ++i) {
    others.count += rows[i].count;
    others.total_ns += rows[i].total_ns;
    others.min_ns = std::min(others.min_ns, rows[i].min_ns);
    others.max_ns = std::max(others.max_ns, rows[i].max_ns);
  }
  rows.resize(top);
  rows.push_back(std::move(others));
  return rows;
}

CategoryTimes KernelTableBuilder::seedCategories(const RunFile& run) const {
  CategoryTimes t{};
  for (size_t i = 0; i < byName_.size(); ++i)
    if (byName_[i].count)
      t[static_cast<size_t>(seedPaperCategory(run.str(static_cast<uint32_t>(i))))] +=
          byName_[i].total;
  return t;
}

CategoryTimes KernelTableBuilder::correctedCategories(const RunFile& run) const {
  CategoryTimes t{};
  for (size_t i = 0; i < byName_.size(); ++i)
    if (byName_[i].count)
      t[static_cast<size_t>(correctedCategory(run.str(static_cast<uint32_t>(i)), byName_[i].cls,
                                              byName_[i].kind))] += byName_[i].total;
  return t;
}

}  // namespace wl
