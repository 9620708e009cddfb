// SPDX-License-Identifier: GPL-3.0-or-later
// Zeus (docs/import-telemetry.md, "Zeus"): the power monitor CSV and the ZeusMonitor window CSV.
//
// zeus-monitor: "Time,Power" rows such as "2022-07-13 02:07:36.708783111,32402": local time with
// nanoseconds and power in milliwatts (converted to W). One GPU.
//
// zeus-windows: "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy,..." with the start
// in seconds of Python's time.monotonic() clock (or epoch seconds), the length in s and the energy
// of each GPU in J over the window. Each window becomes, per GPU, a step of its mean power
// (energy / length) held from the window's start to its end, and a cumulative energy_j counter
// that rises by the window's energy over it. Samples: (start, P, E_before), (end - 1 ns, P,
// E_after), and when the next window starts later, (end, NaN, NaN) so that nothing is integrated
// across the unmeasured gap. Window names go into an Info note.

#include <fmt/format.h>

#include <cmath>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/import/telemetry/csv_telemetry.h"
#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/telemetry_importers.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import {
namespace {

std::string_view firstLine(std::string_view head) {
  return text::trim(head.substr(0, head.find('\n')));
}

// Epoch seconds below this (2001-09-09) are a monotonic clock, not wall time.
constexpr int64_t kEpochFloorNs = 1'000'000'000LL * text::kNsPerSecond;

constexpr tel::CsvFormat kMonitorFormat{
    .emptyFile = "empty file; expected the Zeus power monitor header 'Time,Power'",
    .headerOnFirstLine = true,
    .progressText = "reading Zeus power monitor CSV",
    .progressEvery = 0x10000,
    .expectedHeader = "'Time,Power'",
    .fieldCount = "expected {} fields (Time,Power), found {}",
    .truncatedLine = "last line cut off (no newline)",
};

constexpr tel::CsvFormat kWindowsFormat{
    .emptyFile =
        "empty file; expected the ZeusMonitor header 'start_time,window_name,elapsed_time,"
        "gpu0_energy,...'",
    .headerOnFirstLine = true,
    .progressText = "reading ZeusMonitor windows",
};

class ZeusMonitorImporter final : public Importer {
 public:
  std::string_view name() const override { return "zeus-monitor"; }
  std::string_view description() const override {
    return "Zeus power monitor CSV: Time,Power (local time, power in mW)";
  }
  bool telemetry() const override { return true; }

  int detect(const InputProbe& probe) const override {
    if (probe.isDirectory) return 0;
    std::vector<std::string_view> fields;
    text::splitCsv(firstLine(probe.head), fields);
    return fields.size() == 2 && text::lower(fields[0]) == "time" &&
                   text::lower(fields[1]) == "power"
               ? 95
               : 0;
  }

  ImportedData read(const std::filesystem::path& input, const ImportOptions& options,
                    const Progress& progress) const override {
    tel::CsvTelemetryReader csv(input, progress, kMonitorFormat);
    ImportedData data;
    data.format = std::string(name());
    data.path = input;
    const std::vector<std::string_view>& header = csv.readHeader();
    if (header.size() != 2 || text::lower(header[0]) != "time" || text::lower(header[1]) != "power")
      text::fail(input, 1,
                 fmt::format("expected the header 'Time,Power', found '{}'",
                             text::excerpt(csv.headerText())));
    tel::ZonePolicy zone(options.utc_offset_s);
    tel::TableBuilder table;
    const size_t power = table.column(metric::kPower);
    csv.readRows(
        2,
        [](const std::vector<std::string_view>& fields) {
          if (fields.size() != 2 || text::lower(fields[0]) != "time") return tel::HeaderLine::No;
          return text::lower(fields[1]) == "power" ? tel::HeaderLine::Same
                                                   : tel::HeaderLine::Changed;
        },
        [&](const std::vector<std::string_view>& fields, int64_t lineNo) {
          const auto dt = text::parseDateTime(fields[0]);
          if (!dt)
            text::fail(input, lineNo,
                       fmt::format("column Time: expected 'YYYY-MM-DD HH:MM:SS.fffffffff', found "
                                   "'{}'",
                                   text::excerpt(fields[0])));
          const text::Value v = text::parseValue(fields[1]);
          if (v.kind == text::ValueKind::Text)
            text::fail(input, lineNo,
                       fmt::format("column Power: expected milliwatts, found '{}'",
                                   text::excerpt(fields[1])));
          if (v.kind == text::ValueKind::NonFinite) csv.nonFinite.add(lineNo, fields[1]);
          table.addRow(zone.toUtc(*dt));
          if (v.kind == text::ValueKind::Number) table.set(power, v.number / 1000.0);  // mW -> W
        });
    if (table.rows() == 0) text::fail(input, 1, "a header but no data rows");
    ImportedGpu gpu;
    gpu.table = table.finish();
    data.sample_interval_s = tel::medianIntervalSeconds(gpu.table.t_ns);
    data.gpus.push_back(std::move(gpu));
    // Zeus's PowerMonitor polls NVML's power usage: power.draw, a 1 s average on Ampere+.
    SensorInfo s = nvidiaSmiPowerSensor("power.draw", "");
    s.basis = "Zeus PowerMonitor (NVML power usage: 1 s average on Ampere and newer)";
    data.sensors.push_back(std::move(s));
    zone.addNote(data.notes, fmt::format("file {}", input.filename().string()));
    csv.addNotes(data.notes);
    csv.done();
    return data;
  }
};

class ZeusWindowsImporter final : public Importer {
 public:
  std::string_view name() const override { return "zeus-windows"; }
  std::string_view description() const override {
    return "ZeusMonitor window CSV: start_time,window_name,elapsed_time,gpuN_energy...";
  }
  bool telemetry() const override { return true; }

  int detect(const InputProbe& probe) const override {
    if (probe.isDirectory) return 0;
    std::vector<std::string_view> fields;
    text::splitCsv(firstLine(probe.head), fields);
    return fields.size() >= 4 && text::lower(fields[0]) == "start_time" &&
                   text::lower(fields[1]) == "window_name" &&
                   text::lower(fields[2]) == "elapsed_time"
               ? 95
               : 0;
  }

  ImportedData read(const std::filesystem::path& input, const ImportOptions& options,
                    const Progress& progress) const override {
    tel::CsvTelemetryReader csv(input, progress, kWindowsFormat);
    ImportedData data;
    data.format = std::string(name());
    data.path = input;
    const std::vector<int> gpuOf = windowColumns(csv);
    std::vector<Window> windows = readWindows(csv, gpuOf.size());
    // Monotonic clock: shift to the given start time, or keep it relative.
    const bool monotonic = windows.front().start < kEpochFloorNs;
    int64_t shift = 0;
    if (monotonic && options.start_ns) shift = *options.start_ns - windows.front().start;
    data.absoluteTime = !monotonic || options.start_ns.has_value();
    data.startTimeUsed = monotonic && options.start_ns.has_value();
    for (size_t gi = 0; gi < gpuOf.size(); ++gi) {
      ImportedGpu gpu;
      gpu.info.local_index = gpuOf[gi];
      gpu.table = windowTable(windows, gi, shift);
      data.gpus.push_back(std::move(gpu));
    }
    addWindowNotes(data.notes, input, windows, monotonic, options.start_ns.has_value());
    {
      // Each window is one mean power (its energy over its length): an average over a window of
      // its own length, and energy_j a counter.
      SensorInfo s;
      s.metric = std::string(metric::kPower);
      s.kind = SensorKind::Average;
      s.window_s = kNaN;
      s.basis = "ZeusMonitor window: mean power over each measurement window (energy / length)";
      data.sensors.push_back(std::move(s));
      data.sensors.push_back(genericSensor(metric::kEnergy, "ZeusMonitor window energy"));
    }
    csv.addNotes(data.notes);
    csv.done();
    return data;
  }

 private:
  struct Window {
    int64_t start, end;
    std::string name;
    std::vector<double> energy;
    int64_t line;
  };

  // The header: start_time, window_name, elapsed_time, then one gpuN_energy column per GPU;
  // returns N of each.
  static std::vector<int> windowColumns(tel::CsvTelemetryReader& csv) {
    const std::filesystem::path& input = csv.path();
    const std::vector<std::string_view>& fields = csv.readHeader();
    if (fields.size() < 4 || text::lower(fields[0]) != "start_time" ||
        text::lower(fields[1]) != "window_name" || text::lower(fields[2]) != "elapsed_time")
      text::fail(input, 1,
                 fmt::format("expected the header 'start_time,window_name,elapsed_time,"
                             "gpu0_energy,...', found '{}'",
                             text::excerpt(csv.headerText())));
    std::vector<int> gpuOf;
    for (size_t i = 3; i < fields.size(); ++i) {
      const std::string f = text::lower(fields[i]);
      int g = -1;
      if (f.rfind("gpu", 0) == 0 && f.size() > 10 && f.substr(f.size() - 7) == "_energy") {
        if (const auto n = text::parseInt(std::string_view(f).substr(3, f.size() - 10)))
          g = static_cast<int>(*n);
      }
      if (g < 0 || g > 4095)
        text::fail(input, 1,
                   fmt::format("column {}: expected 'gpuN_energy', found '{}'", i + 1,
                               text::excerpt(fields[i])));
      gpuOf.push_back(g);
    }
    return gpuOf;
  }

  // Every window, sorted by start; overlapping windows are an error.
  static std::vector<Window> readWindows(tel::CsvTelemetryReader& csv, size_t gpus) {
    const std::filesystem::path& input = csv.path();
    std::vector<Window> windows;
    csv.readRows(
        gpus + 3,
        [](const std::vector<std::string_view>& fields) {
          return !fields.empty() && text::lower(fields[0]) == "start_time"
                     ? tel::HeaderLine::Changed
                     : tel::HeaderLine::No;
        },
        [&](const std::vector<std::string_view>& fields, int64_t lineNo) {
          windows.push_back(readWindow(csv, fields, lineNo));
        });
    if (windows.empty()) text::fail(input, 1, "a header but no windows");
    std::stable_sort(windows.begin(), windows.end(),
                     [](const Window& a, const Window& b) { return a.start < b.start; });
    for (size_t i = 1; i < windows.size(); ++i)
      if (windows[i].start < windows[i - 1].end)
        text::fail(input, windows[i].line,
                   fmt::format("window '{}' starts before window '{}' (line {}) ends; overlapping "
                               "windows cannot be shown as one power series",
                               text::excerpt(windows[i].name), text::excerpt(windows[i - 1].name),
                               windows[i - 1].line));
    return windows;
  }

  static Window readWindow(tel::CsvTelemetryReader& csv,
                           const std::vector<std::string_view>& fields, int64_t lineNo) {
    const std::filesystem::path& input = csv.path();
    const auto start = text::parseEpochSeconds(fields[0]);
    if (!start)
      text::fail(
          input, lineNo,
          fmt::format("column start_time: expected seconds, found '{}'", text::excerpt(fields[0])));
    const text::Value len = text::parseValue(fields[2]);
    if (len.kind != text::ValueKind::Number || len.number <= 0 || len.number > 1e7)
      text::fail(input, lineNo,
                 fmt::format("column elapsed_time: expected a positive number of seconds, "
                             "found '{}'",
                             text::excerpt(fields[2])));
    Window w;
    w.start = *start;
    w.end = *start + static_cast<int64_t>(std::llround(len.number * 1e9));
    w.name = std::string(fields[1]);
    w.line = lineNo;
    for (size_t i = 3; i < fields.size(); ++i) {
      const text::Value e = text::parseValue(fields[i]);
      if (e.kind == text::ValueKind::Text)
        text::fail(input, lineNo,
                   fmt::format("column {}: expected an energy in J, found '{}'", i + 1,
                               text::excerpt(fields[i])));
      if (e.kind == text::ValueKind::NonFinite) csv.nonFinite.add(lineNo, fields[i]);
      w.energy.push_back(e.kind == text::ValueKind::Number ? e.number : kNaN);
    }
    return w;
  }

  // One GPU's table: each window as its mean power (energy / length) from its start to its end
  // and as a cumulative energy counter; a gap between windows is a row of NaN.
  static TelemetryTable windowTable(const std::vector<Window>& windows, size_t gi, int64_t shift) {
    tel::TableBuilder table;
    const size_t power = table.column(metric::kPower);
    const size_t energy = table.column(metric::kEnergy);
    double cumulative = 0;
    for (size_t wi = 0; wi < windows.size(); ++wi) {
      const Window& w = windows[wi];
      const double e = w.energy[gi];
      const double seconds = static_cast<double>(w.end - w.start) / 1e9;
      const double p = std::isfinite(e) ? e / seconds : kNaN;
      table.addRow(w.start + shift);
      table.set(power, p);
      table.set(energy, std::isfinite(e) ? cumulative : kNaN);
      if (std::isfinite(e)) cumulative += e;
      table.addRow(w.end - 1 + shift);
      table.set(power, p);
      table.set(energy, std::isfinite(e) ? cumulative : kNaN);
      const bool gap = wi + 1 < windows.size() && windows[wi + 1].start > w.end;
      if (gap) table.addRow(w.end + shift);  // NaN: no integration across the gap
    }
    return table.finish();
  }

  static void addWindowNotes(std::vector<QualityNote>& notes, const std::filesystem::path& input,
                             const std::vector<Window>& windows, bool monotonic, bool startGiven) {
    std::string names;
    for (size_t i = 0; i < windows.size() && i < 20; ++i)
      names += (i ? ", " : "") + windows[i].name;
    if (windows.size() > 20) names += fmt::format(", ... ({} more)", windows.size() - 20);
    const std::string subject = fmt::format("file {}", input.filename().string());
    notes.push_back(
        {Severity::Info, "zeus_windows", subject,
         fmt::format("{} measurement windows ({}); each window is stored per GPU as its mean "
                     "power (energy / length) over the window and as a cumulative energy_j "
                     "counter; time between windows is a gap",
                     windows.size(), names)});
    if (monotonic)
      notes.push_back(
          {Severity::Warning, "monotonic_clock", subject,
           startGiven
               ? std::string("window start times are on a monotonic clock (seconds since boot); "
                             "the first window was placed at the given start time")
               : std::string("window start times are on a monotonic clock (seconds since boot), "
                             "not wall time; the run's times are relative until an offset is "
                             "given")});
  }
};

}  // namespace

std::unique_ptr<Importer> makeZeusMonitorImporter() {
  return std::make_unique<ZeusMonitorImporter>();
}

std::unique_ptr<Importer> makeZeusWindowsImporter() {
  return std::make_unique<ZeusWindowsImporter>();
}

}  // namespace wl::import
