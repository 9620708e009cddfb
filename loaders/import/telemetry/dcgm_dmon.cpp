// SPDX-License-Identifier: GPL-3.0-or-later
// dcgmi dmon text (docs/import-telemetry.md, "DCGM").
//
// "#Entity POWER TOTEC ..." names the columns by DCGM short name, the "ID W mJ ..." line gives
// units, rows read "GPU 0  120.5 ..." (the entity is two tokens), "N/A" marks a blank, and the
// header repeats every few dozen rows. There are no timestamps: dcgmi prints one row per entity
// every -d milliseconds, so the k-th row of a GPU lies k x ImportOptions::dcgm_interval_ms after
// ImportOptions::start_ns (or after 0, relative, without it). The interval is required.

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

struct Column {
  std::string tag;
  std::string metric;  // "" for the throttle mask
  double scale = 1.0;
  bool counter = false;
  bool mask = false;
};

bool startsWithEntity(std::string_view line) {
  line = text::trim(line);
  return line.size() >= 7 && text::lower(line.substr(0, 7)) == "#entity";
}

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
    ImportedData data;
    data.format = std::string(name());
    data.path = input;
    std::vector<Column> cols;
    std::string headerText;
    int64_t headerLine = 0;
    bool expectUnits = false;
    std::vector<std::string_view> tokens;
    std::map<int, tel::TableBuilder> tables;
    std::map<int, std::vector<size_t>> tableCols;
    std::map<int, int64_t> rowCount;
    tel::Tally otherEntities, blanks, nonFinite, truncated;
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
        if (!headerText.empty()) {
          if (normalized != headerText)
            text::fail(input, lineNo,
                       fmt::format("the dcgmi dmon header changed halfway: expected '#Entity {}' "
                                   "(as on line {}), found '{}'; import the parts separately",
                                   text::excerpt(headerText), headerLine, text::excerpt(trimmed)));
          expectUnits = true;
          continue;
        }
        headerText = normalized;
        headerLine = lineNo;
        for (size_t i = 1; i < tokens.size(); ++i) {
          Column c;
          c.tag = std::string(tokens[i]);
          if (const dcgm::Field* f = dcgm::findFieldByTag(c.tag)) {
            c.metric = std::string(f->metric);
            c.scale = f->scale;
            c.mask = f->metric.empty();
            c.counter = f->metric == metric::kEnergy;
          }
          cols.push_back(std::move(c));
        }
        expectUnits = true;
        continue;
      }
      if (expectUnits && text::lower(tokens[0]) == "id") {  // "ID W mJ MHz ..."
        if (tokens.size() == cols.size() + 1)
          for (size_t i = 0; i < cols.size(); ++i)
            if (!cols[i].mask && cols[i].metric.empty())
              cols[i].metric = sanitizeMetricId(cols[i].tag + " " + std::string(tokens[i + 1]));
        expectUnits = false;
        continue;
      }
      expectUnits = false;
      if (cols.empty())
        text::fail(input, lineNo,
                   fmt::format("expected the dcgmi dmon header '#Entity ...' before the first "
                               "row, found '{}'",
                               text::excerpt(trimmed)));
      for (Column& c : cols)
        if (!c.mask && c.metric.empty()) c.metric = sanitizeMetricId(c.tag);
      if (tokens.size() != cols.size() + 2) {
        if (!reader.lastLineTerminated() && tokens.size() < cols.size() + 2) {
          truncated.add(lineNo, trimmed);
          break;
        }
        text::fail(input, lineNo,
                   fmt::format("expected an entity (two tokens such as 'GPU 0') and {} values as "
                               "in the header on line {}, found {} tokens",
                               cols.size(), headerLine, tokens.size()));
      }
      if (tokens[0] != "GPU") {  // GPU-I, GPU-CI, Switch, CPU, Link...: not per-GPU telemetry
        otherEntities.add(lineNo, trimmed);
        continue;
      }
      const auto gpu = text::parseInt(tokens[1]);
      if (!gpu || *gpu < 0 || *gpu > 4095)
        text::fail(
            input, lineNo,
            fmt::format("expected a GPU id after 'GPU', found '{}'", text::excerpt(tokens[1])));
      const int g = static_cast<int>(*gpu);
      tel::TableBuilder& table = tables[g];
      std::vector<size_t>& tc = tableCols[g];
      if (tc.empty()) {
        tc.assign(cols.size(), static_cast<size_t>(-1));
        for (size_t i = 0; i < cols.size(); ++i)
          if (!cols[i].mask) tc[i] = table.column(cols[i].metric);
      }
      table.addRow(start + rowCount[g]++ * intervalNs);
      for (size_t i = 0; i < cols.size(); ++i) {
        const std::string_view cell = tokens[i + 2];
        if (cols[i].mask) {
          if (text::isMissing(cell)) {
            table.setThrottle(throttle::kUnknown);
            continue;
          }
          const auto mask = text::parseHexOrDecimal(cell);
          if (!mask)
            text::fail(input, lineNo,
                       fmt::format("column '{}': expected a throttle-reason bitmask, found '{}'",
                                   cols[i].tag, text::excerpt(cell)));
          table.setThrottle(static_cast<uint32_t>(*mask & 0xFFFFFFFFull));
          continue;
        }
        const text::Value v = text::parseValue(cell);
        if (v.kind == text::ValueKind::Text)
          text::fail(input, lineNo,
                     fmt::format("column '{}': expected a number or N/A, found '{}'", cols[i].tag,
                                 text::excerpt(cell)));
        if (v.kind == text::ValueKind::NonFinite) nonFinite.add(lineNo, cell);
        if (v.kind != text::ValueKind::Number) continue;
        if (dcgm::isBlank(v.number, cols[i].counter)) {
          blanks.add(lineNo, cell);
          continue;
        }
        table.set(tc[i], v.number * cols[i].scale);
      }
      ++rows;
    }
    if (cols.empty()) text::fail(input, 0, "empty file; expected dcgmi dmon output");
    if (rows == 0) text::fail(input, headerLine, "a dcgmi dmon header but no GPU rows");

    for (auto& [g, table] : tables) {
      ImportedGpu gpu;
      gpu.info.local_index = g;
      gpu.table = table.finish();
      data.gpus.push_back(std::move(gpu));
    }
    data.sample_interval_s = intervalMs / 1e3;
    data.absoluteTime = options.start_ns.has_value();
    const std::string subject = fmt::format("file {}", input.filename().string());
    data.notes.push_back(
        {Severity::Info, "dcgm_interval_timestamps", subject,
         fmt::format("dcgmi dmon text has no timestamps: rows were placed every {} ms (as given) "
                     "from {}",
                     intervalMs, options.start_ns ? "the given start time" : "time 0 (relative)")});
    tel::addTallyNote(data.notes, otherEntities, "non_gpu_entities", input,
                      "rows of entities other than GPUs", "they were skipped", Severity::Info);
    tel::addTallyNote(data.notes, blanks, "dcgm_blank_values", input, "DCGM blank sentinels",
                      "they were read as missing values");
    tel::addTallyNote(data.notes, nonFinite, "non_finite_values", input, "NaN or infinite values",
                      "they were read as missing values");
    tel::addTallyNote(data.notes, truncated, "truncated_last_line", input,
                      "last line cut off (no newline, too few values)", "it was skipped");
    progress.report(1.0, "reading dcgmi dmon");
    return data;
  }
};

}  // namespace

std::unique_ptr<Importer> makeDcgmDmonImporter() {
  return std::make_unique<DcgmDmonImporter>();
}

}  // namespace wl::import
