// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/kernel_table.h"

#include <algorithm>

#include "loaders/format/run_file.h"

namespace wl {

std::vector<KernelStat> KernelTableBuilder::all(const RunFile& run) const {
  std::vector<KernelStat> out;
  for (const KernelNameSummary& a : names_.rows()) {
    KernelStat s;
    s.name = a.name;
    s.name_text = run.str(s.name);
    s.cls = a.cls;
    s.kind = a.kind;
    s.count = a.count;
    s.total_ns = a.total_ns;
    s.min_ns = a.min_ns;
    s.max_ns = a.max_ns;
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
  for (const KernelNameSummary& a : names_.byName())
    if (a.count) t[static_cast<size_t>(seedPaperCategory(run.str(a.name)))] += a.total_ns;
  return t;
}

CategoryTimes KernelTableBuilder::correctedCategories(const RunFile& run) const {
  CategoryTimes t{};
  for (const KernelNameSummary& a : names_.byName())
    if (a.count)
      t[static_cast<size_t>(correctedCategory(run.str(a.name), a.cls, a.kind))] += a.total_ns;
  return t;
}

}  // namespace wl
