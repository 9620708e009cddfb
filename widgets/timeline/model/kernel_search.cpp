// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/model/kernel_search.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

namespace wl {
namespace {

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<KernelMatch> findKernels(const std::vector<std::shared_ptr<const RunFile>>& runs,
                                     const std::string& text, size_t limit,
                                     const std::atomic<bool>* cancel) {
  std::vector<KernelMatch> out;
  const std::string needle = lower(text);
  if (needle.empty()) return out;
  for (size_t r = 0; r < runs.size(); ++r) {
    const RunFile& run = *runs[r];
    // Names that match, by id. The string table is shared by every name in the run.
    std::unordered_set<uint32_t> ids;
    const auto n = static_cast<uint32_t>(run.stringCount());
    for (uint32_t id = 1; id < n; ++id)
      if (lower(run.str(id)).find(needle) != std::string::npos) ids.insert(id);
    if (ids.empty()) continue;
    for (size_t t = 0; t < run.tracks().size(); ++t) {
      if (cancel && cancel->load()) return out;
      const auto events = run.readAllKernels(t);
      for (size_t i = 0; i < events.size(); ++i)
        if (ids.count(events[i].name))
          out.push_back(
              {static_cast<int>(r), static_cast<int>(t), static_cast<long>(i), events[i]});
    }
  }
  std::sort(out.begin(), out.end(), [](const KernelMatch& a, const KernelMatch& b) {
    return a.data.start_ns < b.data.start_ns;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace wl
