// SPDX-License-Identifier: GPL-3.0-or-later
// amd-smi metric --csv (docs/import-telemetry.md, "amd-smi").
//
// One row per GPU per sample, groups of rows separated by blank lines; timestamps are epoch
// seconds. Some cells are Python-style lists in quotes ("['N/A', 'N/A']", "[0, 0, 0]"): a list
// cell is the mean of its numeric items (missing if none). Per clock domain there are five
// columns <dom>_clk, _min_clk, _max_clk, _clk_locked, _deep_sleep: the GFX domains (one per XCD)
// become sm_clock_mhz as the mean of their current clocks and max_sm_clock as the largest
// _max_clk; mem_N_clk becomes mem_clock_mhz; other domains keep their current clock as a column of
// their own. MI250 GCD pairs are handled by tel::applyGcdPairs.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/import/telemetry/csv_telemetry.h"
#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/telemetry_importers.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import {
namespace {

enum class Role : uint8_t {
  Ignore,
  Timestamp,
  Gpu,
  Metric,     // a column of its own
  GfxClk,     // averaged into sm_clock_mhz
  GfxMaxClk,  // GpuInfo::max_sm_clock_mhz
  MemClk,     // averaged into mem_clock_mhz
  MemMaxClk,  // GpuInfo::max_mem_clock_mhz
};

struct Column {
  std::string header;
  Role role = Role::Ignore;
  std::string metric;
  bool known = false;
  bool textSeen = false;
};

// "gfx_3_max_clk" -> domain "gfx", suffix "max_clk"; false if not a clock-domain column.
bool clockColumn(std::string_view h, std::string& domain, std::string& suffix) {
  // <dom>_<n>_<suffix>
  for (std::string_view s : {"_clk_locked", "_deep_sleep", "_min_clk", "_max_clk", "_clk"}) {
    if (h.size() <= s.size() || h.substr(h.size() - s.size()) != s) continue;
    const std::string_view stem = h.substr(0, h.size() - s.size());  // "gfx_3"
    const size_t us = stem.rfind('_');
    if (us == std::string_view::npos || us + 1 >= stem.size()) return false;
    if (!std::all_of(stem.begin() + static_cast<std::ptrdiff_t>(us) + 1, stem.end(),
                     [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    domain = std::string(stem.substr(0, us));
    suffix = std::string(s.substr(1));
    return true;
  }
  return false;
}

std::vector<Column> parseHeader(const std::vector<std::string_view>& fields) {
  std::vector<Column> cols(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    Column& c = cols[i];
    c.header = text::lower(fields[i]);
    const std::string& h = c.header;
    std::string domain, suffix;
    if (h == "timestamp") {
      c.role = Role::Timestamp;
    } else if (h == "gpu") {
      c.role = Role::Gpu;
    } else if (clockColumn(h, domain, suffix)) {
      if (domain == "gfx" && suffix == "clk") c.role = Role::GfxClk;
      if (domain == "gfx" && suffix == "max_clk") c.role = Role::GfxMaxClk;
      if (domain == "mem" && suffix == "clk") c.role = Role::MemClk;
      if (domain == "mem" && suffix == "max_clk") c.role = Role::MemMaxClk;
      if (domain != "gfx" && domain != "mem" && suffix == "clk") {
        c.role = Role::Metric;
        c.metric = sanitizeMetricId(h + "_mhz");
      }
    } else {
      c.role = Role::Metric;
      c.known = true;
      if (h == "gfx_activity" || h == "gfx_busy_percent") {
        c.metric = metric::kUtil;
      } else if (h == "umc_activity" || h == "umc_busy_percent") {
        c.metric = metric::kMemUtil;
      } else if (h == "socket_power" || h == "power" || h == "current_socket_power" ||
                 h == "average_socket_power") {
        c.metric = metric::kPower;
      } else if (h == "edge" || h == "temperature_edge" || h == "edge_temperature") {
        c.metric = metric::kTemp;
      } else if (h == "hotspot" || h == "temperature_hotspot" || h == "hotspot_temperature") {
        c.metric = metric::kHotspotTemp;
      } else if (h == "mem" || h == "temperature_mem" || h == "mem_temperature") {
        c.metric = metric::kMemTemp;
      } else {
        c.known = false;
        c.metric = sanitizeMetricId(h);
        if (h.size() > 8 && h.substr(h.size() - 8) == "_voltage") c.metric += "_mv";
      }
    }
  }
  return cols;
}

// The mean of the numeric items of a list cell "[0, 12, 'N/A']"; NaN if none.
double listMean(std::string_view cell) {
  cell = text::trim(cell);
  cell.remove_prefix(1);
  if (!cell.empty() && cell.back() == ']') cell.remove_suffix(1);
  double sum = 0;
  size_t n = 0;
  std::vector<std::string_view> items;
  text::splitCsv(cell, items);
  for (std::string_view item : items) {
    item = text::trim(item);
    if (item.size() >= 2 && (item.front() == '\'' || item.front() == '"')) {
      item.remove_prefix(1);
      item.remove_suffix(1);
    }
    const text::Value v = text::parseValue(item);
    if (v.kind == text::ValueKind::Number) {
      sum += v.number;
      ++n;
    }
  }
  return n > 0 ? sum / static_cast<double>(n) : kNaN;
}

struct GpuState {
  tel::TableBuilder table;
  std::vector<size_t> tableColumn;
  size_t smClock = 0, memClock = 0;
  double maxSm = kNaN, maxMem = kNaN;
};

constexpr tel::CsvFormat kCsvFormat{
    .emptyFile = "empty file; expected amd-smi metric --csv output",
    .progressText = "reading amd-smi CSV",
    .progressEvery = 0x4000,
};

// One read of one file: the header's columns, then every row into the table of its GPU.
class AmdSmiCsvRead {
 public:
  AmdSmiCsvRead(const std::filesystem::path& input, const ImportOptions& options,
                const Progress& progress)
      : input_(input), csv_(input, progress, kCsvFormat), zone_(options.utc_offset_s) {}

  ImportedData read(std::string_view format) {
    readColumns();
    const size_t rows = csv_.readRows(
        cols_.size(),
        [&](const std::vector<std::string_view>& fields) {
          return !fields.empty() && text::lower(fields[0]) == text::lower(cols_[0].header)
                     ? tel::HeaderLine::Changed
                     : tel::HeaderLine::No;
        },
        [&](const std::vector<std::string_view>& fields, int64_t lineNo) {
          readRow(fields, lineNo);
        });
    if (rows == 0) text::fail(input_, csv_.headerLine(), "a header but no data rows");
    ImportedData data;
    data.format = std::string(format);
    data.path = input_;
    const size_t edgeFallback = finishGpus(data.gpus);
    tel::applyGcdPairs(data.gpus, false, data.notes);
    data.sample_interval_s = tel::medianIntervalSeconds(data.gpus.front().table.t_ns);
    for (const Column& c : cols_)
      if (c.role == Role::Metric && c.metric == metric::kPower) {
        // amd-smi's socket_power (and average_socket_power) is the SMU's 1 s average (MI250);
        // current_socket_power is the instantaneous reading (MI300).
        SensorInfo s;
        s.metric = c.metric;
        const bool instant = c.header.find("current") != std::string::npos;
        s.kind = instant ? SensorKind::Instant : SensorKind::Average;
        s.window_s = instant ? 0.0 : 1.0;
        s.basis = fmt::format("amd-smi {} ({})", c.header,
                              instant ? "instantaneous" : "1 s average socket power");
        data.sensors.push_back(std::move(s));
        break;
      }
    const std::string subject = fmt::format("file {}", input_.filename().string());
    if (edgeFallback > 0)
      data.notes.push_back(
          {Severity::Info, "edge_temperature_missing", subject,
           fmt::format("{} GPUs report no edge temperature (N/A); their temp_c is the hotspot "
                       "temperature",
                       edgeFallback)});
    zone_.addNote(data.notes, subject);
    csv_.addNotes(data.notes);
    csv_.done();
    return data;
  }

 private:
  void readColumns() {
    cols_ = parseHeader(csv_.readHeader());
    for (size_t i = 0; i < cols_.size(); ++i) {
      if (cols_[i].role == Role::Timestamp) tsCol_ = static_cast<int>(i);
      if (cols_[i].role == Role::Gpu) gpuCol_ = static_cast<int>(i);
    }
    if (tsCol_ < 0 || gpuCol_ < 0)
      text::fail(input_, csv_.headerLine(),
                 fmt::format("expected an amd-smi metric header with 'timestamp' and 'gpu' "
                             "columns, found '{}'",
                             text::excerpt(csv_.headerText())));
  }

  // One row: a sample of its GPU at the row's time (epoch seconds, or a date and time).
  void readRow(const std::vector<std::string_view>& fields, int64_t lineNo) {
    const std::string_view tsCell = fields[static_cast<size_t>(tsCol_)];
    int64_t t = 0;
    if (const auto epoch = text::parseEpochSeconds(tsCell)) {
      t = *epoch;
    } else if (const auto dt = text::parseDateTime(tsCell)) {
      t = zone_.toUtc(*dt);
    } else {
      text::fail(input_, lineNo,
                 fmt::format("column 'timestamp': expected epoch seconds, found '{}'",
                             text::excerpt(tsCell)));
    }
    const std::string_view gpuCell = fields[static_cast<size_t>(gpuCol_)];
    const auto g = text::parseInt(gpuCell);
    if (!g || *g < 0 || *g > 4095)
      text::fail(
          input_, lineNo,
          fmt::format("column 'gpu': expected a GPU index, found '{}'", text::excerpt(gpuCell)));
    GpuState& s = gpus_[static_cast<int>(*g)];
    if (s.tableColumn.empty()) {
      s.tableColumn.assign(cols_.size(), static_cast<size_t>(-1));
      for (size_t i = 0; i < cols_.size(); ++i)
        if (cols_[i].role == Role::Metric) s.tableColumn[i] = s.table.column(cols_[i].metric);
      s.smClock = s.table.column(metric::kSmClock);
      s.memClock = s.table.column(metric::kMemClock);
    }
    s.table.addRow(t);
    readCells(s, fields, lineNo);
  }

  // The cells of one row: metrics into their columns; the GFX and memory clock domains averaged
  // into sm_clock_mhz and mem_clock_mhz, their largest maximum kept for the GPU's info.
  void readCells(GpuState& s, const std::vector<std::string_view>& fields, int64_t lineNo) {
    gfx_.clear();
    mem_.clear();
    for (size_t i = 0; i < cols_.size(); ++i) {
      Column& c = cols_[i];
      if (c.role == Role::Ignore || c.role == Role::Timestamp || c.role == Role::Gpu) continue;
      const std::string_view cell = fields[i];
      double value = kNaN;
      if (!cell.empty() && cell.front() == '[') {
        value = listMean(cell);
      } else {
        const text::Value v = text::parseValue(cell);
        if (v.kind == text::ValueKind::Number) value = v.number;
        if (v.kind == text::ValueKind::NonFinite) csv_.nonFinite.add(lineNo, cell);
        if (v.kind == text::ValueKind::Text) {
          if (c.known || c.role != Role::Metric)
            text::fail(input_, lineNo,
                       fmt::format("column '{}': expected a number or N/A, found '{}'", c.header,
                                   text::excerpt(cell)));
          c.textSeen = true;  // ENABLED / DISABLED and other states: not a metric
        }
      }
      switch (c.role) {
        case Role::Metric:
          s.table.set(s.tableColumn[i], value);
          break;
        case Role::GfxClk:
          if (std::isfinite(value)) gfx_.push_back(value);
          break;
        case Role::MemClk:
          if (std::isfinite(value)) mem_.push_back(value);
          break;
        case Role::GfxMaxClk:
          if (std::isfinite(value) && !(value <= s.maxSm)) s.maxSm = value;
          break;
        case Role::MemMaxClk:
          if (std::isfinite(value) && !(value <= s.maxMem)) s.maxMem = value;
          break;
        default:
          break;
      }
    }
    auto mean = [](const std::vector<double>& v) {
      double sum = 0;
      for (double x : v)
        sum += x;
      return v.empty() ? kNaN : sum / static_cast<double>(v.size());
    };
    s.table.set(s.smClock, mean(gfx_));
    s.table.set(s.memClock, mean(mem_));
  }

  // The GPUs' tables, without the columns that held text; returns how many GPUs had their
  // hotspot temperature stand in for a missing edge temperature.
  size_t finishGpus(std::vector<ImportedGpu>& out) {
    size_t edgeFallback = 0;
    for (auto& [g, s] : gpus_) {
      ImportedGpu gpu;
      gpu.info.local_index = g;
      gpu.info.max_sm_clock_mhz = static_cast<float>(s.maxSm);
      gpu.info.max_mem_clock_mhz = static_cast<float>(s.maxMem);
      TelemetryTable table = s.table.finish();
      for (const Column& c : cols_)
        if (c.role == Role::Metric && c.textSeen)
          std::erase_if(table.columns,
                        [&](const TelemetryColumn& tc) { return tc.metric == c.metric; });
      // MI300-class GPUs report no edge temperature: the hotspot stands in for temp_c.
      if (!table.column(metric::kTemp)) {
        if (const TelemetryColumn* hot = table.column(metric::kHotspotTemp)) {
          table.columns.push_back({std::string(metric::kTemp), hot->values});
          ++edgeFallback;
        }
      }
      gpu.table = std::move(table);
      out.push_back(std::move(gpu));
    }
    return edgeFallback;
  }

  const std::filesystem::path& input_;
  tel::CsvTelemetryReader csv_;
  tel::ZonePolicy zone_;
  std::vector<Column> cols_;
  int tsCol_ = -1, gpuCol_ = -1;
  std::map<int, GpuState> gpus_;
  std::vector<double> gfx_, mem_;  // scratch of readCells()
};

class AmdSmiCsvImporter final : public Importer {
 public:
  std::string_view name() const override { return "amd-smi-csv"; }
  std::string_view description() const override {
    return "amd-smi metric --csv (list cells, per-domain clocks, MI250 GCD pairs)";
  }
  bool telemetry() const override { return true; }

  int detect(const InputProbe& probe) const override {
    if (probe.isDirectory) return 0;
    const std::string_view head = probe.head;
    std::vector<std::string_view> fields;
    text::splitCsv(text::trim(head.substr(0, head.find('\n'))), fields);
    bool ts = false, gpu = false, amd = false;
    for (std::string_view f : fields) {
      const std::string l = text::lower(f);
      ts |= l == "timestamp";
      gpu |= l == "gpu";
      amd |= l == "socket_power" || l == "gfx_activity" || l == "umc_activity" ||
             l == "gfx_0_clk" || l == "hotspot";
    }
    return ts && gpu && amd ? 95 : 0;
  }

  ImportedData read(const std::filesystem::path& input, const ImportOptions& options,
                    const Progress& progress) const override {
    return AmdSmiCsvRead(input, options, progress).read(name());
  }
};

}  // namespace

std::unique_ptr<Importer> makeAmdSmiCsvImporter() {
  return std::make_unique<AmdSmiCsvImporter>();
}

}  // namespace wl::import
