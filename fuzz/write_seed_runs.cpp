// SPDX-License-Identifier: GPL-3.0-or-later
// Writes the seeds of the run_file fuzz target into the folder given: the synthetic test run
// (tests/support/synthetic_run.h) made small, once without compression (so that byte mutations
// change values, offsets and shapes rather than break a deflate stream) and once as Wattline
// writes runs (shuffle + deflate).
#include <cstdio>
#include <exception>
#include <filesystem>

#include "loaders/format/run_writer.h"
#include "support/synthetic_run.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seed_runs FOLDER\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    const wl::test::SyntheticRun small = wl::test::makeSyntheticRun(2, 1.0, 12);
    wl::WriteOptions plain;
    plain.deflate = 0;
    plain.shuffle = false;
    plain.chunk = 256;
    wl::test::writeSyntheticRun(small, dir / "synthetic-plain.h5", plain);
    wl::test::writeSyntheticRun(small, dir / "synthetic-deflate.h5");
    wl::test::writeSyntheticRun(wl::test::makeSyntheticRun(1, 0.2, 6),  // (>= 5 kernels per stream)
                                dir / "tiny-plain.h5", plain);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_seed_runs: %s\n", e.what());
    return 1;
  }
  return 0;
}
