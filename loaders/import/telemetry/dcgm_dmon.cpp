// SPDX-License-Identifier: GPL-3.0-or-later
// dcgmi dmon text (docs/import-telemetry.md, "DCGM").
//
// "#Entity POWER TOTEC ..." names the columns by DCGM dmon name (or field tag, DCGM_FI_* name or
// numeric id, as scripts that imitate dmon write them; dcgm_fields.h), the "ID W mJ ..." line
// gives units, rows read "GPU 0  120.5 ..." (the entity is two tokens), "N/A" marks a blank, and
// the header repeats every few dozen rows. There are no timestamps: dcgmi prints one row per
// entity every -d milliseconds, so the k-th row of a GPU lies k x ImportOptions::dcgm_interval_ms
// after ImportOptions::start_ns (or after 0, relative, without it). The interval is required.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/import/telemetry/dcgm_fields.h"
#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/telemetry_importers.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import {
namespace {

enum class Kind : uint8_t { Metric, Mask, Flag, Constant };

struct Column {
  std::string tag;
  std::string metric;  // Kind::Metric
  double scale = 1.0;
  std::optional<dcgm::Type> type;  // empty: a field the table does not know
  Kind kind = Kind::Metric;
  uint32_t bit = 0;                    // Kind::Flag
  const dcgm::Field* field = nullptr;  // Kind::Constant
};

bool startsWithEntity(std::string_view line) {
  line = text::trim(line);
  return line.size() >= 7 && text::lower(line.substr(0, 7)) == "#entity";
}

// The columns of a "#Entity ..." header: each field found in the DCGM table by any of its names;
// of several fields giving one metric (POWER and POWINST) the one of lowest priority keeps it.
std::vector<Column> parseColumns(const std::vector<std::string_view>& tokens) {
  std::vector<Column> cols;
  std::map<std::string, int> best;  // metric -> lowest priority present
  for (size_t i = 1; i < tokens.size(); ++i) {
    Column c;
    c.tag = std::string(tokens[i]);
    if (const dcgm::Field* f = dcgm::lookup(c.tag)) {
      c.type = f->type;
      c.field = f;
      switch (f->role) {
        case dcgm::Role::Metric:
        case dcgm::Role::Extra: {
          c.metric = std::string(f->metric);
          c.scale = f->scale;
          auto [it, inserted] = best.emplace(c.metric, f->priority);
          if (!inserted) it->second = std::min(it->second, f->priority);
          break;
        }
        case dcgm::Role::Throttle:
          c.kind = Kind::Mask;
          break;
        case dcgm::Role::GpuInfo:
        case dcgm::Role::Identity:
          c.kind = Kind::Constant;
          break;
      }
    } else if (const auto bit = dcgm::throttleFlagBit(c.tag)) {
      c.kind = Kind::Flag;
      c.bit = *bit;
    } else {
      c.metric = dcgm::extraMetricId(c.tag);
    }
    cols.push_back(std::move(c));
  }
  for (Column& c : cols)
    if (c.kind == Kind::Metric && c.field && c.field->role == dcgm::Role::Metric &&
        best[c.metric] != c.field->priority)
      c.metric = dcgm::shadowedMetricId(*c.field);
  return cols;
}

struct GpuRows {
  tel::TableBuilder table;
  std::vector<size_t> tableColumn;  // per column (Kind::Metric)
  dcgm::GpuConstants constants;
  int64_t rows = 0;
};

struct Tallies {
  tel::Tally otherEntities, blanks, nonFinite, truncated;
};

class DcgmDmonImporter final : public Importer {
 public:
  std::string_view name() const override { return "dcgm-dmon"; }
  std::string_view description() const override {
    return "dcgmi dmon -e FIELDS text (needs the -d interval: --dcgm-interval-ms)";
  }
  bool telemetry() const override { return true; }

  int detect(const InputProbe& probe) const override {
    if (probe.isDirectory) return 0;
    std::string_view head = probe.head;
    while (!head.empty()) {
      const size_t nl = head.find('\n');
      const std::string_view l = text::trim(head.substr(0, nl));
      head = nl == std::string_view::npos ? std::string_view{} : head.substr(nl + 1);
      if (l.empty()) continue;
      return startsWithEntity(l) ? 95 : 0;
    }
    return 0;
  }

  ImportedData read(const std::filesystem::path& input, const ImportOptions& options,
                    const Progress& progress) const override {
    if (!options.dcgm_interval_ms)
      text::fail(input, 0,
                 "dcgmi dmon text has no timestamps; give its sampling interval (the -d value of "
                 "dcgmi dmon, in milliseconds) with --dcgm-interval-ms");
    const double intervalMs = *options.dcgm_interval_ms;
    if (!std::isfinite(intervalMs) || intervalMs <= 0 || intervalMs > 3.6e6)
      text::fail(input, 0,
                 fmt::format("the DCGM sampling interval must be between 0 and 3,600,000 ms, "
                             "found {}",
                             intervalMs));
    const auto intervalNs = static_cast<int64_t>(std::llround(intervalMs * 1e6));
    const int64_t start = options.start_ns.value_or(0);

    text::LineReader reader(input);
    std::vector<Column> cols;
    std::string headerText;
    int64_t headerLine = 0;
    bool expectUnits = false;
    std::vector<std::string_view> tokens;
    std::map<int, GpuRows> gpus;
    Tallies tallies;
    size_t rows = 0;
    std::string_view line;

    while (reader.next(line)) {
      const int64_t lineNo = reader.lineNumber();
      if ((lineNo & 0x3FFF) == 0 && reader.fileSize() > 0)
        progress.report(
            static_cast<double>(reader.bytesRead()) / static_cast<double>(reader.fileSize()),
            "reading dcgmi dmon");
      const std::string_view trimmed = text::trim(line);
      if (trimmed.empty()) continue;
      text::splitWhitespace(trimmed, tokens);
      if (startsWithEntity(trimmed)) {
        std::string normalized;
        for (size_t i = 1; i < tokens.size(); ++i)
          normalized += std::string(tokens[i]) + ' ';
        if (!headerText.empty() && normalized != headerText)
          text::fail(input, lineNo,
                     fmt::format("the dcgmi dmon header changed halfway: expected '#Entity {}' "
                                 "(as on line {}), found '{}'; import the parts separately",
                                 text::excerpt(headerText), headerLine, text::excerpt(trimmed)));
        if (headerText.empty()) {
          headerText = normalized;
          headerLine = lineNo;
          cols = parseColumns(tokens);
        }
        expectUnits = true;
        continue;
      }
      if (expectUnits && text::lower(tokens[0]) == "id") {  // "ID W mJ MHz ..."
        expectUnits = false;
        continue;
      }
      expectUnits = false;
      if (cols.empty())
        text::fail(input, lineNo,
                   fmt::format("expected the dcgmi dmon header '#Entity ...' before the first "
                               "row, found '{}'",
                               text::excerpt(trimmed)));
      if (tokens.size() != cols.size() + 2) {
        if (!reader.lastLineTerminated() && tokens.size() < cols.size() + 2) {
          tallies.truncated.add(lineNo, trimmed);
          break;
        }
        text::fail(input, lineNo,
                   fmt::format("expected an entity (two tokens such as 'GPU 0') and {} values as "
                               "in the header on line {}, found {} tokens",
                               cols.size(), headerLine, tokens.size()));
      }
      if (tokens[0] != "GPU") {  // GPU-I, GPU-CI, Switch, CPU, Link...: not per-GPU telemetry
        tallies.otherEntities.add(lineNo, trimmed);
        continue;
      }
      const auto gpu = text::parseInt(tokens[1]);
      if (!gpu || *gpu < 0 || *gpu > 4095)
        text::fail(
            input, lineNo,
            fmt::format("expected a GPU id after 'GPU', found '{}'", text::excerpt(tokens[1])));
      GpuRows& g = gpus[static_cast<int>(*gpu)];
      if (g.tableColumn.empty()) {
        g.tableColumn.assign(cols.size(), static_cast<size_t>(-1));
        for (size_t i = 0; i < cols.size(); ++i)
          if (cols[i].kind == Kind::Metric) g.tableColumn[i] = g.table.column(cols[i].metric);
      }
      g.table.addRow(start + g.rows++ * intervalNs);
      readRow(input, lineNo, cols, tokens, g, tallies);
      ++rows;
    }
    if (cols.empty()) text::fail(input, 0, "empty file; expected dcgmi dmon output");
    if (rows == 0) text::fail(input, headerLine, "a dcgmi dmon header but no GPU rows");

    ImportedData data;
    data.format = std::string(name());
    data.path = input;
    data.energyCounterMeasured = true;
    for (auto& [g, r] : gpus) {
      ImportedGpu gpu;
      gpu.info.local_index = g;
      r.constants.applyTo(gpu.info);
      gpu.table = r.table.finish();
      tel::addMemoryUsedPercent(gpu.table, r.constants.get(dcgm::Info::MemTotal));
      data.gpus.push_back(std::move(gpu));
    }
    data.sample_interval_s = intervalMs / 1e3;
    data.absoluteTime = options.start_ns.has_value();
    data.startTimeUsed = options.start_ns.has_value();
    data.platform = tel::platformFromDeviceName(data.gpus.front().info.device_name);
    for (const Column& c : cols)
      if (c.kind == Kind::Metric && c.field && c.field->role == dcgm::Role::Metric) {
        SensorInfo sensor = dcgm::sensorOf(*c.field, data.gpus.front().info.device_name);
        sensor.metric = c.metric;  // the shadowed id of a field that lost its metric
        data.sensors.push_back(std::move(sensor));
      }
    addNotes(data, input, tallies, intervalMs, options.start_ns.has_value());
    progress.report(1.0, "reading dcgmi dmon");
    return data;
  }

 private:
  static void readRow(const std::filesystem::path& input, int64_t lineNo,
                      const std::vector<Column>& cols, const std::vector<std::string_view>& tokens,
                      GpuRows& g, Tallies& tallies) {
    uint32_t flags = 0;
    bool anyFlag = false;
    for (size_t i = 0; i < cols.size(); ++i) {
      const Column& c = cols[i];
      const std::string_view cell = tokens[i + 2];
      if (c.kind == Kind::Mask) {
        if (text::isMissing(cell)) {
          g.table.setThrottle(throttle::kUnknown);
          continue;
        }
        const auto mask = text::parseHexOrDecimal(cell);
        if (!mask)
          text::fail(input, lineNo,
                     fmt::format("column '{}': expected a throttle-reason bitmask, found '{}'",
                                 c.tag, text::excerpt(cell)));
        g.table.setThrottle(static_cast<uint32_t>(*mask & 0xFFFFFFFFull));
        continue;
      }
      if (c.kind == Kind::Constant && c.field->role == dcgm::Role::Identity) {
        if (!text::isMissing(cell)) g.constants.setText(c.field->info, cell);
        continue;
      }
      const text::Value v = text::parseValue(cell);
      if (v.kind == text::ValueKind::Text)
        text::fail(input, lineNo,
                   fmt::format("column '{}': expected a number or N/A, found '{}'", c.tag,
                               text::excerpt(cell)));
      if (v.kind == text::ValueKind::NonFinite) tallies.nonFinite.add(lineNo, cell);
      if (v.kind != text::ValueKind::Number) continue;
      if (dcgm::isBlank(v.number, c.type)) {
        tallies.blanks.add(lineNo, cell);
        continue;
      }
      switch (c.kind) {
        case Kind::Metric:
          g.table.set(g.tableColumn[i], v.number * c.scale);
          break;
        case Kind::Flag:
          anyFlag = true;
          if (v.number != 0) flags |= c.bit;
          break;
        case Kind::Constant:
          g.constants.set(c.field->info, v.number * c.field->scale);
          break;
        case Kind::Mask:
          break;
      }
    }
    const bool maskColumn =
        std::any_of(cols.begin(), cols.end(), [](const Column& c) { return c.kind == Kind::Mask; });
    const bool flagColumns =
        std::any_of(cols.begin(), cols.end(), [](const Column& c) { return c.kind == Kind::Flag; });
    if (!maskColumn && flagColumns) g.table.setThrottle(anyFlag ? flags : throttle::kUnknown);
  }

  static void addNotes(ImportedData& data, const std::filesystem::path& input,
                       const Tallies& tallies, double intervalMs, bool started) {
    const std::string subject = fmt::format("file {}", input.filename().string());
    data.notes.push_back(
        {Severity::Info, "dcgm_interval_timestamps", subject,
         fmt::format("dcgmi dmon text has no timestamps: rows were placed every {} ms (as given) "
                     "from {}",
                     intervalMs, started ? "the given start time" : "time 0 (relative)")});
    tel::addTallyNote(data.notes, tallies.otherEntities, "non_gpu_entities", input,
                      "rows of entities other than GPUs", "they were skipped", Severity::Info);
    tel::addTallyNote(data.notes, tallies.blanks, "dcgm_blank_values", input,
                      "DCGM blank sentinels", "they were read as missing values");
    tel::addTallyNote(data.notes, tallies.nonFinite, "non_finite_values", input,
                      "NaN or infinite values", "they were read as missing values");
    tel::addTallyNote(data.notes, tallies.truncated, "truncated_last_line", input,
                      "last line cut off (no newline, too few values)", "it was skipped");
  }
};

}  // namespace

std::unique_ptr<Importer> makeDcgmDmonImporter() {
  return std::make_unique<DcgmDmonImporter>();
}

}  // namespace wl::import
