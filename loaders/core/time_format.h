// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Formatting and parsing of times and durations, shared by the CLI and the GUI's ruler and
// tooltips so both print the same text.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wl {

// "2025-09-24 03:41:43.487 UTC" (milliseconds; more digits when `digits` > 3, up to 9).
std::string formatUtc(int64_t ns, int digits = 3);
// A duration with a unit that suits its size: "850 ns", "12.4 us", "3.20 ms", "1.50 s", "2 h 03
// min".
std::string formatDuration(int64_t ns);
// Parses "1.5s", "200ms", "30us", "10ns", "2m" (or "2min"), "1h", a bare number of seconds, or a
// compound of units from the largest down, each at most once ("12m10s", "1h2m3.5s", "1s500ms"),
// with an optional sign in front ("-1m30s" is -90 s), into ns. nullopt if it is none of these.
std::optional<int64_t> parseDuration(std::string_view text);

}  // namespace wl
