// SPDX-License-Identifier: GPL-3.0-or-later
// Writes (once) a benchmark run of bench/scale_run.h and prints its path, so that the CLI
// (`wattline analyze`, `/usr/bin/time -v`) and the GUI can be measured on the same file as the
// benchmarks. Not a benchmark itself.
//
// Run: WATTLINE_BENCH_DIR=/tmp/wlbench ./build/bench/make_scale_run 1e8
//      ./build/bench/make_scale_run GPUS SECONDS HZ METRICS KERNELS TRACED_RANKS
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "scale_run.h"

int main(int argc, char** argv) {
  wl::bench::ScaleSpec spec;
  if (argc == 2 && std::string(argv[1]) == "1e8") {
    spec = wl::bench::kScale1e8;
  } else if (argc == 7) {
    spec.gpus = std::atoi(argv[1]);
    spec.seconds = std::atof(argv[2]);
    spec.hz = std::atof(argv[3]);
    spec.metrics = std::atoi(argv[4]);
    spec.kernelsTotal = std::atol(argv[5]);
    spec.tracedRanks = std::atoi(argv[6]);
  } else {
    std::fprintf(stderr, "usage: make_scale_run 1e8 | GPUS SECONDS HZ METRICS KERNELS RANKS\n");
    return 2;
  }
  if (spec.gpus < 1 || spec.seconds <= 0 || spec.hz <= 0 || spec.metrics < 1 || spec.metrics > 6 ||
      spec.kernelsTotal < 0 || spec.tracedRanks < 0) {
    std::fprintf(stderr, "make_scale_run: a value is out of range\n");
    return 2;
  }
  try {
    std::printf("%s\n", wl::bench::scaleRun(spec).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_scale_run: %s\n", e.what());
    return 1;
  }
  return 0;
}
