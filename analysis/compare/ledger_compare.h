// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Two runs' energy ledgers step by step (docs/analyses.md, "Energy ledger"; `wattline compare A B
// --iterations`): each run's ledger summed over its traced ranks at every step both traced, and
// A - B. Sums add the ranks' joules and their uncertainties in quadrature; a part is resolved only
// if every rank's part is. Shared by the JSON, the CSV and the text of compare --iterations.

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "analysis/energy_ledger.h"

namespace wl {

class RunFile;

struct StepLedger {
  std::array<LedgerValue, kLedgerParts> parts;
  int ranks = 0;  // traced ranks with a ledger at the step
};

// A run's ledger per step, summed over its traced ranks.
std::map<int64_t, StepLedger> ledgerBySteps(const RunFile& run);

struct LedgerStepComparison {
  int64_t step = 0;
  StepLedger a, b;
  std::array<LedgerValue, kLedgerParts> a_minus_b;  // j and u_j (in quadrature)
};

// At the steps both runs have a ledger for, in step order.
std::vector<LedgerStepComparison> compareLedgers(const RunFile& a, const RunFile& b);

}  // namespace wl
