// SPDX-License-Identifier: GPL-3.0-or-later
// nvidia-smi dmon text (docs/import-telemetry.md, "nvidia-smi dmon").
//
// "# gpu pwr gtemp ..." names the columns and "# Idx W C ..." gives their units; rows are
// whitespace-aligned, "-" marks an unsupported value, and the header repeats. With -o D / -o T a
// date (YYYYMMDD) and a time-of-day (HH:MM:SS) column come first.
//
// Time rule: date and time columns give local wall-clock time. With a time column only, the date
// is the local date of ImportOptions::start_ns (and advances by a day whenever the time of day goes
// backwards, i.e. at midnight); without start_ns the times are relative to midnight of an unknown
// day. Without a time column, the k-th row of each GPU lies k seconds (dmon's default -d 1) after
// start_ns, or after 0 when it is not given.

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>

#include "core/error.h"
#include "core/metrics.h"
#include "import/telemetry/table_builder.h"
#include "import/telemetry/telemetry_importers.h"
#include "import/telemetry/text_input.h"

namespace wl::import {
namespace {

struct DmonColumn {
  std::string_view token;
  std::string_view metric;
};

// dmon column names (nvidia-smi dmon -s p, u, c, m) and what they map to.
constexpr std::array kDmonColumns = {
    DmonColumn{"pwr", metric::kPower},     DmonColumn{"gtemp", metric::kTemp},
    DmonColumn{"mtemp", metric::kMemTemp}, DmonColumn{"sm", metric::kUtil},
    DmonColumn{"mem", metric::kMemUtil},   DmonColumn{"mclk", metric::kMemClock},
    DmonColumn{"pclk", metric::kSmClock},  DmonColumn{"fb", "mem_used_mib"},
};

constexpr int64_t kDefaultDelayNs = text::kNsPerSecond;  // nvidia-smi dmon -d 1

enum class Kind { Date, Time, Gpu, Metric };

struct Column {
  std::string name;
  Kind kind = Kind::Metric;
  std::string metric;
};

bool isHeaderLine(std::string_view line) {
  line = text::trim(line);
  return !line.empty() && line.front() == '#';
}

class NvidiaSmiDmonImporter final : public Importer {
 public:
  std::string_view name() const override { return "nvidia-smi-dmon"; }
  std::string_view description() const override {
    return "nvidia-smi dmon text (any -s column set, -o D / -o T time columns)";
  }
  bool telemetry() const override { return true; }

  int detect(const InputProbe& probe) const override {
    if (probe.isDirectory) return 0;
    std::string_view head = probe.head;
    std::vector<std::string_view> tokens;
    // The first non-empty line must be a "# gpu ..." header followed by "# Idx ..." units.
    std::string_view first, second;
    while (!head.empty() && second.empty()) {
      const size_t nl = head.find('\n');
      const std::string_view l = text::trim(head.substr(0, nl));
      head = nl == std::string_view::npos ? std::string_view{} : head.substr(nl + 1);
      if (l.empty()) continue;
      (first.empty() ? first : second) = l;
    }
    if (!isHeaderLine(first) || !isHeaderLine(second)) return 0;
    text::splitWhitespace(first.substr(1), tokens);
    bool gpu = false, pid = false, known = false;
    for (std::string_view t : tokens) {
      const std::string l = text::lower(t);
      if (l == "gpu") gpu = true;
      if (l == "pid") pid = true;  // nvidia-smi pmon, not dmon
      for (const DmonColumn& c : kDmonColumns)
        if (c.token == l) known = true;
    }
    const bool idx = second.find("Idx") != std::string_view::npos;
    return (gpu && idx && known && !pid) ? 90 : 0;
  }

  ImportedData read(const std::filesystem::path& input, const ImportOptions& options,
                    const Progress& progress) const override {
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
    std::map<int, int64_t> lastTimeOfDay, dayOffset;
    tel::ZonePolicy zone(options.utc_offset_s);
    tel::Tally badTime, nonFinite;
    int dateCol = -1, timeCol = -1, gpuCol = -1;
    size_t rows = 0;
    std::string_view line;

    // The local date used for time-of-day-only rows.
    std::optional<int64_t> startLocalDayNs;
    if (options.start_ns) {
      const int64_t local =
          *options.start_ns + options.utc_offset_s.value_or(0) * text::kNsPerSecond;
      startLocalDayNs =
          (local >= 0 ? local / text::kNsPerDay : (local - text::kNsPerDay + 1) / text::kNsPerDay) *
          text::kNsPerDay;
    }

    while (reader.next(line)) {
      const int64_t lineNo = reader.lineNumber();
      if ((lineNo & 0x3FFF) == 0 && reader.fileSize() > 0)
        progress.report(
            static_cast<double>(reader.bytesRead()) / static_cast<double>(reader.fileSize()),
            "reading nvidia-smi dmon");
      const std::string_view trimmed = text::trim(line);
      if (trimmed.empty()) continue;
      if (trimmed.front() == '#') {
        if (expectUnits) {  // "# Idx W C ...": units of the header above
          text::splitWhitespace(trimmed.substr(1), tokens);
          if (tokens.size() == cols.size())
            for (size_t i = 0; i < cols.size(); ++i)
              if (cols[i].kind == Kind::Metric && cols[i].metric.empty())
                cols[i].metric = sanitizeMetricId(cols[i].name + " " + std::string(tokens[i]));
          for (Column& c : cols)
            if (c.kind == Kind::Metric && c.metric.empty()) c.metric = sanitizeMetricId(c.name);
          expectUnits = false;
          continue;
        }
        const std::string text(trimmed.substr(1));
        std::string normalized;
        text::splitWhitespace(text, tokens);
        for (std::string_view t : tokens)
          normalized += text::lower(t) + ' ';
        if (!headerText.empty()) {
          if (normalized != headerText)
            text::fail(
                input, lineNo,
                fmt::format("the dmon header changed halfway: expected '{}' (as on line {}), "
                            "found '{}'; import the two parts as separate files",
                            text::excerpt(headerText), headerLine, text::excerpt(trimmed)));
          expectUnits = true;
          continue;
        }
        headerText = normalized;
        headerLine = lineNo;
        cols.clear();
        for (size_t i = 0; i < tokens.size(); ++i) {
          Column c;
          c.name = text::lower(tokens[i]);
          if (c.name == "date") {
            c.kind = Kind::Date;
            dateCol = static_cast<int>(i);
          } else if (c.name == "time") {
            c.kind = Kind::Time;
            timeCol = static_cast<int>(i);
          } else if (c.name == "gpu") {
            c.kind = Kind::Gpu;
            gpuCol = static_cast<int>(i);
          } else {
            for (const DmonColumn& k : kDmonColumns)
              if (k.token == c.name) c.metric = std::string(k.metric);
          }
          cols.push_back(std::move(c));
        }
        if (gpuCol < 0)
          text::fail(input, lineNo,
                     fmt::format("expected a dmon header with a 'gpu' column, found '{}'",
                                 text::excerpt(trimmed)));
        expectUnits = true;
        continue;
      }
      if (cols.empty())
        text::fail(input, lineNo,
                   fmt::format("expected the dmon header '# gpu pwr ...' before the first row, "
                               "found '{}'",
                               text::excerpt(trimmed)));
      expectUnits = false;
      for (Column& c : cols)
        if (c.kind == Kind::Metric && c.metric.empty()) c.metric = sanitizeMetricId(c.name);
      text::splitWhitespace(trimmed, tokens);
      if (tokens.size() != cols.size()) {
        if (!reader.lastLineTerminated() && tokens.size() < cols.size()) {
          badTime.add(lineNo, trimmed);
          break;
        }
        text::fail(input, lineNo,
                   fmt::format("expected {} columns as in the header on line {}, found {}",
                               cols.size(), headerLine, tokens.size()));
      }
      const auto gpu = text::parseInt(tokens[static_cast<size_t>(gpuCol)]);
      if (!gpu || *gpu < 0 || *gpu > 4095)
        text::fail(input, lineNo,
                   fmt::format("column 'gpu': expected a GPU index, found '{}'",
                               text::excerpt(tokens[static_cast<size_t>(gpuCol)])));
      const int g = static_cast<int>(*gpu);

      int64_t t = 0;
      if (timeCol >= 0) {
        const auto tod = text::parseTimeOfDay(tokens[static_cast<size_t>(timeCol)]);
        if (!tod)
          text::fail(input, lineNo,
                     fmt::format("column 'time': expected HH:MM:SS, found '{}'",
                                 text::excerpt(tokens[static_cast<size_t>(timeCol)])));
        int64_t day = 0;
        if (dateCol >= 0) {
          const auto d = text::parseDate(tokens[static_cast<size_t>(dateCol)]);
          if (!d)
            text::fail(input, lineNo,
                       fmt::format("column 'date': expected YYYYMMDD, found '{}'",
                                   text::excerpt(tokens[static_cast<size_t>(dateCol)])));
          day = *d * text::kNsPerDay;
        } else {
          // Time of day only: advance a day when the clock goes backwards past midnight.
          auto [it, inserted] = lastTimeOfDay.emplace(g, *tod);
          if (!inserted) {
            if (*tod + text::kNsPerDay / 2 < it->second) dayOffset[g] += text::kNsPerDay;
            it->second = *tod;
          }
          day = startLocalDayNs.value_or(0) + dayOffset[g];
        }
        const int64_t wall = day + *tod;
        t = (dateCol >= 0 || startLocalDayNs) ? zone.localToUtc(wall) : wall;
      } else {
        t = options.start_ns.value_or(0) + rowCount[g] * kDefaultDelayNs;
      }
      ++rowCount[g];

      tel::TableBuilder& table = tables[g];
      std::vector<size_t>& tc = tableCols[g];
      if (tc.empty()) {
        tc.assign(cols.size(), static_cast<size_t>(-1));
        for (size_t i = 0; i < cols.size(); ++i)
          if (cols[i].kind == Kind::Metric) tc[i] = table.column(cols[i].metric);
      }
      table.addRow(t);
      for (size_t i = 0; i < cols.size(); ++i) {
        if (cols[i].kind != Kind::Metric) continue;
        const text::Value v = text::parseValue(tokens[i]);
        if (v.kind == text::ValueKind::Text)
          text::fail(input, lineNo,
                     fmt::format("column '{}': expected a number or '-', found '{}'", cols[i].name,
                                 text::excerpt(tokens[i])));
        if (v.kind == text::ValueKind::Number) table.set(tc[i], v.number);
        if (v.kind == text::ValueKind::NonFinite) nonFinite.add(lineNo, tokens[i]);
      }
      ++rows;
    }
    if (cols.empty()) text::fail(input, 0, "empty file; expected nvidia-smi dmon output");
    if (rows == 0) text::fail(input, headerLine, "a dmon header but no data rows");

    for (auto& [g, table] : tables) {
      ImportedGpu gpu;
      gpu.info.local_index = g;
      gpu.table = table.finish();
      data.gpus.push_back(std::move(gpu));
    }
    const std::string subject = fmt::format("file {}", input.filename().string());
    if (timeCol < 0) {
      data.absoluteTime = options.start_ns.has_value();
      data.sample_interval_s = 1.0;
      data.notes.push_back(
          {Severity::Warning, "dmon_no_timestamps", subject,
           fmt::format("nvidia-smi dmon was run without -o T: rows were placed 1 s apart (dmon's "
                       "default -d 1) from {}; run dmon with -o DT for real timestamps",
                       options.start_ns ? "the given start time" : "time 0 (relative)")});
    } else {
      data.sample_interval_s = tel::medianIntervalSeconds(data.gpus.front().table.t_ns);
      if (dateCol < 0 && !startLocalDayNs) {
        data.absoluteTime = false;
        data.notes.push_back(
            {Severity::Warning, "dmon_time_of_day_only", subject,
             "nvidia-smi dmon was run with -o T but without -o D: times are hours since midnight "
             "of an unknown day; give the start time (or run dmon with -o DT) to place them"});
      }
    }
    zone.addNote(data.notes, subject);
    tel::addTallyNote(data.notes, badTime, "truncated_last_line", input,
                      "last line cut off (no newline, too few columns)", "it was skipped");
    tel::addTallyNote(data.notes, nonFinite, "non_finite_values", input, "NaN or infinite values",
                      "they were read as missing values");
    progress.report(1.0, "reading nvidia-smi dmon");
    return data;
  }
};

}  // namespace

std::unique_ptr<Importer> makeNvidiaSmiDmonImporter() {
  return std::make_unique<NvidiaSmiDmonImporter>();
}

}  // namespace wl::import
