// SPDX-License-Identifier: GPL-3.0-or-later
// Writes the seeds of the run_file fuzz target into the folder given: the synthetic test run
// (tests/support/synthetic_run.h) made small. Its time axis is squeezed 10,000-fold (1 s of
// 20 Hz telemetry and 12 kernels per stream into 100 us) so that the kernel pyramid, whose
// finest level has 256 ns buckets at the least, stays a few hundred buckets wide and a whole
// seed is tens of kilobytes: libFuzzer mutates every byte of an input, and it caps an input at
// 1 MiB. One seed is written without compression (byte mutations then change values, offsets
// and shapes rather than break a deflate stream), one as Wattline writes runs (shuffle +
// deflate), and a one-GPU plain one.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>

#include "loaders/format/run_writer.h"
#include "support/synthetic_run.h"

namespace {

// Every time and duration of the run, counted from its start, divided by `factor`.
void squeezeTime(wl::test::SyntheticRun& r, int64_t factor) {
  const int64_t t0 = r.info.start_ns;
  auto at = [&](int64_t t) { return t0 + (t - t0) / factor; };
  r.info.end_ns = at(r.info.end_ns);
  r.info.sample_interval_s /= static_cast<double>(factor);
  for (auto* tables : {&r.telemetry, &r.nodeTelemetry})
    for (wl::TelemetryTable& t : *tables)
      for (int64_t& ts : t.t_ns)
        ts = at(ts);
  for (wl::KernelTrack& track : r.tracks)
    for (wl::KernelEvent& e : track.events) {
      e.start_ns = at(e.start_ns);
      e.dur_ns /= factor;
    }
  for (wl::Iteration& it : r.iterations) {
    it.start_ns = at(it.start_ns);
    it.end_ns = at(it.end_ns);
  }
  for (wl::Annotation& a : r.annotations) {
    a.start_ns = at(a.start_ns);
    a.dur_ns /= factor;
  }
  for (wl::ThrottleTruth& t : r.truthThrottle) {
    t.start_ns = at(t.start_ns);
    t.end_ns = at(t.end_ns);
  }
}

wl::test::SyntheticRun smallRun(int gpus, double seconds, int kernelsPerStream) {
  wl::test::SyntheticRun r = wl::test::makeSyntheticRun(gpus, seconds, kernelsPerStream);
  squeezeTime(r, 10'000);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seed_runs FOLDER\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    const wl::test::SyntheticRun small = smallRun(2, 1.0, 12);
    wl::WriteOptions plain;
    plain.deflate = 0;
    plain.shuffle = false;
    plain.chunk = 256;
    wl::test::writeSyntheticRun(small, dir / "synthetic-plain.h5", plain);
    wl::test::writeSyntheticRun(small, dir / "synthetic-deflate.h5");
    wl::test::writeSyntheticRun(smallRun(1, 0.2, 6),  // (>= 5 kernels per stream)
                                dir / "tiny-plain.h5", plain);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_seed_runs: %s\n", e.what());
    return 1;
  }
  return 0;
}
