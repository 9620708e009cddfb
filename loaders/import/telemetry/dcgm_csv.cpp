// SPDX-License-Identifier: GPL-3.0-or-later
// DCGM long ("tidy") CSV from the DCGM API: GPUId,TimeStampUs,Field,Values, one field value per
// row (docs/import-telemetry.md, "DCGM"). DCGM stamps every field value with its own time, so the
// values of one GPU are merged onto one time column with tel::mergeSeries (values within the merge
// tolerance of each other form one row).

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "core/error.h"
#include "core/metrics.h"
#include "core/throttle_reasons.h"
#include "import/telemetry/dcgm_fields.h"
#include "import/telemetry/table_builder.h"
#include "import/telemetry/telemetry_importers.h"
#include "import/telemetry/text_input.h"

namespace wl::import {
namespace {

constexpr std::string_view kMaskSeries = "#throttle";

struct HeaderColumns {
  int gpu = -1, time = -1, field = -1, value = -1;
};

HeaderColumns headerColumns(const std::vector<std::string_view>& fields) {
  HeaderColumns h;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string f = text::lower(fields[i]);
    if (f == "gpuid" || f == "gpu_id" || f == "entityid") h.gpu = static_cast<int>(i);
    if (f == "timestampus" || f == "timestamp_us") h.time = static_cast<int>(i);
    if (f == "field" || f == "fieldid" || f == "field_id") h.field = static_cast<int>(i);
    if (f == "values" || f == "value") h.value = static_cast<int>(i);
  }
  return h;
}

bool complete(const HeaderColumns& h) {
  return h.gpu >= 0 && h.time >= 0 && h.field >= 0 && h.value >= 0;
}

class DcgmCsvImporter final : public Importer {
 public:
  std::string_view name() const override { return "dcgm-csv"; }
  std::string_view description() const override {
    return "DCGM long CSV: GPUId,TimeStampUs,Field,Values";
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

  ImportedData read(const std::filesystem::path& input, const ImportOptions& /*options*/,
                    const Progress& progress) const override {
    text::LineReader reader(input);
    ImportedData data;
    data.format = std::string(name());
    data.path = input;
    std::string_view line;
    std::vector<std::string_view> fields;
    if (!reader.next(line) || text::trim(line).empty())
      text::fail(input, 0,
                 "empty file; expected the DCGM CSV header GPUId,TimeStampUs,Field,Values");
    const std::string headerText(text::trim(line));
    text::splitCsv(line, fields);
    const HeaderColumns h = headerColumns(fields);
    const size_t ncols = fields.size();
    if (!complete(h))
      text::fail(input, 1,
                 fmt::format("expected the header GPUId,TimeStampUs,Field,Values, found '{}'",
                             text::excerpt(headerText)));

    // gpu -> field key -> series
    std::map<int, std::map<std::string, tel::Series>> series;
    tel::Tally blanks, nonFinite, truncated;
    size_t rows = 0;
    while (reader.next(line)) {
      const int64_t lineNo = reader.lineNumber();
      if ((lineNo & 0xFFFF) == 0 && reader.fileSize() > 0)
        progress.report(
            static_cast<double>(reader.bytesRead()) / static_cast<double>(reader.fileSize()),
            "reading DCGM CSV");
      const std::string_view trimmed = text::trim(line);
      if (trimmed.empty()) continue;
      if (trimmed == headerText) continue;
      text::splitCsv(trimmed, fields);
      if (complete(headerColumns(fields)))
        text::fail(input, lineNo,
                   fmt::format("the CSV header changed halfway: expected '{}' (as on line 1), "
                               "found '{}'",
                               text::excerpt(headerText), text::excerpt(trimmed)));
      if (fields.size() != ncols) {
        if (!reader.lastLineTerminated() && fields.size() < ncols) {
          truncated.add(lineNo, trimmed);
          break;
        }
        text::fail(
            input, lineNo,
            fmt::format("expected {} fields as in the header, found {}", ncols, fields.size()));
      }
      const std::string_view gpuCell = fields[static_cast<size_t>(h.gpu)];
      const auto gpu = text::parseInt(gpuCell);
      if (!gpu || *gpu < 0 || *gpu > 4095)
        text::fail(
            input, lineNo,
            fmt::format("column GPUId: expected a GPU id, found '{}'", text::excerpt(gpuCell)));
      const std::string_view tsCell = fields[static_cast<size_t>(h.time)];
      const auto us = text::parseInt(tsCell);
      if (!us || *us < 0 || *us > INT64_MAX / 1000)
        text::fail(input, lineNo,
                   fmt::format("column TimeStampUs: expected microseconds since the epoch, found "
                               "'{}'",
                               text::excerpt(tsCell)));
      const std::string_view fieldCell = fields[static_cast<size_t>(h.field)];
      const dcgm::Field* f = nullptr;
      std::string key;
      if (const auto id = text::parseInt(fieldCell)) {
        f = dcgm::findField(static_cast<int>(*id));
        key = f ? std::string(f->metric) : fmt::format("dcgm_field_{}", *id);
      } else {
        f = dcgm::findFieldByTag(fieldCell);
        key = f ? std::string(f->metric) : sanitizeMetricId(fieldCell);
      }
      const bool mask = f && f->metric.empty();
      if (mask) key = std::string(kMaskSeries);
      const std::string_view valueCell = fields[static_cast<size_t>(h.value)];
      double value = kNaN;
      if (mask) {
        if (!text::isMissing(valueCell)) {
          const auto m = text::parseHexOrDecimal(valueCell);
          if (!m)
            text::fail(input, lineNo,
                       fmt::format("field 112 (clock throttle reasons): expected a bitmask, found "
                                   "'{}'",
                                   text::excerpt(valueCell)));
          value = static_cast<double>(*m & 0xFFFFFFFFull);
        }
      } else {
        const text::Value v = text::parseValue(valueCell);
        if (v.kind == text::ValueKind::Text)
          text::fail(input, lineNo,
                     fmt::format("column Values: expected a number, found '{}'",
                                 text::excerpt(valueCell)));
        if (v.kind == text::ValueKind::NonFinite) nonFinite.add(lineNo, valueCell);
        if (v.kind == text::ValueKind::Number) {
          const bool counter = f && f->metric == metric::kEnergy;
          if (dcgm::isBlank(v.number, counter))
            blanks.add(lineNo, valueCell);
          else
            value = v.number * (f ? f->scale : 1.0);
        }
      }
      tel::Series& s = series[static_cast<int>(*gpu)][key];
      if (s.metric.empty()) s.metric = key;
      s.t_ns.push_back(*us * 1000);
      s.values.push_back(value);
      ++rows;
    }
    if (rows == 0) text::fail(input, 1, "a header but no data rows");

    size_t unsorted = 0;
    for (auto& [g, byField] : series) {
      std::vector<tel::Series> list;
      for (auto& [key, s] : byField)
        list.push_back(std::move(s));
      const int64_t tol = tel::mergeTolerance(list);
      tel::MergedTable merged = tel::mergeSeries(std::move(list), tol);
      unsorted += merged.unsortedSeries;
      TelemetryTable& table = merged.table;
      auto it = std::find_if(table.columns.begin(), table.columns.end(),
                             [](const TelemetryColumn& c) { return c.metric == kMaskSeries; });
      if (it != table.columns.end()) {
        table.throttle_reasons.resize(table.t_ns.size());
        for (size_t i = 0; i < table.t_ns.size(); ++i)
          table.throttle_reasons[i] = std::isfinite(it->values[i])
                                          ? static_cast<uint32_t>(it->values[i])
                                          : throttle::kUnknown;
        table.columns.erase(it);
      }
      ImportedGpu gpu;
      gpu.info.local_index = g;
      gpu.table = std::move(table);
      data.gpus.push_back(std::move(gpu));
    }
    data.sample_interval_s = tel::medianIntervalSeconds(data.gpus.front().table.t_ns);
    if (unsorted > 0)
      data.notes.push_back({Severity::Warning, "non_monotonic_timestamps",
                            fmt::format("file {}", input.filename().string()),
                            fmt::format("{} field series had timestamps out of order; they were "
                                        "sorted by time",
                                        unsorted)});
    tel::addTallyNote(data.notes, blanks, "dcgm_blank_values", input, "DCGM blank sentinels",
                      "they were read as missing values");
    tel::addTallyNote(data.notes, nonFinite, "non_finite_values", input, "NaN or infinite values",
                      "they were read as missing values");
    tel::addTallyNote(data.notes, truncated, "truncated_last_line", input,
                      "last line cut off (no newline, too few fields)", "it was skipped");
    progress.report(1.0, "reading DCGM CSV");
    return data;
  }
};

}  // namespace

std::unique_ptr<Importer> makeDcgmCsvImporter() {
  return std::make_unique<DcgmCsvImporter>();
}

}  // namespace wl::import
