// SPDX-License-Identifier: GPL-3.0-or-later
// The libFuzzer entry point of one target: built once per target with WATTLINE_FUZZ_TARGET set to
// its name (fuzz/CMakeLists.txt), so every fuzz_NAME executable runs wl::fuzz::findTarget(NAME).
#include <cstdio>
#include <cstdlib>

#include "targets.h"

namespace {
const wl::fuzz::Target* target = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The run-file target opens in-memory files; HDF5's file locks are of no use there.
  ::setenv("HDF5_USE_FILE_LOCKING", "FALSE", 1);
  target = wl::fuzz::findTarget(WATTLINE_FUZZ_TARGET);
  if (!target) {
    std::fprintf(stderr, "no fuzz target named %s\n", WATTLINE_FUZZ_TARGET);
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  target->run({data, size});
  return 0;
}
