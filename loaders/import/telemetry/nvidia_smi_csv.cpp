// SPDX-License-Identifier: GPL-3.0-or-later
// nvidia-smi --query-gpu CSV (docs/import-telemetry.md, "nvidia-smi query CSV").
//
// One pass over the file: the header decides what each column is (a timestamp, the GPU index, a
// metric, the throttle mask, a per-reason flag, a GpuInfo field); every row becomes one sample
// of one GPU. GPUs are told apart by the index column, else by uuid or pci.bus_id, else by their
// position in each burst of rows that share one timestamp (row k of a burst is GPU k).

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/import/telemetry/csv_telemetry.h"
#include "loaders/import/telemetry/gpu_cycles.h"
#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/telemetry_importers.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import {
namespace {

using text::ValueKind;

enum class Role : uint8_t {
  Ignore,
  Timestamp,
  Index,
  Metric,
  Mask,
  Reason,
  Name,
  Uuid,
  BusId,
  Host
};
enum class Info : uint8_t { None, PowerLimit, EnforcedLimit, MaxSm, MaxGraphics, MaxMem, MemTotal };

struct Column {
  std::string header;  // as written, trimmed
  std::string field;   // lower case, without the "[unit]"
  Role role = Role::Ignore;
  Info info = Info::None;
  std::string metric;  // Role::Metric: a known id, or the sanitized header
  bool known = false;  // a known metric: a text value is an error
  uint32_t bit = 0;    // Role::Reason
  bool textSeen = false;
  bool constant = false;  // a per-GPU constant (name, serial, memory.total...): tells GPUs apart
};

struct KnownField {
  std::string_view field;
  std::string_view metric;
  int priority;  // several fields may map to one metric: the lowest priority present wins
};

constexpr std::array kKnownFields = {
    KnownField{"power.draw", metric::kPower, 0},
    KnownField{"power_w", metric::kPower, 0},
    KnownField{"power.draw.instant", metric::kPower, 1},
    KnownField{"power.draw.average", metric::kPower, 2},
    KnownField{"temperature.gpu", metric::kTemp, 0},
    KnownField{"temperature_c", metric::kTemp, 0},
    KnownField{"temperature.memory", metric::kMemTemp, 0},
    KnownField{"clocks.sm", metric::kSmClock, 0},
    KnownField{"clocks.current.sm", metric::kSmClock, 0},
    KnownField{"clocks.mem", metric::kMemClock, 0},
    KnownField{"clocks.current.memory", metric::kMemClock, 0},
    KnownField{"utilization.gpu", metric::kUtil, 0},
    KnownField{"utilization_gpu_percent", metric::kUtil, 0},
    KnownField{"utilization.memory", metric::kMemUtil, 0},
    KnownField{"utilization_memory_percent", metric::kMemUtil, 0},
    KnownField{"memory.used", "mem_used_mib", 0},
    KnownField{"fan.speed", "fan_pct", 0},
};

struct ReasonField {
  std::string_view name;
  uint32_t bit;
};

constexpr std::array kReasonFields = {
    ReasonField{"gpu_idle", throttle::kGpuIdle},
    ReasonField{"applications_clocks_setting", throttle::kApplicationsClocks},
    ReasonField{"sw_power_cap", throttle::kSwPowerCap},
    ReasonField{"hw_slowdown", throttle::kHwSlowdown},
    ReasonField{"sync_boost", throttle::kSyncBoost},
    ReasonField{"sw_thermal_slowdown", throttle::kSwThermal},
    ReasonField{"hw_thermal_slowdown", throttle::kHwThermal},
    ReasonField{"hw_power_brake_slowdown", throttle::kHwPowerBrake},
    ReasonField{"display_clock_setting", throttle::kDisplayClock},
};

constexpr int kMaxGpuIndex = 4096;

// "power.draw [W]" -> field "power.draw"; nanoGPT's "power_W" -> "power_w".
std::string normalizeField(std::string_view header) {
  const size_t bracket = header.find('[');
  if (bracket != std::string_view::npos) header = header.substr(0, bracket);
  return text::lower(text::trim(header));
}

bool isReasonPrefix(std::string_view field, std::string_view& rest) {
  for (std::string_view prefix : {"clocks_throttle_reasons.", "clocks_event_reasons.",
                                  "clock_throttle_reasons.", "clocks_throttle_reasons_"}) {
    if (field.substr(0, prefix.size()) == prefix) {
      rest = field.substr(prefix.size());
      return true;
    }
  }
  return false;
}

// Fields that only nvidia-smi writes: used by detect().
bool isNvidiaField(std::string_view field) {
  if (field == "index" || field == "gpu_index" || field == "name" || field == "uuid" ||
      field == "pci.bus_id" || field == "pstate")
    return true;
  for (const KnownField& k : kKnownFields)
    if (k.field == field) return true;
  std::string_view rest;
  return isReasonPrefix(field, rest) || field.rfind("clocks.", 0) == 0 ||
         field.rfind("power.", 0) == 0;
}

// Identity and configuration fields: numbers, but not telemetry (a serial number, a PCI id, the
// compute capability, MIG or fabric state). They are not kept as columns.
bool isIdentityField(std::string_view f) {
  for (std::string_view exact :
       {"count", "serial", "compute_cap", "accounting.buffer_size", "encoder.stats.sessioncount"})
    if (f == exact) return true;
  for (std::string_view prefix :
       {"pci.", "pcie.link.", "inforom.", "platform.", "fabric.", "vgpu_", "mig.", "gsp.", "gom.",
        "protected_memory.", "remapped_rows.", "retired_pages.", "power_smoothing.", "driver_",
        "vbios", "dramencryption.", "ecc.mode.", "display_", "module."})
    if (f.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// Fields that stay the same for one GPU and often differ between GPUs: in a file without a GPU
// column their sequence shows how many GPUs take turns (gpu_cycles.h).
bool isPerGpuConstant(std::string_view f) {
  for (std::string_view exact :
       {"name", "gpu_name", "serial", "memory.total", "clocks.max.sm", "clocks.max.graphics",
        "clocks.max.gr", "clocks.max.memory", "clocks.max.mem", "vbios_version", "power.max_limit",
        "power.min_limit", "power.default_limit", "inforom.img", "pci.device_id",
        "pci.sub_device_id", "gpu_serial"})
    if (f == exact) return true;
  return false;
}

std::vector<Column> parseHeader(const std::vector<std::string_view>& fields) {
  std::vector<Column> cols(fields.size());
  std::map<std::string, int> bestPriority;  // metric -> lowest priority present
  for (size_t i = 0; i < fields.size(); ++i) {
    cols[i].header = std::string(fields[i]);
    cols[i].field = normalizeField(fields[i]);
    for (const KnownField& k : kKnownFields)
      if (k.field == cols[i].field) {
        auto [it, inserted] = bestPriority.emplace(std::string(k.metric), k.priority);
        if (!inserted) it->second = std::min(it->second, k.priority);
      }
  }
  std::map<std::string, int> used;  // metric ids handed out
  for (Column& c : cols) {
    const std::string& f = c.field;
    c.constant = isPerGpuConstant(f);
    std::string_view reason;
    if (f == "timestamp") {
      c.role = Role::Timestamp;
    } else if (f == "index" || f == "gpu_index") {
      c.role = Role::Index;
    } else if (f == "name" || f == "gpu_name") {
      c.role = Role::Name;
    } else if (f == "uuid" || f == "gpu_uuid") {
      c.role = Role::Uuid;
    } else if (f == "pci.bus_id" || f == "gpu_bus_id") {
      c.role = Role::BusId;
    } else if (f == "hostname") {
      c.role = Role::Host;
    } else if (isIdentityField(f)) {
      c.role = Role::Ignore;
    } else if (isReasonPrefix(f, reason)) {
      if (reason == "active") {
        c.role = Role::Mask;
      } else {
        for (const ReasonField& r : kReasonFields)
          if (r.name == reason) {
            c.role = Role::Reason;
            c.bit = r.bit;
          }
      }
    } else {
      c.role = Role::Metric;
      for (const KnownField& k : kKnownFields)
        if (k.field == f && bestPriority[std::string(k.metric)] == k.priority &&
            !used.count(std::string(k.metric))) {
          c.metric = std::string(k.metric);
          c.known = true;
        }
      if (f == "power.limit") c.info = Info::PowerLimit;
      if (f == "enforced.power.limit") c.info = Info::EnforcedLimit;
      if (f == "clocks.max.sm") c.info = Info::MaxSm;
      if (f == "clocks.max.graphics" || f == "clocks.max.gr") c.info = Info::MaxGraphics;
      if (f == "clocks.max.memory" || f == "clocks.max.mem") c.info = Info::MaxMem;
      if (f == "memory.total") c.info = Info::MemTotal;
      if (c.metric.empty()) c.metric = sanitizeMetricId(c.header);
      // Keep ids unique (a sanitized header may equal another column's id).
      int& n = used[c.metric];
      if (++n > 1) c.metric += fmt::format("_{}", n);
    }
  }
  return cols;
}

struct GpuState {
  ImportedGpu gpu;
  tel::TableBuilder table;
  std::vector<size_t> tableColumn;  // per CSV column: index in table (Role::Metric only)
};

// Rows of a file without a GPU column, read as one table, with the interned per-GPU constants of
// each row; split into GPUs once their number is known.
struct PositionalRows {
  std::vector<uint32_t> signature;  // per row
  std::vector<std::string> names;   // per signature id: the GPU name in it ("" if none)
  std::unordered_map<std::string, uint32_t> ids;
  std::string key;  // scratch

  void add(const std::vector<Column>& cols, const std::vector<std::string_view>& fields) {
    key.clear();
    std::string_view name;
    for (size_t i = 0; i < cols.size(); ++i) {
      if (!cols[i].constant) continue;
      key.append(fields[i]).push_back('\x1f');
      if (cols[i].role == Role::Name && !text::isMissing(fields[i])) name = fields[i];
    }
    auto [it, inserted] = ids.emplace(key, static_cast<uint32_t>(names.size()));
    if (inserted) names.emplace_back(name);
    signature.push_back(it->second);
  }
};

// The last finite value of each GpuInfo column, into the GPU's info; memory used as a percentage
// when the total is known.
void finishGpuTable(GpuState& s, const std::vector<Column>& cols, TelemetryTable& table) {
  double powerLimit = kNaN, enforcedLimit = kNaN, maxSm = kNaN, maxGraphics = kNaN, maxMem = kNaN,
         memTotal = kNaN;
  for (const Column& c : cols) {
    if (c.role != Role::Metric || c.info == Info::None) continue;
    const TelemetryColumn* col = table.column(c.metric);
    if (!col) continue;
    double last = kNaN;
    for (double v : col->values)
      if (std::isfinite(v)) last = v;
    switch (c.info) {
      case Info::None:
        break;
      case Info::PowerLimit:
        powerLimit = last;
        break;
      case Info::EnforcedLimit:
        enforcedLimit = last;
        break;
      case Info::MaxSm:
        maxSm = last;
        break;
      case Info::MaxGraphics:
        maxGraphics = last;
        break;
      case Info::MaxMem:
        maxMem = last;
        break;
      case Info::MemTotal:
        memTotal = last;
        break;
    }
  }
  GpuInfo& info = s.gpu.info;
  info.power_limit_w =
      static_cast<float>(std::isfinite(enforcedLimit) ? enforcedLimit : powerLimit);
  info.max_sm_clock_mhz = static_cast<float>(std::isfinite(maxSm) ? maxSm : maxGraphics);
  info.max_mem_clock_mhz = static_cast<float>(maxMem);
  for (const Column& c : cols)
    if (c.role == Role::Metric && c.textSeen && !c.known)
      std::erase_if(table.columns,
                    [&](const TelemetryColumn& tc) { return tc.metric == c.metric; });
  tel::addMemoryUsedPercent(table, memTotal);
}

// Splits the one table of a file without a GPU column into `n` GPUs: row i is GPU i mod n.
std::vector<std::unique_ptr<GpuState>> splitByPosition(const TelemetryTable& all,
                                                       const PositionalRows& rows, int n,
                                                       const std::string& host) {
  std::vector<std::unique_ptr<GpuState>> out;
  for (int k = 0; k < n; ++k) {
    auto s = std::make_unique<GpuState>();
    s->gpu.info.local_index = k;
    s->gpu.info.hostname = host;
    if (static_cast<size_t>(k) < rows.signature.size())
      s->gpu.info.device_name = rows.names[rows.signature[static_cast<size_t>(k)]];
    for (const TelemetryColumn& c : all.columns)
      s->table.column(c.metric);
    s->table.reserve(all.t_ns.size() / static_cast<size_t>(n) + 1);
    out.push_back(std::move(s));
  }
  const bool masks = !all.throttle_reasons.empty();
  for (size_t i = 0; i < all.t_ns.size(); ++i) {
    tel::TableBuilder& t = out[i % static_cast<size_t>(n)]->table;
    t.addRow(all.t_ns[i]);
    for (size_t c = 0; c < all.columns.size(); ++c)
      t.set(c, all.columns[c].values[i]);
    if (masks) t.setThrottle(all.throttle_reasons[i]);
  }
  return out;
}

constexpr tel::CsvFormat kCsvFormat{
    .emptyFile = "empty file; expected an nvidia-smi --query-gpu CSV with a header line",
    .progressText = "reading nvidia-smi CSV",
    .progressEvery = 0x10000,
    .changedHeaderAdvice = "; import the two parts as separate files",
};

// One read of one file: the header's columns, then every row into the table of its GPU.
class SmiCsvRead {
 public:
  SmiCsvRead(const std::filesystem::path& input, const ImportOptions& options,
             const Progress& progress)
      : input_(input),
        options_(options),
        csv_(input, progress, kCsvFormat),
        zone_(options.utc_offset_s) {}

  // Power and utilization as NVML defines them; the rest get the defaults of their kind.
  void addSensors(ImportedData& data) const {
    for (const Column& c : cols_) {
      if (c.role != Role::Metric) continue;
      SensorInfo sensor;
      if (c.field.rfind("power.draw", 0) == 0 || (c.known && c.metric == metric::kPower)) {
        sensor = nvidiaSmiPowerSensor(c.field, data.gpus.front().info.device_name);
      } else if (c.field.rfind("utilization.", 0) == 0) {
        sensor = genericSensor(c.metric, "nvidia-smi " + c.field);
        sensor.basis += " (NVML: a product-dependent period of 1/6 to 1 s)";
      } else {
        continue;
      }
      sensor.metric = c.metric;
      data.sensors.push_back(std::move(sensor));
    }
  }

  ImportedData read(std::string_view format) {
    readColumns();
    const size_t rows = csv_.readRows(
        cols_.size(), [&](const auto& fields) { return classify(fields); },
        [&](const auto& fields, int64_t lineNo) { readRow(fields, lineNo); });
    if (rows == 0)
      text::fail(
          input_, csv_.headerLine(),
          fmt::format("a header but no data rows (header '{}')", text::excerpt(csv_.headerText())));
    ImportedData data;
    data.format = std::string(format);
    data.path = input_;
    const std::string subject = fmt::format("file {}", input_.filename().string());
    splitGpus(data.notes, subject);
    for (auto& s : gpus_) {
      TelemetryTable table = s->table.finish();
      finishGpuTable(*s, cols_, table);
      s->gpu.table = std::move(table);
      data.gpus.push_back(std::move(s->gpu));
    }
    std::sort(data.gpus.begin(), data.gpus.end(), [](const ImportedGpu& a, const ImportedGpu& b) {
      return a.info.local_index < b.info.local_index;
    });
    if (!data.gpus.empty()) {
      data.sample_interval_s = tel::medianIntervalSeconds(data.gpus.front().table.t_ns);
      data.platform = tel::platformFromDeviceName(data.gpus.front().info.device_name);
      addSensors(data);
    }
    zone_.addNote(data.notes, subject);
    csv_.addNotes(data.notes);
    tel::addTallyNote(data.notes, noKey_, "rows_without_gpu_key", input_,
                      "rows with neither uuid nor pci.bus_id",
                      "they were read as one more GPU of their own");
    csv_.done();
    return data;
  }

 private:
  // The header: what each column is; a timestamp column is required.
  void readColumns() {
    const std::vector<std::string_view>& fields = csv_.readHeader();
    if (text::parseDateTime(fields[0]))
      text::fail(input_, csv_.headerLine(),
                 "no header line: this looks like nvidia-smi --query-gpu output written with "
                 "'noheader', so the field list is unknown; re-run without 'noheader' or put the "
                 "--query-gpu field list (e.g. 'timestamp, index, power.draw [W]') as the first "
                 "line");
    cols_ = parseHeader(fields);
    const auto findRole = [&](Role r) -> int {
      for (size_t i = 0; i < cols_.size(); ++i)
        if (cols_[i].role == r) return static_cast<int>(i);
      return -1;
    };
    tsCol_ = findRole(Role::Timestamp);
    if (tsCol_ < 0)
      text::fail(input_, csv_.headerLine(),
                 fmt::format("no 'timestamp' column in the header '{}'; add timestamp to "
                             "--query-gpu so that samples can be placed in time",
                             text::excerpt(csv_.headerText())));
    indexCol_ = findRole(Role::Index);
    uuidCol_ = findRole(Role::Uuid);
    busCol_ = findRole(Role::BusId);
    maskCol_ = findRole(Role::Mask);
    haveReasons_ = findRole(Role::Reason) >= 0;
    // Without any GPU column all rows go to one table, split by position at the end.
    positional_ = indexCol_ < 0 && uuidCol_ < 0 && busCol_ < 0;
  }

  // A row with a valid timestamp is data (its time is kept for readRow()); any other row naming
  // a timestamp column is another header.
  tel::HeaderLine classify(const std::vector<std::string_view>& fields) {
    dt_.reset();
    if (fields.size() == cols_.size())
      dt_ = text::parseDateTime(fields[static_cast<size_t>(tsCol_)]);
    if (dt_) return tel::HeaderLine::No;
    return std::any_of(fields.begin(), fields.end(),
                       [](std::string_view f) { return normalizeField(f) == "timestamp"; })
               ? tel::HeaderLine::Changed
               : tel::HeaderLine::No;
  }

  GpuState& newGpu(int localIndex) {
    auto s = std::make_unique<GpuState>();
    s->gpu.info.local_index = localIndex;
    s->tableColumn.assign(cols_.size(), static_cast<size_t>(-1));
    for (size_t i = 0; i < cols_.size(); ++i)
      if (cols_[i].role == Role::Metric) s->tableColumn[i] = s->table.column(cols_[i].metric);
    gpus_.push_back(std::move(s));
    return *gpus_.back();
  }

  // The GPU of a row: by its index column, else by uuid or pci.bus_id, else (positional) the
  // one table of all rows.
  GpuState& gpuOfRow(const std::vector<std::string_view>& fields, int64_t lineNo) {
    if (indexCol_ >= 0) {
      const std::string_view cell = fields[static_cast<size_t>(indexCol_)];
      const auto idx = text::parseInt(cell);
      if (!idx || *idx < 0 || *idx >= kMaxGpuIndex)
        text::fail(input_, lineNo,
                   fmt::format("column '{}': expected a GPU index 0..{}, found '{}'",
                               cols_[static_cast<size_t>(indexCol_)].header, kMaxGpuIndex - 1,
                               text::excerpt(cell)));
      const auto i = static_cast<size_t>(*idx);
      if (i >= byIndex_.size()) byIndex_.resize(i + 1, -1);
      if (byIndex_[i] < 0) {
        byIndex_[i] = static_cast<int>(gpus_.size());
        newGpu(static_cast<int>(i));
      }
      return *gpus_[static_cast<size_t>(byIndex_[i])];
    }
    if (!positional_) {
      // uuid, else pci.bus_id; a row that has neither goes to a GPU of its own (noted).
      std::string_view key = uuidCol_ >= 0 ? fields[static_cast<size_t>(uuidCol_)] : "";
      if (text::isMissing(key) && busCol_ >= 0) key = fields[static_cast<size_t>(busCol_)];
      if (text::isMissing(key)) {
        noKey_.add(lineNo, csv_.line());
        key = {};
      }
      auto [it, inserted] = byKey_.emplace(std::string(key), static_cast<int>(gpus_.size()));
      if (inserted) newGpu(static_cast<int>(gpus_.size()));
      return *gpus_[static_cast<size_t>(it->second)];
    }
    if (gpus_.empty()) newGpu(0);
    positions_.add(cols_, fields);
    return *gpus_.front();
  }

  // One data row: a sample of its GPU at the row's time.
  void readRow(const std::vector<std::string_view>& fields, int64_t lineNo) {
    if (!dt_) {
      const std::string_view ts = fields[static_cast<size_t>(tsCol_)];
      text::fail(input_, lineNo,
                 fmt::format("timestamp '{}' is not a date and time (expected 'YYYY/MM/DD "
                             "HH:MM:SS.mmm' or ISO-8601 such as '2025-09-24T03:41:43.487Z')",
                             text::excerpt(ts)));
    }
    const int64_t t = zone_.toUtc(*dt_);
    GpuState& g = gpuOfRow(fields, lineNo);
    g.table.addRow(t);
    readCells(g, fields, lineNo);
    ++rows_;
    reserveTables(lineNo);
  }

  void readCells(GpuState& g, const std::vector<std::string_view>& fields, int64_t lineNo) {
    uint32_t reasonMask = 0;
    bool anyReason = false;
    for (size_t i = 0; i < cols_.size(); ++i) {
      Column& c = cols_[i];
      const std::string_view cell = fields[i];
      switch (c.role) {
        case Role::Metric: {
          const text::Value v = text::parseValue(cell);
          double value = kNaN;
          if (v.kind == ValueKind::Number) {
            value = v.number;
          } else if (v.kind == ValueKind::NonFinite) {
            csv_.nonFinite.add(lineNo, cell);
          } else if (v.kind == ValueKind::Text) {
            if (c.known)
              text::fail(input_, lineNo,
                         fmt::format("column '{}': expected a number, found '{}'", c.header,
                                     text::excerpt(cell)));
            c.textSeen = true;
          }
          g.table.set(g.tableColumn[i], value);
          break;
        }
        case Role::Mask:
          if (!text::isMissing(cell)) {
            const auto mask = text::parseHexOrDecimal(cell);
            if (!mask)
              text::fail(input_, lineNo,
                         fmt::format("column '{}': expected a hex bitmask such as "
                                     "0x0000000000000004, found '{}'",
                                     c.header, text::excerpt(cell)));
            g.table.setThrottle(static_cast<uint32_t>(*mask & 0xFFFFFFFFull));
          } else {
            g.table.setThrottle(throttle::kUnknown);
          }
          break;
        case Role::Reason:
          if (cell == "Active") {
            reasonMask |= c.bit;
            anyReason = true;
          } else if (cell == "Not Active") {
            anyReason = true;
          }
          break;
        case Role::Name:
          if (!text::isMissing(cell) && g.gpu.info.device_name.empty())
            g.gpu.info.device_name = std::string(cell);
          break;
        case Role::Uuid:
          if (!text::isMissing(cell) && g.gpu.info.uuid.empty())
            g.gpu.info.uuid = std::string(cell);
          break;
        case Role::Host:
          if (!text::isMissing(cell) && g.gpu.info.hostname.empty())
            g.gpu.info.hostname = std::string(cell);
          break;
        default:
          break;
      }
    }
    if (maskCol_ < 0 && haveReasons_)
      g.table.setThrottle(anyReason ? reasonMask : throttle::kUnknown);
  }

  // After a first stretch, size the tables for the whole file (plain text only: the size of a
  // gzip file says little about its rows).
  void reserveTables(int64_t lineNo) {
    text::LineReader& reader = csv_.lines();
    if (reserved_ || rows_ != 4096 || !reader.plainText() || reader.fileSize() == 0) return;
    reserved_ = true;
    const double perRow = static_cast<double>(reader.textConsumed()) / static_cast<double>(lineNo);
    const double total = static_cast<double>(reader.fileSize()) / std::max(perRow, 1.0);
    const auto perGpu = static_cast<size_t>(total * 1.05 / static_cast<double>(gpus_.size()));
    if (perGpu < (size_t{1} << 31))
      for (auto& s : gpus_)
        s->table.reserve(perGpu);
  }

  // A file without a GPU column: the number of GPUs from timing, constants and continuity
  // (gpu_cycles.h), then row i is GPU i mod N. A file that names GPUs ignores --gpus (noted).
  void splitGpus(std::vector<QualityNote>& notes, const std::string& subject) {
    if (positional_) {
      const TelemetryTable& all = gpus_.front()->table.table();
      tel::CycleEvidence e;
      e.t_ns = all.t_ns;
      e.signature = positions_.signature;
      for (const TelemetryColumn& c : all.columns)
        e.metrics.emplace_back(c.values);
      e.given = options_.gpus;
      for (const Column& c : cols_)
        if (c.constant) e.constantFields += (e.constantFields.empty() ? "" : ", ") + c.field;
      const tel::CycleResult found = tel::inferGpuCount(e);
      notes.push_back({found.severity, "gpu_by_position", subject, found.message});
      gpus_ = splitByPosition(all, positions_, found.gpus, gpus_.front()->gpu.info.hostname);
    } else if (options_.gpus) {
      notes.push_back(
          {Severity::Info, "gpus_option_ignored", subject,
           fmt::format("--gpus {} was not used: the file names the GPU of each "
                       "row ({} column)",
                       *options_.gpus, indexCol_ >= 0 ? "index" : "uuid or pci.bus_id")});
    }
  }

  const std::filesystem::path& input_;
  const ImportOptions& options_;
  tel::CsvTelemetryReader csv_;
  tel::ZonePolicy zone_;
  std::vector<Column> cols_;
  int tsCol_ = -1, indexCol_ = -1, uuidCol_ = -1, busCol_ = -1, maskCol_ = -1;
  bool haveReasons_ = false, positional_ = false;
  std::optional<text::DateTime> dt_;             // of the row classify() saw last
  std::vector<std::unique_ptr<GpuState>> gpus_;  // by first appearance
  std::vector<int> byIndex_;                     // GPU index -> position in gpus_
  std::unordered_map<std::string, int> byKey_;   // uuid / bus id -> position in gpus_
  PositionalRows positions_;
  tel::Tally noKey_;
  size_t rows_ = 0;
  bool reserved_ = false;
};

class NvidiaSmiCsvImporter final : public Importer {
 public:
  std::string_view name() const override { return "nvidia-smi-csv"; }
  std::string_view description() const override {
    return "nvidia-smi --query-gpu CSV (header with or without units, any field set)";
  }
  bool telemetry() const override { return true; }

  int detect(const InputProbe& probe) const override {
    if (probe.isDirectory) return 0;
    std::string_view head = probe.head;
    std::string_view first;
    while (!head.empty()) {
      const size_t nl = head.find('\n');
      first = text::trim(head.substr(0, nl));
      head = nl == std::string_view::npos ? std::string_view{} : head.substr(nl + 1);
      if (!first.empty()) break;
    }
    if (first.empty()) return 0;
    std::vector<std::string_view> fields;
    text::splitCsv(first, fields);
    if (fields.size() < 2) return 0;
    bool hasTimestamp = false;
    int nvidia = 0;
    for (std::string_view f : fields) {
      const std::string n = normalizeField(f);
      if (n == "timestamp") hasTimestamp = true;
      if (isNvidiaField(n)) ++nvidia;
    }
    if (hasTimestamp && nvidia >= 1) return 90;
    if (nvidia >= 2) return 60;
    // A headerless file (format=csv,noheader): claim it so the user gets the error that says so.
    if (text::parseDateTime(fields[0]) && fields.size() >= 3) {
      for (std::string_view f : fields) {
        const text::Value v = text::parseValue(f);
        if (v.kind == ValueKind::Number &&
            (v.unit == "W" || v.unit == "MHz" || v.unit == "%" || v.unit == "MiB"))
          return 40;
      }
    }
    return 0;
  }

  ImportedData read(const std::filesystem::path& input, const ImportOptions& options,
                    const Progress& progress) const override {
    return SmiCsvRead(input, options, progress).read(name());
  }
};

}  // namespace

std::unique_ptr<Importer> makeNvidiaSmiCsvImporter() {
  return std::make_unique<NvidiaSmiCsvImporter>();
}

}  // namespace wl::import
