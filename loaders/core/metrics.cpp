// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/metrics.h"

#include <array>
#include <cctype>

namespace wl {
namespace {

constexpr double kBig = 1e18;

constexpr std::array kMetrics = {
    MetricDef{"power_w", "Power", "W", MetricKind::Gauge, 0, 3000},
    MetricDef{"mem_power_w", "Memory power", "W", MetricKind::Gauge, 0, 1000},
    MetricDef{"temp_c", "GPU temperature", "C", MetricKind::Gauge, -40, 150},
    MetricDef{"mem_temp_c", "Memory temperature", "C", MetricKind::Gauge, -40, 150},
    MetricDef{"hotspot_temp_c", "Hotspot temperature", "C", MetricKind::Gauge, -40, 150},
    MetricDef{"sm_clock_mhz", "SM clock", "MHz", MetricKind::Gauge, 0, 5000},
    MetricDef{"mem_clock_mhz", "Memory clock", "MHz", MetricKind::Gauge, 0, 20000},
    MetricDef{"util_pct", "GPU utilization", "%", MetricKind::Gauge, 0, 100},
    MetricDef{"mem_util_pct", "Memory controller utilization", "%", MetricKind::Gauge, 0, 100},
    MetricDef{"mem_used_pct", "Memory used", "%", MetricKind::Gauge, 0, 100},
    MetricDef{"mem_used_mib", "Memory used", "MiB", MetricKind::Gauge, 0, 1e7},
    MetricDef{"sm_active_pct", "SM active", "%", MetricKind::Gauge, 0, 100},
    MetricDef{"tensor_active_pct", "Tensor active", "%", MetricKind::Gauge, 0, 100},
    MetricDef{"fan_pct", "Fan speed", "%", MetricKind::Gauge, 0, 100},
    MetricDef{"energy_j", "Energy counter", "J", MetricKind::Counter, 0, kBig},
    MetricDef{"pcie_tx_kbs", "PCIe TX throughput", "KB/s", MetricKind::Gauge, 0, 1e9},
    MetricDef{"pcie_rx_kbs", "PCIe RX throughput", "KB/s", MetricKind::Gauge, 0, 1e9},
    MetricDef{"pcie_tx_bytes", "PCIe TX bytes", "B", MetricKind::Counter, 0, kBig},
    MetricDef{"pcie_rx_bytes", "PCIe RX bytes", "B", MetricKind::Counter, 0, kBig},
    MetricDef{"nvlink_tx_kib", "NVLink TX", "KiB", MetricKind::Counter, 0, kBig},
    MetricDef{"nvlink_rx_kib", "NVLink RX", "KiB", MetricKind::Counter, 0, kBig},
    // Node-level metrics (CharLLM-PPT system files).
    MetricDef{"cpu_usage_pct", "CPU usage", "%", MetricKind::Gauge, 0, 100},
    MetricDef{"cpu_idle_pct", "CPU idle", "%", MetricKind::Gauge, 0, 100},
    MetricDef{"cpu_iowait_pct", "CPU I/O wait", "%", MetricKind::Gauge, 0, 100},
    MetricDef{"cpu_temp_c", "CPU temperature", "C", MetricKind::Gauge, -40, 150},
    MetricDef{"host_mem_used", "Host memory used", "B", MetricKind::Gauge, 0, kBig},
    MetricDef{"host_mem_free", "Host memory free", "B", MetricKind::Gauge, 0, kBig},
    MetricDef{"ib_rx_bytes", "InfiniBand RX bytes", "B", MetricKind::Counter, 0, kBig},
    MetricDef{"ib_tx_bytes", "InfiniBand TX bytes", "B", MetricKind::Counter, 0, kBig},
    // Per GPU: the bytes of its inter-node traffic (simulated runs; docs/simulator.md).
    MetricDef{"net_tx_bytes", "Network TX bytes", "B", MetricKind::Counter, 0, kBig},
    MetricDef{"net_rx_bytes", "Network RX bytes", "B", MetricKind::Counter, 0, kBig},
};

}  // namespace

std::span<const MetricDef> knownMetrics() {
  return kMetrics;
}

const MetricDef* findMetric(std::string_view id) {
  for (const MetricDef& m : kMetrics)
    if (m.id == id) return &m;
  return nullptr;
}

std::string_view metricUnit(std::string_view id) {
  const MetricDef* m = findMetric(id);
  return m ? m->unit : std::string_view{};
}

std::string metricLabel(std::string_view id) {
  const MetricDef* m = findMetric(id);
  return m ? std::string(m->label) : std::string(id);
}

std::string sanitizeMetricId(std::string_view name) {
  std::string out;
  bool pendingSep = false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      if (pendingSep && !out.empty()) out += '_';
      pendingSep = false;
      out += static_cast<char>(std::tolower(u));
    } else if (c == '%') {
      if (!out.empty()) out += '_';
      out += "pct";
      pendingSep = false;
    } else {
      pendingSep = true;
    }
  }
  if (out.empty()) out = "metric";
  if (std::isdigit(static_cast<unsigned char>(out.front()))) out.insert(0, "m_");
  return out;
}

}  // namespace wl
