// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Deterministic random numbers for the simulator.
//
// Every random quantity (a GPU's leakage, a node's inlet offset, a sensor's noise, a phase's
// jitter) is drawn from a SplitMix64 stream keyed by the run seed, a purpose and the ids of what it
// belongs to. Streams do not depend on the order in which the simulator visits GPUs or units, and
// the conversions to uniform and normal numbers are written out here rather than taken from
// <random>, whose distributions differ between standard libraries: the same seed gives the same
// run on every machine.

#include <cmath>
#include <cstdint>

namespace wl::sim {

// What a random stream is for; part of its key.
enum class RandomPurpose : uint64_t {
  GpuVariation = 1,
  NodeInlet = 2,
  SensorNoise = 3,
  SampleJitter = 4,
  PhaseJitter = 5,
  ExpertLoad = 6,
  HostGap = 7,
  KernelNoise = 8,
};

class Rng {
 public:
  explicit Rng(uint64_t state) : state_(state) {}

  // A stream for (seed, purpose, a, b, c); different keys give independent-looking streams.
  static Rng keyed(uint64_t seed, RandomPurpose purpose, uint64_t a = 0, uint64_t b = 0,
                   uint64_t c = 0) {
    uint64_t h = mix(seed ^ 0x9E3779B97F4A7C15ull);
    h = mix(h ^ static_cast<uint64_t>(purpose));
    h = mix(h ^ (a + 0x632BE59BD9B4E019ull));
    h = mix(h ^ (b + 0x85157AF5ull));
    h = mix(h ^ (c + 0x2545F4914F6CDD1Dull));
    return Rng(h);
  }

  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return mix(state_);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Standard normal (Box-Muller; one of the pair is discarded to keep the stream stateless).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace wl::sim
