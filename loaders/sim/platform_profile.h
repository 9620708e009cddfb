// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Platform profiles: what the simulator knows about one GPU model and the node it sits in.
//
// A profile holds datasheet values (peak BF16 throughput, HBM bandwidth, clocks, TDP, link
// bandwidths), values observed on real machines (idle power and clock, temperature thresholds from
// nvidia-smi captures) and the calibrated constants of the simulator's power, thermal, governor and
// sensor models. docs/simulator.md lists every field with its value and source. The three built-in
// profiles are H100 SXM, H200 SXM and MI250 (one GCD per simulated GPU, two GCDs per OAM package
// sharing one power budget); a JSON file can override any field (--platform-file).

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace wl::sim {

enum class Vendor { Nvidia, Amd };

struct PlatformProfile {
  std::string id;           // "h100"
  std::string platform;     // RunInfo::platform: "H100"
  std::string device_name;  // GpuInfo::device_name: "NVIDIA H100 80GB HBM3"
  Vendor vendor = Vendor::Nvidia;

  // Node layout.
  int gcds_per_package = 1;       // 2 on MI250: both GCDs of an OAM share one power limit
  int default_gpus_per_node = 8;  // GPUs (GCDs) per node when --gpus-per-node is not given
  int rows_per_node = 2;          // rows of packages from the front (cold aisle) to the back
  // 1: a package's power is reported on its first GPU only and the others report none (NaN), as
  // amd-smi reports MI250 socket power; 0: every GPU reports its own power.
  int package_power_on_first_gpu = 0;

  // Compute and memory, per GPU (per GCD on MI250).
  double peak_bf16_tflops = 0;  // dense
  double gemm_efficiency = 0;   // fraction of peak a large GEMM reaches at the max clock
  double attention_efficiency = 0;
  double hbm_bandwidth_gbs = 0;  // GB/s
  double hbm_efficiency = 0;     // fraction of HBM bandwidth memory-bound kernels reach
  double hbm_capacity_gb = 0;

  // Clocks.
  double max_sm_clock_mhz = 0;
  double idle_sm_clock_mhz = 0;
  double clock_step_mhz = 0;  // clocks move in steps of this size
  double max_mem_clock_mhz = 0;

  // Power: P = base + leak(T) v(f)^e + dyn_max * activity * (f/fmax) * v(f)^2, per GPU.
  double power_limit_w = 0;  // default limit per power domain (GPU, or package on MI250)
  double min_power_limit_w = 0;
  double power_base_w = 0;      // clock- and temperature-independent board power
  double power_leak_ref_w = 0;  // leakage at leak_ref_temp_c and the max clock's voltage
  double leak_ref_temp_c = 0;   //
  double leak_per_c = 0;        // leakage grows by exp(leak_per_c * (T - ref))
  double leak_voltage_exp = 0;  // ... and as v(f)^leak_voltage_exp with the voltage
  double power_dyn_max_w = 0;   // dynamic power at activity 1 and the max clock
  double voltage_min_frac = 0;  // v(f) = vmin + (1 - vmin) f/fmax
  double activity_gemm = 0;     // activity of a large tensor-core GEMM
  double activity_attention = 0;
  double activity_memory = 0;     // memory-bound elementwise, norm, optimizer kernels
  double activity_comm = 0;       // NCCL/RCCL kernel moving data
  double activity_comm_wait = 0;  // NCCL/RCCL kernel spinning while it waits for a peer

  // Thermal: two time constants per GPU (thermal_model.h): the heatsink over its inlet air,
  // T_sink' = (T_in + R_sink(fan) P - T_sink) / tau_sink, and the die over the heatsink,
  // T_die' = (T_sink + R_die P - T_die) / tau_die. The die temperature is what sensors report.
  double die_resistance_c_per_w = 0;
  double die_tau_s = 0;
  double sink_resistance_c_per_w = 0;  // heatsink to air, at full fan speed
  double sink_tau_s = 0;
  double mem_thermal_resistance_c_per_w = 0;  // HBM: T_mem' = (T_in + off + R_mem P - T_mem)/tau
  double mem_temp_offset_c = 0;
  double mem_thermal_tau_s = 0;
  // Air: a column of packages from front to back shares one air stream; a package's inlet is the
  // node's inlet plus the heat the packages upstream gave the air / (G_air x fan). On MI250 the
  // second GCD of an OAM sits downstream of the first inside one heatsink (package_air_...).
  double air_conductance_w_per_k = 0;          // per column of packages at full fan speed
  double package_air_conductance_w_per_k = 0;  // between the GCDs of one package, full fan speed
  // Chassis fans (one speed per node, driven by the node's hottest GPU): the speed moves towards
  // fan_min_frac + (1 - fan_min_frac) ramp(T_hot) with time constant fan_tau_s; the airflow
  // scales with the speed and the heatsink resistance with speed^-fan_resistance_exp.
  double fan_min_frac = 0;
  double fan_ramp_start_c = 0;
  double fan_ramp_full_c = 0;
  double fan_tau_s = 0;
  double fan_resistance_exp = 0;
  double max_operating_temp_c = 0;  // SW thermal slowdown above this
  double slowdown_temp_c = 0;       // HW thermal slowdown at this
  double shutdown_temp_c = 0;
  double mem_max_operating_temp_c = 0;

  // Clock governor.
  double power_cap_tau_s = 0;          // the power cap follows activity averaged over this time
  double power_cap_setpoint_frac = 0;  // ... and holds the power at this fraction of the limit
  double slew_down_mhz_per_ms = 0;
  double slew_up_mhz_per_ms = 0;
  double sw_thermal_mhz_per_c = 0;  // clock ceiling drop per degree above max operating
  double hw_slowdown_factor = 0;    // clock multiplier while HW slowdown is engaged
  double idle_downclock_s = 0;      // idle this long: clock drops to idle_sm_clock_mhz

  // Links.
  double intra_node_gbs = 0;     // per direction per GPU (NVLink / xGMI between packages)
  double intra_package_gbs = 0;  // per direction between the GCDs of one package
  double inter_node_gbps = 0;    // per node (InfiniBand), Gb/s
  double link_efficiency = 0;    // fraction of link bandwidth collectives reach
  double network_efficiency = 0;
  double intra_latency_us = 0;  // per collective
  double inter_latency_us = 0;
  double step_latency_us = 0;  // per ring step

  // Sensors.
  double power_window_s = 0;  // power averaged over this window (0: one physics step)
  double power_noise_w = 0;   // standard deviation of the per-sample noise
  double power_bias_w = 0;    // per-GPU constant offset, uniform in [-bias, bias]
  double temp_noise_c = 0;
  double util_window_s = 0;  // utilization = busy fraction over this window

  // Part-to-part and site variation (standard deviations).
  double leak_spread = 0;                // relative
  double thermal_resistance_spread = 0;  // relative
  double node_inlet_spread_c = 0;
};

// A numeric field of the profile, for JSON overrides, parameters_json and the documentation.
struct ProfileField {
  std::string_view key;
  double PlatformProfile::*member = nullptr;
  int PlatformProfile::*intMember = nullptr;
  std::string_view unit;
  int minInt = 1, maxInt = 64;  // range of an integer field
};
std::span<const ProfileField> profileFields();

// The built-in profiles: "h100", "h200", "mi250".
std::span<const PlatformProfile> builtinProfiles();
// A built-in profile by id (case-insensitive); nullptr if unknown.
const PlatformProfile* findProfile(std::string_view id);

// Reads a JSON object that overrides fields of `base` (or of the profile its "base" key names).
// Throws wl::Error naming the file and the JSON path on anything unexpected.
PlatformProfile loadPlatformFile(const std::filesystem::path& path, const PlatformProfile& base);
// Checks physical sanity (positive clocks and bandwidths, ordered temperatures...); throws
// wl::Error with `origin` in the message.
void validateProfile(const PlatformProfile& p, std::string_view origin);

nlohmann::json profileToJson(const PlatformProfile& p);

}  // namespace wl::sim
