// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Freed heap memory given back to the system.
//
// glibc keeps what a thread frees in that thread's arena, resident, until it is trimmed: after a
// large transient working set (the analysis of a 10^8-kernel run, hundreds of MB of tiles evicted
// from the viewer's cache) a long-running GUI would otherwise stay at its peak. Measured in
// docs/performance.md, "10^8 kernels".

namespace wl {

// Returns the free pages of every malloc arena to the system (glibc's malloc_trim(0); a no-op on
// other C libraries). Costs a walk of the arenas: call it after large frees, not per allocation.
void releaseFreedMemory();

}  // namespace wl
