// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A run with hand-checkable content for the export tests (labelled simulated), and a
// QApplication for tests that draw text or Qt Charts (offscreen).
//
// Model: 2 GPUs (node 0, local 0 and 1, ranks 0 and 1), one hour sampled every 50 ms (72,001
// samples, t = 0 .. 3600 s), metrics power_w, temp_c, sm_clock_mhz, util_pct and throttle
// reasons:
//   GPU 0: 300 W, 50 C, util 100 %, SM clock 1980 MHz except [600 s, 900 s) at 1500 MHz with
//          the SW power cap bit (0x4) set;
//   GPU 1: 300 W except one 950 W sample at 1234.5 s, 55 C, util 100 %, 1980 MHz.
// Kernels: rank 0 stream 7 (compute) [10 s, 20 s) "gemm_a" and [100 s, 102 s) "long_gemm";
// rank 0 stream 13 (communication) [15 s, 25 s) "ncclAllReduce"; rank 1 stream 7 (compute)
// [30 s, 31 s) "gemm_b".

#include <cstdint>
#include <filesystem>

namespace wl::test {

inline constexpr int64_t kExportT0 = 1'700'000'000'000'000'000;
inline constexpr int64_t kSecond = 1'000'000'000;
inline constexpr double kSpikeS = 1234.5;

void writeExportTestRun(const std::filesystem::path& out);

// Creates the QApplication on the offscreen platform the first time it is called.
void ensureApp();

}  // namespace wl::test
