// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Small numeric rules shared by the writer's pyramids and the analyses, so that both treat
// sampling intervals and gaps the same way (docs/analyses.md, "Gaps").

#include <cstdint>
#include <span>

namespace wl {

// Median of consecutive differences of sorted timestamps; 0 if fewer than two samples.
int64_t medianInterval(std::span<const int64_t> t_ns);

// A pause between two valid samples longer than this is a gap: it is not integrated across and
// carries no weight in time-weighted means. max(1 s, 5 x median interval), at most int64's
// maximum.
int64_t gapThreshold(int64_t medianIntervalNs);

}  // namespace wl
