// SPDX-License-Identifier: GPL-3.0-or-later
// DCGM long ("tidy") CSV from the DCGM API: GPUId,TimeStampUs,Field,Values, one field value per
// row (docs/import-telemetry.md, "DCGM"). The Field cell names the field by numeric id, DCGM field
// tag or DCGM_FI_* name (dcgm_fields.h). DCGM stamps every field value with its own time, so the
// values of one GPU are merged onto one time column with tel::mergeSeries (values within the merge
// tolerance of each other form one row).

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <unordered_map>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/import/telemetry/csv_telemetry.h"
#include "loaders/import/telemetry/dcgm_fields.h"
#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/telemetry_importers.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import {
namespace {

constexpr std::string_view kMaskSeries = "#throttle";

enum class TimeUnit : uint8_t { Microseconds, Auto };

struct HeaderColumns {
  int gpu = -1, time = -1, field = -1, value = -1;
  TimeUnit unit = TimeUnit::Microseconds;
};

HeaderColumns headerColumns(const std::vector<std::string_view>& fields) {
  HeaderColumns h;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string f = text::lower(fields[i]);
    const int c = static_cast<int>(i);
    if (f == "gpuid" || f == "gpu_id" || f == "entityid" || f == "entity_id" || f == "gpu")
      h.gpu = c;
    if (f == "timestampus" || f == "timestamp_us") h.time = c, h.unit = TimeUnit::Microseconds;
    if (f == "timestamp" || f == "time") h.time = c, h.unit = TimeUnit::Auto;
    if (f == "field" || f == "fieldid" || f == "field_id" || f == "fieldname" ||
        f == "field_name" || f == "fieldtag" || f == "field_tag")
      h.field = c;
    if (f == "values" || f == "value") h.value = c;
  }
  return h;
}

bool complete(const HeaderColumns& h) {
  return h.gpu >= 0 && h.time >= 0 && h.field >= 0 && h.value >= 0;
}

// What a Field cell stands for.
struct FieldKey {
  const dcgm::Field* field = nullptr;  // in the table
  std::optional<uint32_t> flagBit;     // a per-reason throttle flag
  std::string key;                     // the series it goes to
};

FieldKey resolveField(std::string_view cell) {
  FieldKey k;
  k.field = dcgm::lookup(cell);
  if (k.field) {
    k.key = k.field->role == dcgm::Role::Throttle ? std::string(kMaskSeries)
                                                  : fmt::format("#{}", k.field->id);
  } else if ((k.flagBit = dcgm::throttleFlagBit(cell))) {
    k.key = fmt::format("#flag{}", *k.flagBit);
  } else {
    k.key = dcgm::extraMetricId(cell);
  }
  return k;
}

struct GpuSeries {
  std::map<std::string, tel::Series> byKey;
  std::map<std::string, const dcgm::Field*> fieldOf;  // key -> table field
  dcgm::GpuConstants meta;
};

struct Tallies {
  tel::Tally blanks, nonFinite, text;
};

constexpr tel::CsvFormat kCsvFormat{
    .emptyFile = "empty file; expected the DCGM CSV header GPUId,TimeStampUs,Field,Values",
    .headerOnFirstLine = true,
    .progressText = "reading DCGM CSV",
    .progressEvery = 0x10000,
};

// Epoch time of a cell: microseconds under TimeStampUs; under "timestamp", an integer by its
// magnitude (s, ms, us or ns since the epoch), decimal epoch seconds, or an ISO-8601 date.
std::optional<int64_t> parseTime(std::string_view cell, TimeUnit unit, tel::ZonePolicy& zone) {
  if (const auto v = text::parseInt(cell)) {
    if (*v < 0) return std::nullopt;
    if (unit == TimeUnit::Microseconds)
      return *v <= INT64_MAX / 1000 ? std::optional(*v * 1000) : std::nullopt;
    if (*v >= 100'000'000'000'000'000) return *v;  // ns
    if (*v >= 100'000'000'000'000) return *v * 1000;
    if (*v >= 100'000'000'000) return *v * 1'000'000;
    return *v * 1'000'000'000;
  }
  if (unit == TimeUnit::Microseconds) return std::nullopt;
  if (const auto ns = text::parseEpochSeconds(cell)) return ns;
  if (const auto dt = text::parseDateTime(cell)) return zone.toUtc(*dt);
  return std::nullopt;
}

// Stores one constant or identity value; false if the cell is not what the field holds.
bool storeMeta(dcgm::GpuConstants& m, const dcgm::Field& f, std::string_view cell, Tallies& tallies,
               int64_t lineNo) {
  if (text::isMissing(cell)) return true;
  if (f.role == dcgm::Role::Identity) {
    m.setText(f.info, cell);
    return true;
  }
  const text::Value v = text::parseValue(cell);
  if (v.kind == text::ValueKind::Text) return false;
  if (v.kind != text::ValueKind::Number) return true;
  if (dcgm::isBlank(v.number, f.type)) {
    tallies.blanks.add(lineNo, cell);
    return true;
  }
  m.set(f.info, v.number * f.scale);
  return true;
}

// Names the series of one GPU by their metric: the field of lowest priority among those giving
// one metric keeps it, the others become "dcgm_<tag>".
std::vector<tel::Series> nameSeries(GpuSeries& g) {
  std::map<std::string_view, int> best;  // metric -> lowest priority present
  for (const auto& [key, f] : g.fieldOf)
    if (f->role == dcgm::Role::Metric) {
      auto [it, inserted] = best.emplace(f->metric, f->priority);
      if (!inserted) it->second = std::min(it->second, f->priority);
    }
  std::vector<tel::Series> out;
  for (auto& [key, s] : g.byKey) {
    const auto it = g.fieldOf.find(key);
    const dcgm::Field* f = it == g.fieldOf.end() ? nullptr : it->second;
    if (!f || key == kMaskSeries)
      s.metric = key;
    else if (f->role == dcgm::Role::Metric && best[f->metric] != f->priority)
      s.metric = dcgm::shadowedMetricId(*f);
    else
      s.metric = std::string(f->metric);
    out.push_back(std::move(s));
  }
  return out;
}

// Each metric field's sensor under the id its column got (nameSeries: the field of lowest
// priority keeps the metric, the others their shadowed ids).
void addSensors(ImportedData& data, const std::map<int, const dcgm::Field*>& fields) {
  std::map<std::string_view, int> best;
  for (const auto& [id, f] : fields) {
    auto [it, inserted] = best.emplace(f->metric, f->priority);
    if (!inserted) it->second = std::min(it->second, f->priority);
  }
  for (const auto& [id, f] : fields) {
    SensorInfo s = dcgm::sensorOf(*f, data.gpus.front().info.device_name);
    s.metric = best[f->metric] == f->priority ? std::string(f->metric) : dcgm::shadowedMetricId(*f);
    data.sensors.push_back(std::move(s));
  }
}

// Moves the throttle mask (field 112, else the OR of per-reason flags) out of the columns.
void extractThrottle(TelemetryTable& table) {
  auto isMask = [](const TelemetryColumn& c) { return c.metric == kMaskSeries; };
  auto isFlag = [](const TelemetryColumn& c) { return c.metric.rfind("#flag", 0) == 0; };
  const auto mask = std::find_if(table.columns.begin(), table.columns.end(), isMask);
  const bool flags = std::any_of(table.columns.begin(), table.columns.end(), isFlag);
  if (mask != table.columns.end() || flags) {
    table.throttle_reasons.assign(table.t_ns.size(), throttle::kUnknown);
    for (size_t i = 0; i < table.t_ns.size(); ++i) {
      if (mask != table.columns.end()) {
        if (std::isfinite(mask->values[i]))
          table.throttle_reasons[i] = static_cast<uint32_t>(mask->values[i]);
        continue;
      }
      bool any = false;
      uint32_t m = 0;
      for (const TelemetryColumn& c : table.columns)
        if (isFlag(c) && std::isfinite(c.values[i])) {
          any = true;
          if (c.values[i] != 0) m |= static_cast<uint32_t>(std::stoul(c.metric.substr(5)));
        }
      if (any) table.throttle_reasons[i] = m;
    }
  }
  std::erase_if(table.columns, [&](const TelemetryColumn& c) { return isMask(c) || isFlag(c); });
}

// One GPU's series merged into its table, with its GpuInfo.
ImportedGpu buildGpu(int index, GpuSeries& g, size_t& unsorted) {
  std::vector<tel::Series> list = nameSeries(g);
  const int64_t tol = tel::mergeTolerance(list);
  tel::MergedTable merged = tel::mergeSeries(std::move(list), tol);
  unsorted += merged.unsortedSeries;
  TelemetryTable& table = merged.table;
  extractThrottle(table);
  std::erase_if(table.columns, [](const TelemetryColumn& c) {
    return std::none_of(c.values.begin(), c.values.end(),
                        [](double v) { return std::isfinite(v); });
  });
  tel::addMemoryUsedPercent(table, g.meta.get(dcgm::Info::MemTotal));
  ImportedGpu gpu;
  gpu.info.local_index = index;
  g.meta.applyTo(gpu.info);
  gpu.table = std::move(table);
  return gpu;
}

class DcgmCsvImporter final : public Importer {
 public:
  std::string_view name() const override { return "dcgm-csv"; }
  std::string_view description() const override {
    return "DCGM long CSV: GPUId,TimeStampUs,Field,Values (fields by id, tag or DCGM_FI_* name)";
  }
  bool telemetry() const override { return true; }

  int detect(const InputProbe& probe) const override {
    if (probe.isDirectory) return 0;
    const std::string_view head = probe.head;
    const std::string_view first = text::trim(head.substr(0, head.find('\n')));
    std::vector<std::string_view> fields;
    text::splitCsv(first, fields);
    return complete(headerColumns(fields)) ? 95 : 0;
  }

  ImportedData read(const std::filesystem::path& input, const ImportOptions& options,
                    const Progress& progress) const override {
    tel::CsvTelemetryReader csv(input, progress, kCsvFormat);
    const std::vector<std::string_view>& fields = csv.readHeader();
    const HeaderColumns h = headerColumns(fields);
    const size_t ncols = fields.size();
    if (!complete(h))
      text::fail(input, 1,
                 fmt::format("expected the header GPUId,TimeStampUs,Field,Values, found '{}'",
                             text::excerpt(csv.headerText())));

    std::map<int, GpuSeries> gpus;
    std::unordered_map<std::string, FieldKey> resolved;
    Tallies tallies;
    tel::ZonePolicy zone(options.utc_offset_s);
    const size_t rows = csv.readRows(
        ncols,
        [](const std::vector<std::string_view>& row) {
          return complete(headerColumns(row)) ? tel::HeaderLine::Changed : tel::HeaderLine::No;
        },
        [&](const std::vector<std::string_view>& row, int64_t lineNo) {
          readRow(input, lineNo, h, row, gpus, resolved, tallies, zone);
        });
    if (rows == 0) text::fail(input, 1, "a header but no data rows");

    ImportedData data;
    data.format = std::string(name());
    data.path = input;
    data.energyCounterMeasured = true;
    size_t unsorted = 0;
    std::map<int, const dcgm::Field*> metricFields;  // the metric fields present, by id
    for (auto& [g, series] : gpus) {
      for (const auto& [key, f] : series.fieldOf)
        if (f && f->role == dcgm::Role::Metric) metricFields[f->id] = f;
      data.gpus.push_back(buildGpu(g, series, unsorted));
    }
    std::erase_if(data.gpus, [](const ImportedGpu& g) { return g.table.t_ns.empty(); });
    if (data.gpus.empty())
      text::fail(input, 1, "no GPU has a numeric field value (only identity or constant fields)");
    data.sample_interval_s = tel::medianIntervalSeconds(data.gpus.front().table.t_ns);
    data.platform = tel::platformFromDeviceName(data.gpus.front().info.device_name);
    addSensors(data, metricFields);
    addNotes(data, input, tallies, csv.truncated(), unsorted, zone);
    csv.done();
    return data;
  }

 private:
  static void readRow(const std::filesystem::path& input, int64_t lineNo, const HeaderColumns& h,
                      const std::vector<std::string_view>& fields, std::map<int, GpuSeries>& gpus,
                      std::unordered_map<std::string, FieldKey>& resolved, Tallies& tallies,
                      tel::ZonePolicy& zone) {
    const std::string_view gpuCell = fields[static_cast<size_t>(h.gpu)];
    const auto gpu = text::parseInt(gpuCell);
    if (!gpu || *gpu < 0 || *gpu > 4095)
      text::fail(
          input, lineNo,
          fmt::format("column GPUId: expected a GPU id, found '{}'", text::excerpt(gpuCell)));
    const std::string_view tsCell = fields[static_cast<size_t>(h.time)];
    const auto t = parseTime(tsCell, h.unit, zone);
    if (!t)
      text::fail(input, lineNo,
                 fmt::format("column {}: expected {}, found '{}'",
                             h.unit == TimeUnit::Microseconds ? "TimeStampUs" : "timestamp",
                             h.unit == TimeUnit::Microseconds
                                 ? "microseconds since the epoch"
                                 : "a time since the epoch or an ISO-8601 date",
                             text::excerpt(tsCell)));
    const std::string_view fieldCell = fields[static_cast<size_t>(h.field)];
    auto it = resolved.find(std::string(fieldCell));
    if (it == resolved.end()) it = resolved.emplace(fieldCell, resolveField(fieldCell)).first;
    const FieldKey& k = it->second;
    GpuSeries& g = gpus[static_cast<int>(*gpu)];
    const std::string_view valueCell = fields[static_cast<size_t>(h.value)];
    const dcgm::Field* f = k.field;
    if (f && (f->role == dcgm::Role::GpuInfo || f->role == dcgm::Role::Identity)) {
      if (!storeMeta(g.meta, *f, valueCell, tallies, lineNo))
        text::fail(input, lineNo,
                   fmt::format("field {} ({}): expected a number, found '{}'", f->id, f->tag,
                               text::excerpt(valueCell)));
      return;
    }
    double value = kNaN;
    if (f && f->role == dcgm::Role::Throttle) {
      if (!text::isMissing(valueCell)) {
        const auto m = text::parseHexOrDecimal(valueCell);
        if (!m)
          text::fail(input, lineNo,
                     fmt::format("field 112 (clock event reasons): expected a bitmask, found '{}'",
                                 text::excerpt(valueCell)));
        if (dcgm::isBlank(static_cast<double>(*m), f->type))
          tallies.blanks.add(lineNo, valueCell);
        else
          value = static_cast<double>(*m & 0xFFFFFFFFull);
      }
    } else {
      const text::Value v = text::parseValue(valueCell);
      if (v.kind == text::ValueKind::Text) {
        if (f)
          text::fail(input, lineNo,
                     fmt::format("column Values: expected a number, found '{}'",
                                 text::excerpt(valueCell)));
        tallies.text.add(lineNo, fieldCell);  // a text field the table does not know: dropped
        return;
      }
      if (v.kind == text::ValueKind::NonFinite) tallies.nonFinite.add(lineNo, valueCell);
      if (v.kind == text::ValueKind::Number) {
        if (dcgm::isBlank(v.number, f ? std::optional(f->type) : std::nullopt))
          tallies.blanks.add(lineNo, valueCell);
        else
          value = v.number * (f ? f->scale : 1.0);
      }
    }
    tel::Series& s = g.byKey[k.key];
    if (f) g.fieldOf[k.key] = f;
    s.t_ns.push_back(*t);
    s.values.push_back(value);
  }

  static void addNotes(ImportedData& data, const std::filesystem::path& input,
                       const Tallies& tallies, const tel::Tally& truncated, size_t unsorted,
                       const tel::ZonePolicy& zone) {
    const std::string subject = fmt::format("file {}", input.filename().string());
    if (unsorted > 0)
      data.notes.push_back({Severity::Warning, "non_monotonic_timestamps", subject,
                            fmt::format("{} field series had timestamps out of order; they were "
                                        "sorted by time",
                                        unsorted)});
    zone.addNote(data.notes, subject);
    tel::addTallyNote(data.notes, tallies.blanks, "dcgm_blank_values", input,
                      "DCGM blank sentinels", "they were read as missing values");
    tel::addTallyNote(data.notes, tallies.nonFinite, "non_finite_values", input,
                      "NaN or infinite values", "they were read as missing values");
    tel::addTallyNote(data.notes, tallies.text, "dcgm_text_fields", input,
                      "text values of fields Wattline has no use for", "they were skipped",
                      Severity::Info);
    tel::addTallyNote(data.notes, truncated, "truncated_last_line", input,
                      "last line cut off (no newline, too few fields)", "it was skipped");
  }
};

}  // namespace

std::unique_ptr<Importer> makeDcgmCsvImporter() {
  return std::make_unique<DcgmCsvImporter>();
}

}  // namespace wl::import
