// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Work spread over the machine's cores for the analyses (std::thread, no Qt). Results are written
// by index and merged by the caller in index order, so a parallel analysis gives the same bytes
// as a single-threaded one; only the order in which the work runs changes.
//
// RunFile serializes every HDF5 call (and the inflate inside it) with h5::lock(), so what runs in
// parallel is the computation between reads: a second thread pays where a task computes about as
// long as it reads (docs/performance.md, "10^8 kernels").

#include <cstddef>
#include <functional>

namespace wl {

// The threads the analyses use: `requested` when > 0, else $WATTLINE_THREADS when it holds a
// positive number (1 forces one thread), else the hardware's cores; between 1 and 64.
unsigned analysisThreads(int requested = 0);

// Runs task(i) for every i in [0, n) on up to `threads` threads, the calling thread included;
// tasks are taken in index order. After each task the calling thread itself finished, it calls
// tick(number of tasks finished so far) (progress, cancellation). The first exception (of the
// lowest index, as one thread would have met it; or tick's) stops the tasks not yet started and
// is rethrown once every started task has finished. threads <= 1 is a plain loop.
void parallelFor(size_t n, unsigned threads, const std::function<void(size_t)>& task,
                 const std::function<void(size_t)>& tick = {});

// Runs each(i) for every i in [0, n), in contiguous blocks of i, one block per thread, on up to
// analysisThreads() threads when `work` (the caller's count of the loop's inner steps) gives
// every block at least kBlockWork steps; otherwise on the calling thread alone. For loops whose
// iterations write disjoint outputs (a frame's heatmap rows): the result does not depend on the
// number of threads. Exceptions propagate as in parallelFor.
inline constexpr size_t kBlockWork = size_t{1} << 18;
void parallelBlocks(size_t n, size_t work, const std::function<void(size_t)>& each);

}  // namespace wl
