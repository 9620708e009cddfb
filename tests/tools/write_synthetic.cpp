// SPDX-License-Identifier: GPL-3.0-or-later
// Writes the synthetic test run (tests/support/synthetic_run.h) to the path given.
#include <cstdio>
#include <exception>

#include "support/synthetic_run.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_synthetic OUT.h5\n");
    return 2;
  }
  try {
    wl::test::writeSyntheticRun(wl::test::makeSyntheticRun(), argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_synthetic: %s\n", e.what());
    return 1;
  }
  return 0;
}
