// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/telemetry_recorder.h"

#include <algorithm>
#include <cmath>

#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"

namespace wl::sim {

TelemetryRecorder::TelemetryRecorder(const SimConfig& c, const Topology& topo, ScratchFile& scratch)
    : c_(c),
      topo_(topo),
      spill_(scratch, static_cast<size_t>(topo.world()), size_t{48} << 20),
      n_(topo.world()),
      dt_(c.physicsStepS),
      period_(1.0 / c.sampleHz),
      jitterS_(c.idealSensors ? 0.0 : c.sampleJitterMs * 1e-3) {
  powerSteps_ = std::max<size_t>(1, static_cast<size_t>(std::llround(c.powerWindow() / dt_)));
  utilSteps_ =
      std::max<size_t>(1, static_cast<size_t>(std::llround(c.platform.util_window_s / dt_)));
  reportPackagePower_ = c.platform.gcds_per_package > 1 && c.platform.package_power_on_first_gpu;
  const auto n = static_cast<size_t>(n_);
  powerRing_.assign(n, std::vector<float>(powerSteps_, 0.f));
  busyRing_.assign(n, std::vector<float>(utilSteps_, 0.f));
  powerSum_.assign(n, 0.0);
  busySum_.assign(n, 0.0);
  ringPos_.assign(n, 0);
  stepsSeen_.assign(n, 0);
  sampleIndex_.assign(n, 0);
  nextT_.assign(n, 0.0);
  bias_.assign(n, 0.0);
  memory_.assign(n, MemoryUsed{});
  for (int g = 0; g < n_; ++g) {
    Rng b = Rng::keyed(c.seed, RandomPurpose::SensorNoise, static_cast<uint64_t>(g), 1);
    bias_[static_cast<size_t>(g)] =
        c.idealSensors ? 0.0 : b.uniform(-c.platform.power_bias_w, c.platform.power_bias_w);
    noise_.push_back(Rng::keyed(c.seed, RandomPurpose::SensorNoise, static_cast<uint64_t>(g), 2));
    jitter_.push_back(Rng::keyed(c.seed, RandomPurpose::SampleJitter, static_cast<uint64_t>(g)));
    nextT_[static_cast<size_t>(g)] = nextSampleTime(g);
  }
}

double TelemetryRecorder::nextSampleTime(int gpu) {
  const auto i = static_cast<size_t>(gpu);
  const double nominal = (static_cast<double>(sampleIndex_[i]) + 0.5) * period_;
  const double j = jitterS_ > 0 ? jitter_[i].uniform(-jitterS_, jitterS_) : 0.0;
  ++sampleIndex_[i];
  return nominal + j;
}

void TelemetryRecorder::afterStep(double t1, const GpuStepView& s) {
  // Advance the sensor windows of every GPU first: MI250 package power needs both GCDs.
  for (int g = 0; g < n_; ++g) {
    const auto i = static_cast<size_t>(g);
    const size_t pos = ringPos_[i];
    const size_t pp = pos % powerSteps_, up = pos % utilSteps_;
    powerSum_[i] += s.powerW[i] - powerRing_[i][pp];
    powerRing_[i][pp] = static_cast<float>(s.powerW[i]);
    busySum_[i] += s.busy[i] - busyRing_[i][up];
    busyRing_[i][up] = static_cast<float>(s.busy[i]);
    ringPos_[i] = pos + 1;
    ++stepsSeen_[i];
    if (stepsSeen_[i] % 4096 == 0) {
      // Float ring values and running double sums drift apart; resum now and then.
      powerSum_[i] = busySum_[i] = 0;
      for (float v : powerRing_[i])
        powerSum_[i] += v;
      for (float v : busyRing_[i])
        busySum_[i] += v;
    }
  }
  auto windowPower = [&](size_t i) {
    const size_t have = std::min<size_t>(stepsSeen_[i], powerSteps_);
    return powerSum_[i] / static_cast<double>(have);
  };
  const PlatformProfile& p = c_.platform;
  const double noiseW = c_.idealSensors ? 0.0 : p.power_noise_w;
  const double noiseC = c_.idealSensors ? 0.0 : p.temp_noise_c;
  for (int g = 0; g < n_; ++g) {
    const auto i = static_cast<size_t>(g);
    while (nextT_[i] <= t1) {
      Sample out{};
      out.tNs = std::llround(nextT_[i] * 1e9);
      double pw;
      out.hasPower = 1;
      if (reportPackagePower_) {
        const std::vector<int>& pkg = topo_.packageGpus(topo_.placement(g).package);
        pw = 0;
        for (int other : pkg)
          pw += windowPower(static_cast<size_t>(other));
        if (pkg.front() != g) out.hasPower = 0;
      } else {
        pw = windowPower(i);
      }
      pw += bias_[i] + (noiseW > 0 ? noiseW * noise_[i].normal() : 0.0);
      out.powerW = static_cast<float>(std::max(0.0, pw));
      const double tn = noiseC > 0 ? noiseC * noise_[i].normal() : 0.0;
      const double tm = noiseC > 0 ? noiseC * noise_[i].normal() : 0.0;
      out.temp = static_cast<int8_t>(std::clamp(std::lround(s.tempC[i] + tn), -100L, 127L));
      out.memTemp = static_cast<int8_t>(std::clamp(std::lround(s.memTempC[i] + tm), -100L, 127L));
      out.smClock = static_cast<uint16_t>(std::lround(s.clockMhz[i]));
      out.memClock = static_cast<uint16_t>(std::lround(p.max_mem_clock_mhz));
      const double busy =
          busySum_[i] / static_cast<double>(std::min<size_t>(stepsSeen_[i], utilSteps_));
      out.util = static_cast<uint8_t>(std::clamp(std::lround(busy * 100.0), 0L, 100L));
      out.reasons = s.reasons[i];
      if (c_.linkCounters) {
        constexpr double kWrap = 4294967296.0;  // 2^32 KiB
        out.linkTxKiB = static_cast<uint32_t>(std::fmod(std::floor(s.linkTx[i] / 1024.0), kWrap));
        out.linkRxKiB = static_cast<uint32_t>(std::fmod(std::floor(s.linkRx[i] / 1024.0), kWrap));
        out.netTx = s.netTx[i], out.netRx = s.netRx[i];
        out.pcieTx = s.pcieTx[i], out.pcieRx = s.pcieRx[i];
      }
      spill_.push(i, out);
      nextT_[i] = nextSampleTime(g);
    }
  }
}

void TelemetryRecorder::setMemoryUsed(int gpu, double beforeMiB, double duringMiB,
                                      double trainingStartS) {
  memory_[static_cast<size_t>(gpu)] = {beforeMiB, duringMiB, trainingStartS};
}

TelemetryTable TelemetryRecorder::take(int gpu, int64_t startNs) {
  std::vector<Sample> samples = spill_.take(static_cast<size_t>(gpu));
  TelemetryTable t;
  const size_t n = samples.size();
  t.t_ns.resize(n);
  t.throttle_reasons.resize(n);
  std::vector<double> power(n), temp(n), memTemp(n), sm(n), mem(n), util(n);
  for (size_t k = 0; k < n; ++k) {
    const Sample& s = samples[k];
    t.t_ns[k] = startNs + s.tNs;
    power[k] = s.hasPower ? static_cast<double>(s.powerW) : kNaN;
    temp[k] = s.temp;
    memTemp[k] = s.memTemp;
    sm[k] = s.smClock;
    mem[k] = s.memClock;
    util[k] = s.util;
    t.throttle_reasons[k] = s.reasons;
  }
  t.columns.push_back({std::string(metric::kPower), std::move(power)});
  t.columns.push_back({std::string(metric::kTemp), std::move(temp)});
  t.columns.push_back({std::string(metric::kMemTemp), std::move(memTemp)});
  t.columns.push_back({std::string(metric::kSmClock), std::move(sm)});
  t.columns.push_back({std::string(metric::kMemClock), std::move(mem)});
  t.columns.push_back({std::string(metric::kUtil), std::move(util)});
  if (c_.linkCounters) {
    auto counter = [&](std::string_view id, auto get) {
      std::vector<double> v(n);
      for (size_t k = 0; k < n; ++k)
        v[k] = get(samples[k]);
      t.columns.push_back({std::string(id), std::move(v)});
    };
    counter("nvlink_tx_kib", [](const Sample& x) { return static_cast<double>(x.linkTxKiB); });
    counter("nvlink_rx_kib", [](const Sample& x) { return static_cast<double>(x.linkRxKiB); });
    counter("pcie_tx_bytes", [](const Sample& x) { return x.pcieTx; });
    counter("pcie_rx_bytes", [](const Sample& x) { return x.pcieRx; });
    counter("net_tx_bytes", [](const Sample& x) { return x.netTx; });
    counter("net_rx_bytes", [](const Sample& x) { return x.netRx; });
  }
  const MemoryUsed& mu = memory_[static_cast<size_t>(gpu)];
  if (!std::isnan(mu.before)) {
    std::vector<double> used(n);
    for (size_t k = 0; k < n; ++k)
      used[k] = static_cast<double>(samples[k].tNs) * 1e-9 < mu.fromS ? mu.before : mu.during;
    t.columns.push_back({"mem_used_mib", std::move(used)});
  }
  return t;
}

}  // namespace wl::sim
