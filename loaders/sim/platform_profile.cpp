// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/platform_profile.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "loaders/core/error.h"

namespace wl::sim {
namespace {

using P = PlatformProfile;

constexpr std::array kFields = {
    ProfileField{"gcds_per_package", nullptr, &P::gcds_per_package, ""},
    ProfileField{"default_gpus_per_node", nullptr, &P::default_gpus_per_node, ""},
    ProfileField{"rows_per_node", nullptr, &P::rows_per_node, ""},
    ProfileField{"package_power_on_first_gpu", nullptr, &P::package_power_on_first_gpu, "", 0, 1},
    ProfileField{"peak_bf16_tflops", &P::peak_bf16_tflops, nullptr, "TFLOP/s"},
    ProfileField{"gemm_efficiency", &P::gemm_efficiency, nullptr, ""},
    ProfileField{"attention_efficiency", &P::attention_efficiency, nullptr, ""},
    ProfileField{"hbm_bandwidth_gbs", &P::hbm_bandwidth_gbs, nullptr, "GB/s"},
    ProfileField{"hbm_efficiency", &P::hbm_efficiency, nullptr, ""},
    ProfileField{"hbm_capacity_gb", &P::hbm_capacity_gb, nullptr, "GB"},
    ProfileField{"hbm_usable_gib", &P::hbm_usable_gib, nullptr, "GiB"},
    ProfileField{"memory_reserve_gib", &P::memory_reserve_gib, nullptr, "GiB"},
    ProfileField{"max_sm_clock_mhz", &P::max_sm_clock_mhz, nullptr, "MHz"},
    ProfileField{"idle_sm_clock_mhz", &P::idle_sm_clock_mhz, nullptr, "MHz"},
    ProfileField{"clock_step_mhz", &P::clock_step_mhz, nullptr, "MHz"},
    ProfileField{"max_mem_clock_mhz", &P::max_mem_clock_mhz, nullptr, "MHz"},
    ProfileField{"power_limit_w", &P::power_limit_w, nullptr, "W"},
    ProfileField{"min_power_limit_w", &P::min_power_limit_w, nullptr, "W"},
    ProfileField{"power_base_w", &P::power_base_w, nullptr, "W"},
    ProfileField{"power_leak_ref_w", &P::power_leak_ref_w, nullptr, "W"},
    ProfileField{"leak_ref_temp_c", &P::leak_ref_temp_c, nullptr, "C"},
    ProfileField{"leak_per_c", &P::leak_per_c, nullptr, "1/C"},
    ProfileField{"leak_voltage_exp", &P::leak_voltage_exp, nullptr, ""},
    ProfileField{"power_dyn_max_w", &P::power_dyn_max_w, nullptr, "W"},
    ProfileField{"voltage_min_frac", &P::voltage_min_frac, nullptr, ""},
    ProfileField{"activity_gemm", &P::activity_gemm, nullptr, ""},
    ProfileField{"activity_attention", &P::activity_attention, nullptr, ""},
    ProfileField{"activity_memory", &P::activity_memory, nullptr, ""},
    ProfileField{"activity_comm", &P::activity_comm, nullptr, ""},
    ProfileField{"activity_comm_wait", &P::activity_comm_wait, nullptr, ""},
    ProfileField{"die_resistance_c_per_w", &P::die_resistance_c_per_w, nullptr, "C/W"},
    ProfileField{"die_tau_s", &P::die_tau_s, nullptr, "s"},
    ProfileField{"sink_resistance_c_per_w", &P::sink_resistance_c_per_w, nullptr, "C/W"},
    ProfileField{"sink_tau_s", &P::sink_tau_s, nullptr, "s"},
    ProfileField{"mem_thermal_resistance_c_per_w", &P::mem_thermal_resistance_c_per_w, nullptr,
                 "C/W"},
    ProfileField{"mem_temp_offset_c", &P::mem_temp_offset_c, nullptr, "C"},
    ProfileField{"mem_thermal_tau_s", &P::mem_thermal_tau_s, nullptr, "s"},
    ProfileField{"air_conductance_w_per_k", &P::air_conductance_w_per_k, nullptr, "W/K"},
    ProfileField{"package_air_conductance_w_per_k", &P::package_air_conductance_w_per_k, nullptr,
                 "W/K"},
    ProfileField{"fan_min_frac", &P::fan_min_frac, nullptr, ""},
    ProfileField{"fan_ramp_start_c", &P::fan_ramp_start_c, nullptr, "C"},
    ProfileField{"fan_ramp_full_c", &P::fan_ramp_full_c, nullptr, "C"},
    ProfileField{"fan_tau_s", &P::fan_tau_s, nullptr, "s"},
    ProfileField{"fan_resistance_exp", &P::fan_resistance_exp, nullptr, ""},
    ProfileField{"max_operating_temp_c", &P::max_operating_temp_c, nullptr, "C"},
    ProfileField{"slowdown_temp_c", &P::slowdown_temp_c, nullptr, "C"},
    ProfileField{"shutdown_temp_c", &P::shutdown_temp_c, nullptr, "C"},
    ProfileField{"mem_max_operating_temp_c", &P::mem_max_operating_temp_c, nullptr, "C"},
    ProfileField{"power_cap_tau_s", &P::power_cap_tau_s, nullptr, "s"},
    ProfileField{"power_cap_setpoint_frac", &P::power_cap_setpoint_frac, nullptr, ""},
    ProfileField{"slew_down_mhz_per_ms", &P::slew_down_mhz_per_ms, nullptr, "MHz/ms"},
    ProfileField{"slew_up_mhz_per_ms", &P::slew_up_mhz_per_ms, nullptr, "MHz/ms"},
    ProfileField{"sw_thermal_mhz_per_c", &P::sw_thermal_mhz_per_c, nullptr, "MHz/C"},
    ProfileField{"hw_slowdown_factor", &P::hw_slowdown_factor, nullptr, ""},
    ProfileField{"idle_downclock_s", &P::idle_downclock_s, nullptr, "s"},
    ProfileField{"intra_node_gbs", &P::intra_node_gbs, nullptr, "GB/s"},
    ProfileField{"intra_package_gbs", &P::intra_package_gbs, nullptr, "GB/s"},
    ProfileField{"nics_per_node", nullptr, &P::nics_per_node, ""},
    ProfileField{"inter_node_gbps", &P::inter_node_gbps, nullptr, "Gb/s"},
    ProfileField{"link_efficiency", &P::link_efficiency, nullptr, ""},
    ProfileField{"network_efficiency", &P::network_efficiency, nullptr, ""},
    ProfileField{"intra_latency_us", &P::intra_latency_us, nullptr, "us"},
    ProfileField{"inter_latency_us", &P::inter_latency_us, nullptr, "us"},
    ProfileField{"step_latency_us", &P::step_latency_us, nullptr, "us"},
    ProfileField{"chunk_half_intra_kib", &P::chunk_half_intra_kib, nullptr, "KiB"},
    ProfileField{"chunk_half_inter_kib", &P::chunk_half_inter_kib, nullptr, "KiB"},
    ProfileField{"tree_efficiency", &P::tree_efficiency, nullptr, ""},
    ProfileField{"p2p_bandwidth_frac", &P::p2p_bandwidth_frac, nullptr, ""},
    ProfileField{"overlap_sm_slowdown", &P::overlap_sm_slowdown, nullptr, ""},
    ProfileField{"power_window_s", &P::power_window_s, nullptr, "s"},
    ProfileField{"power_noise_w", &P::power_noise_w, nullptr, "W"},
    ProfileField{"power_bias_w", &P::power_bias_w, nullptr, "W"},
    ProfileField{"temp_noise_c", &P::temp_noise_c, nullptr, "C"},
    ProfileField{"util_window_s", &P::util_window_s, nullptr, "s"},
    ProfileField{"leak_spread", &P::leak_spread, nullptr, ""},
    ProfileField{"thermal_resistance_spread", &P::thermal_resistance_spread, nullptr, ""},
    ProfileField{"node_inlet_spread_c", &P::node_inlet_spread_c, nullptr, "C"},
};

// Model constants shared by the NVIDIA Hopper profiles (see docs/simulator.md for each source).
PlatformProfile hopperCommon() {
  P p;
  p.vendor = Vendor::Nvidia;
  p.gcds_per_package = 1;
  p.default_gpus_per_node = 8;
  p.rows_per_node = 2;
  p.peak_bf16_tflops = 989.4;
  p.gemm_efficiency = 0.80;
  p.attention_efficiency = 0.60;
  p.hbm_efficiency = 0.80;
  p.memory_reserve_gib = 3.0;
  p.max_sm_clock_mhz = 1980;
  p.idle_sm_clock_mhz = 345;
  p.clock_step_mhz = 15;
  p.power_limit_w = 700;
  p.min_power_limit_w = 200;
  p.power_leak_ref_w = 110;
  p.leak_ref_temp_c = 60;
  p.leak_per_c = 0.02;
  p.leak_voltage_exp = 4;
  p.power_dyn_max_w = 660;
  p.voltage_min_frac = 0.65;
  p.activity_gemm = 1.0;
  p.activity_attention = 0.85;
  p.activity_memory = 0.45;
  p.activity_comm = 0.30;
  p.activity_comm_wait = 0.12;
  p.die_resistance_c_per_w = 0.028;
  p.die_tau_s = 0.2;
  p.sink_resistance_c_per_w = 0.030;
  p.sink_tau_s = 40;
  p.mem_thermal_resistance_c_per_w = 0.030;
  p.mem_temp_offset_c = 10;
  p.mem_thermal_tau_s = 40;
  p.air_conductance_w_per_k = 64;
  p.package_air_conductance_w_per_k = 64;
  p.fan_min_frac = 0.3;
  p.fan_ramp_start_c = 30;
  p.fan_ramp_full_c = 70;
  p.fan_tau_s = 5;
  p.fan_resistance_exp = 0.8;
  p.max_operating_temp_c = 87;
  p.slowdown_temp_c = 89;
  p.shutdown_temp_c = 95;
  p.mem_max_operating_temp_c = 95;
  p.power_cap_tau_s = 1.0;
  p.power_cap_setpoint_frac = 0.985;
  p.slew_down_mhz_per_ms = 20;
  p.slew_up_mhz_per_ms = 8;
  p.sw_thermal_mhz_per_c = 45;
  p.hw_slowdown_factor = 0.5;
  p.idle_downclock_s = 2.0;
  p.intra_node_gbs = 450;
  p.intra_package_gbs = 450;
  p.inter_node_gbps = 100;
  p.link_efficiency = 0.80;
  p.network_efficiency = 0.90;
  p.intra_latency_us = 10;
  p.inter_latency_us = 25;
  p.step_latency_us = 1.5;
  p.nics_per_node = 1;
  p.chunk_half_intra_kib = 512;
  p.chunk_half_inter_kib = 128;
  p.tree_efficiency = 0.9;
  p.p2p_bandwidth_frac = 0.5;
  p.overlap_sm_slowdown = 0.12;
  p.power_window_s = 0;
  p.power_noise_w = 2.0;
  p.power_bias_w = 3.0;
  p.temp_noise_c = 0.3;
  p.util_window_s = 1.0 / 6.0;
  p.leak_spread = 0.08;
  p.thermal_resistance_spread = 0.04;
  p.node_inlet_spread_c = 0.7;
  return p;
}

std::array<PlatformProfile, 3> makeBuiltins() {
  P h100 = hopperCommon();
  h100.id = "h100";
  h100.platform = "H100";
  h100.device_name = "NVIDIA H100 80GB HBM3";
  h100.hbm_bandwidth_gbs = 3350;
  h100.hbm_capacity_gb = 80;
  h100.hbm_usable_gib = 79.18;  // 81081 MiB free of 81559 in the capture
  h100.max_mem_clock_mhz = 2619;
  h100.power_base_w = 50.5;

  P h200 = hopperCommon();
  h200.id = "h200";
  h200.platform = "H200";
  h200.device_name = "NVIDIA H200";
  h200.hbm_bandwidth_gbs = 4800;
  h200.hbm_capacity_gb = 141;
  h200.hbm_usable_gib = 139.80;  // 143158 MiB free of 143771
  h200.max_mem_clock_mhz = 3201;
  h200.power_base_w = 62.8;

  P mi = hopperCommon();
  mi.id = "mi250";
  mi.platform = "MI250";
  mi.device_name = "AMD Instinct MI250";
  mi.vendor = Vendor::Amd;
  mi.gcds_per_package = 2;
  mi.package_power_on_first_gpu = 1;
  mi.default_gpus_per_node = 8;
  mi.rows_per_node = 2;
  mi.peak_bf16_tflops = 181.05;  // 362.1 per OAM, two GCDs
  mi.gemm_efficiency = 0.70;
  mi.attention_efficiency = 0.45;
  mi.hbm_bandwidth_gbs = 1600;  // 3.2 TB/s per OAM
  mi.hbm_efficiency = 0.75;
  mi.hbm_capacity_gb = 64;
  mi.hbm_usable_gib = 63.5;
  mi.max_sm_clock_mhz = 1700;
  mi.idle_sm_clock_mhz = 500;
  mi.clock_step_mhz = 5;
  mi.max_mem_clock_mhz = 1600;
  mi.power_limit_w = 500;  // per OAM package, shared by its two GCDs
  mi.min_power_limit_w = 200;
  mi.power_base_w = 35;
  mi.power_leak_ref_w = 60;
  mi.power_dyn_max_w = 230;
  mi.die_resistance_c_per_w = 0.05;
  mi.sink_resistance_c_per_w = 0.06;
  mi.mem_thermal_resistance_c_per_w = 0.06;
  mi.air_conductance_w_per_k = 70;
  mi.package_air_conductance_w_per_k = 35;  // the second GCD breathes the first one's air
  mi.max_operating_temp_c = 90;
  mi.slowdown_temp_c = 95;
  mi.shutdown_temp_c = 105;
  mi.mem_max_operating_temp_c = 94;
  mi.intra_node_gbs = 50;      // one xGMI link between GCDs of different OAMs
  mi.intra_package_gbs = 200;  // four xGMI links between the two GCDs of an OAM
  mi.power_window_s = 1.0;     // amd-smi reports average socket power
  return {h100, h200, mi};
}

const std::array<PlatformProfile, 3>& builtins() {
  static const std::array<PlatformProfile, 3> b = makeBuiltins();
  return b;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::span<const ProfileField> profileFields() {
  return kFields;
}

std::span<const PlatformProfile> builtinProfiles() {
  return builtins();
}

const PlatformProfile* findProfile(std::string_view id) {
  const std::string want = lower(id);
  for (const PlatformProfile& p : builtins())
    if (p.id == want) return &p;
  return nullptr;
}

PlatformProfile loadPlatformFile(const std::filesystem::path& path, const PlatformProfile& base) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the platform file", file));
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(
        fmt::format("{}: not valid JSON (byte {}): expected a JSON object of profile "
                    "fields",
                    file, e.byte));
  }
  if (!j.is_object())
    throw Error(
        fmt::format("{}: expected a JSON object of profile fields, found {}", file, j.type_name()));
  PlatformProfile p = base;
  if (auto it = j.find("base"); it != j.end()) {
    if (!it->is_string())
      throw Error(fmt::format("{}: /base: expected a string (h100, h200 or mi250), found {}", file,
                              it->type_name()));
    const PlatformProfile* b = findProfile(it->get<std::string>());
    if (!b)
      throw Error(fmt::format("{}: /base: unknown platform '{}' (expected h100, h200 or mi250)",
                              file, it->get<std::string>()));
    p = *b;
  }
  for (const auto& [key, value] : j.items()) {
    if (key == "base") continue;
    if (key == "platform" || key == "device_name" || key == "id") {
      if (!value.is_string())
        throw Error(
            fmt::format("{}: /{}: expected a string, found {}", file, key, value.type_name()));
      (key == "platform" ? p.platform
       : key == "id"     ? p.id
                         : p.device_name) = value.get<std::string>();
      continue;
    }
    const auto f = std::find_if(kFields.begin(), kFields.end(),
                                [&k = key](const ProfileField& pf) { return pf.key == k; });
    if (f == kFields.end())
      throw Error(fmt::format("{}: /{}: unknown profile field (see docs/simulator.md for the list)",
                              file, key));
    if (!value.is_number())
      throw Error(
          fmt::format("{}: /{}: expected a number, found {}", file, key, value.type_name()));
    const double v = value.get<double>();
    if (!std::isfinite(v)) throw Error(fmt::format("{}: /{}: expected a finite number", file, key));
    if (f->member) {
      p.*(f->member) = v;
    } else {
      if (v != std::floor(v) || v < f->minInt || v > f->maxInt)
        throw Error(fmt::format("{}: /{}: expected a whole number from {} to {}, found {}", file,
                                key, f->minInt, f->maxInt, v));
      p.*(f->intMember) = static_cast<int>(v);
    }
  }
  validateProfile(p, file);
  return p;
}

void validateProfile(const PlatformProfile& p, std::string_view origin) {
  auto fail = [&](std::string_view key, std::string_view what) {
    throw Error(fmt::format("{}: /{}: {}", origin, key, what));
  };
  for (const ProfileField& f : kFields) {
    if (!f.member) continue;
    const double v = p.*(f.member);
    if (!std::isfinite(v) || v < 0) fail(f.key, "must be a finite number >= 0");
  }
  auto positive = [&](std::string_view key, double v) {
    if (!(v > 0)) fail(key, fmt::format("must be > 0, found {}", v));
  };
  positive("peak_bf16_tflops", p.peak_bf16_tflops);
  positive("gemm_efficiency", p.gemm_efficiency);
  positive("attention_efficiency", p.attention_efficiency);
  positive("hbm_bandwidth_gbs", p.hbm_bandwidth_gbs);
  positive("hbm_efficiency", p.hbm_efficiency);
  positive("hbm_usable_gib", p.hbm_usable_gib);
  positive("max_sm_clock_mhz", p.max_sm_clock_mhz);
  positive("idle_sm_clock_mhz", p.idle_sm_clock_mhz);
  positive("clock_step_mhz", p.clock_step_mhz);
  positive("power_limit_w", p.power_limit_w);
  positive("power_dyn_max_w", p.power_dyn_max_w);
  positive("die_resistance_c_per_w", p.die_resistance_c_per_w);
  positive("die_tau_s", p.die_tau_s);
  positive("sink_resistance_c_per_w", p.sink_resistance_c_per_w);
  positive("sink_tau_s", p.sink_tau_s);
  positive("package_air_conductance_w_per_k", p.package_air_conductance_w_per_k);
  positive("fan_min_frac", p.fan_min_frac);
  positive("fan_tau_s", p.fan_tau_s);
  positive("power_cap_setpoint_frac", p.power_cap_setpoint_frac);
  positive("mem_thermal_tau_s", p.mem_thermal_tau_s);
  positive("air_conductance_w_per_k", p.air_conductance_w_per_k);
  positive("intra_node_gbs", p.intra_node_gbs);
  positive("intra_package_gbs", p.intra_package_gbs);
  positive("inter_node_gbps", p.inter_node_gbps);
  positive("chunk_half_intra_kib", p.chunk_half_intra_kib);
  positive("chunk_half_inter_kib", p.chunk_half_inter_kib);
  positive("tree_efficiency", p.tree_efficiency);
  positive("p2p_bandwidth_frac", p.p2p_bandwidth_frac);
  positive("link_efficiency", p.link_efficiency);
  positive("network_efficiency", p.network_efficiency);
  positive("slew_down_mhz_per_ms", p.slew_down_mhz_per_ms);
  positive("slew_up_mhz_per_ms", p.slew_up_mhz_per_ms);
  positive("hw_slowdown_factor", p.hw_slowdown_factor);
  positive("util_window_s", p.util_window_s);
  for (auto [key, v] : {std::pair{"gemm_efficiency", p.gemm_efficiency},
                        {"attention_efficiency", p.attention_efficiency},
                        {"hbm_efficiency", p.hbm_efficiency},
                        {"link_efficiency", p.link_efficiency},
                        {"network_efficiency", p.network_efficiency},
                        {"voltage_min_frac", p.voltage_min_frac},
                        {"fan_min_frac", p.fan_min_frac},
                        {"power_cap_setpoint_frac", p.power_cap_setpoint_frac},
                        {"tree_efficiency", p.tree_efficiency},
                        {"p2p_bandwidth_frac", p.p2p_bandwidth_frac},
                        {"overlap_sm_slowdown", p.overlap_sm_slowdown},
                        {"hw_slowdown_factor", p.hw_slowdown_factor}})
    if (v > 1) fail(key, fmt::format("must be at most 1, found {}", v));
  if (p.idle_sm_clock_mhz > p.max_sm_clock_mhz)
    fail("idle_sm_clock_mhz", "must not exceed max_sm_clock_mhz");
  if (!(p.max_operating_temp_c < p.slowdown_temp_c && p.slowdown_temp_c < p.shutdown_temp_c))
    fail("slowdown_temp_c", "temperatures must rise: max_operating < slowdown < shutdown");
  if (p.gcds_per_package < 1 || p.gcds_per_package > 2) fail("gcds_per_package", "must be 1 or 2");
  if (p.power_limit_w < p.min_power_limit_w)
    fail("power_limit_w", "must be at least min_power_limit_w");
  if (p.leak_per_c > 0.2) fail("leak_per_c", "must be at most 0.2 per degree");
  if (p.leak_voltage_exp > 8) fail("leak_voltage_exp", "must be at most 8");
  if (p.fan_resistance_exp > 3) fail("fan_resistance_exp", "must be at most 3");
  if (!(p.fan_ramp_full_c > p.fan_ramp_start_c))
    fail("fan_ramp_full_c", "must be above fan_ramp_start_c");
}

nlohmann::json profileToJson(const PlatformProfile& p) {
  nlohmann::json j;
  j["id"] = p.id;
  j["platform"] = p.platform;
  j["device_name"] = p.device_name;
  for (const ProfileField& f : kFields) {
    if (f.member)
      j[std::string(f.key)] = p.*(f.member);
    else
      j[std::string(f.key)] = p.*(f.intMember);
  }
  return j;
}

}  // namespace wl::sim
