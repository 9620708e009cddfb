// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare/ledger_compare.h"

#include <cmath>
#include <set>

#include "loaders/format/run_file.h"

namespace wl {

std::map<int64_t, StepLedger> ledgerBySteps(const RunFile& run) {
  std::map<int64_t, StepLedger> out;
  std::set<int> ranks;
  for (const TrackInfo& t : run.tracks())
    ranks.insert(t.rank);
  for (int r : ranks) {
    const EnergyLedger l = energyLedger(ledgerInputOf(run, r, {}));
    for (const LedgerIteration& it : l.iterations) {
      StepLedger& s = out[it.step];
      if (s.ranks++ == 0)
        for (LedgerValue& v : s.parts)
          v.j = 0, v.u_j = 0, v.resolved = true;
      for (size_t p = 0; p < kLedgerParts; ++p) {
        LedgerValue& v = s.parts[p];
        v.s += it.parts[p].s;
        v.j += it.parts[p].j;
        v.u_j = std::hypot(v.u_j, it.parts[p].u_j);
        v.resolved = v.resolved && it.parts[p].resolved;
      }
    }
  }
  return out;
}

std::vector<LedgerStepComparison> compareLedgers(const RunFile& a, const RunFile& b) {
  const auto la = ledgerBySteps(a), lb = ledgerBySteps(b);
  std::vector<LedgerStepComparison> out;
  for (const auto& [step, sa] : la) {
    const auto it = lb.find(step);
    if (it == lb.end()) continue;
    LedgerStepComparison c{step, sa, it->second, {}};
    for (size_t p = 0; p < kLedgerParts; ++p) {
      LedgerValue& d = c.a_minus_b[p];
      d.s = sa.parts[p].s - it->second.parts[p].s;
      d.j = sa.parts[p].j - it->second.parts[p].j;
      d.u_j = std::hypot(sa.parts[p].u_j, it->second.parts[p].u_j);
      d.resolved = sa.parts[p].resolved && it->second.parts[p].resolved;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace wl
