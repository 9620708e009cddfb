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

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/core/time_format.h"
#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/telemetry_importers.h"
#include "loaders/import/telemetry/text_input.h"

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

// One read of one dmon file: header comments name the columns (and their units), then every row
// goes to the table of its GPU at its time.
class DmonRead {
 public:
  DmonRead(const std::filesystem::path& input, const ImportOptions& options)
      : input_(input), options_(options), reader_(input), zone_(options.utc_offset_s) {
    // The local date used for time-of-day-only rows.
    if (options.start_ns) {
      const int64_t local =
          *options.start_ns + options.utc_offset_s.value_or(0) * text::kNsPerSecond;
      startLocalDayNs_ =
          (local >= 0 ? local / text::kNsPerDay : (local - text::kNsPerDay + 1) / text::kNsPerDay) *
          text::kNsPerDay;
    }
  }

  ImportedData read(std::string_view format, const Progress& progress) {
    std::string_view line;
    while (reader_.next(line)) {
      const int64_t lineNo = reader_.lineNumber();
      if ((lineNo & 0x3FFF) == 0 && reader_.fileSize() > 0)
        progress.report(
            static_cast<double>(reader_.bytesRead()) / static_cast<double>(reader_.fileSize()),
            "reading nvidia-smi dmon");
      const std::string_view trimmed = text::trim(line);
      if (trimmed.empty()) continue;
      if (trimmed.front() == '#') {
        readComment(trimmed, lineNo);
        continue;
      }
      if (!readRow(trimmed, lineNo)) break;
    }
    if (cols_.empty()) text::fail(input_, 0, "empty file; expected nvidia-smi dmon output");
    if (rows_ == 0) text::fail(input_, headerLine_, "a dmon header but no data rows");
    ImportedData data;
    data.format = std::string(format);
    data.path = input_;
    for (auto& [g, table] : tables_) {
      ImportedGpu gpu;
      gpu.info.local_index = g;
      gpu.table = table.finish();
      data.gpus.push_back(std::move(gpu));
    }
    // dmon's pwr is NVML's power usage, as power.draw: a 1 s average on Ampere and newer.
    SensorInfo power = nvidiaSmiPowerSensor("power.draw", "");
    power.basis = "nvidia-smi dmon pwr (NVML power usage: 1 s average on Ampere and newer)";
    data.sensors.push_back(std::move(power));
    addNotes(data);
    return data;
  }

 private:
  // A comment line: the units under the header ("# Idx W C ..."), the header ("# gpu pwr ..."),
  // or the header again (it repeats; a different one is an error).
  void readComment(std::string_view trimmed, int64_t lineNo) {
    if (expectUnits_) {  // "# Idx W C ...": units of the header above
      text::splitWhitespace(trimmed.substr(1), tokens_);
      if (tokens_.size() == cols_.size())
        for (size_t i = 0; i < cols_.size(); ++i)
          if (cols_[i].kind == Kind::Metric && cols_[i].metric.empty())
            cols_[i].metric = sanitizeMetricId(cols_[i].name + " " + std::string(tokens_[i]));
      nameUnnamedMetrics();
      expectUnits_ = false;
      return;
    }
    const std::string text(trimmed.substr(1));
    std::string normalized;
    text::splitWhitespace(text, tokens_);
    for (std::string_view t : tokens_)
      normalized += text::lower(t) + ' ';
    if (!headerText_.empty()) {
      if (normalized != headerText_)
        text::fail(input_, lineNo,
                   fmt::format("the dmon header changed halfway: expected '{}' (as on line {}), "
                               "found '{}'; import the two parts as separate files",
                               text::excerpt(headerText_), headerLine_, text::excerpt(trimmed)));
      expectUnits_ = true;
      return;
    }
    headerText_ = normalized;
    headerLine_ = lineNo;
    readHeader(trimmed, lineNo);
    expectUnits_ = true;
  }

  // The first header: what each column is; a gpu column is required.
  void readHeader(std::string_view trimmed, int64_t lineNo) {
    cols_.clear();
    for (size_t i = 0; i < tokens_.size(); ++i) {
      Column c;
      c.name = text::lower(tokens_[i]);
      if (c.name == "date") {
        c.kind = Kind::Date;
        dateCol_ = static_cast<int>(i);
      } else if (c.name == "time") {
        c.kind = Kind::Time;
        timeCol_ = static_cast<int>(i);
      } else if (c.name == "gpu") {
        c.kind = Kind::Gpu;
        gpuCol_ = static_cast<int>(i);
      } else {
        for (const DmonColumn& k : kDmonColumns)
          if (k.token == c.name) c.metric = std::string(k.metric);
      }
      cols_.push_back(std::move(c));
    }
    if (gpuCol_ < 0)
      text::fail(input_, lineNo,
                 fmt::format("expected a dmon header with a 'gpu' column, found '{}'",
                             text::excerpt(trimmed)));
  }

  // Columns without a known metric or a units line are named after their header token.
  void nameUnnamedMetrics() {
    for (Column& c : cols_)
      if (c.kind == Kind::Metric && c.metric.empty()) c.metric = sanitizeMetricId(c.name);
  }

  // One data row; false for a last line cut off while the file was written (noted).
  bool readRow(std::string_view trimmed, int64_t lineNo) {
    if (cols_.empty())
      text::fail(input_, lineNo,
                 fmt::format("expected the dmon header '# gpu pwr ...' before the first row, "
                             "found '{}'",
                             text::excerpt(trimmed)));
    expectUnits_ = false;
    nameUnnamedMetrics();
    text::splitWhitespace(trimmed, tokens_);
    if (tokens_.size() != cols_.size()) {
      if (!reader_.lastLineTerminated() && tokens_.size() < cols_.size()) {
        truncated_.add(lineNo, trimmed);
        return false;
      }
      text::fail(input_, lineNo,
                 fmt::format("expected {} columns as in the header on line {}, found {}",
                             cols_.size(), headerLine_, tokens_.size()));
    }
    const auto gpu = text::parseInt(tokens_[static_cast<size_t>(gpuCol_)]);
    if (!gpu || *gpu < 0 || *gpu > 4095)
      text::fail(input_, lineNo,
                 fmt::format("column 'gpu': expected a GPU index, found '{}'",
                             text::excerpt(tokens_[static_cast<size_t>(gpuCol_)])));
    const int g = static_cast<int>(*gpu);
    const int64_t t = timeOfRow(g, lineNo);
    ++rowCount_[g];
    tel::TableBuilder& table = tables_[g];
    std::vector<size_t>& tc = tableCols_[g];
    if (tc.empty()) {
      tc.assign(cols_.size(), static_cast<size_t>(-1));
      for (size_t i = 0; i < cols_.size(); ++i)
        if (cols_[i].kind == Kind::Metric) tc[i] = table.column(cols_[i].metric);
    }
    table.addRow(t);
    for (size_t i = 0; i < cols_.size(); ++i) {
      if (cols_[i].kind != Kind::Metric) continue;
      const text::Value v = text::parseValue(tokens_[i]);
      if (v.kind == text::ValueKind::Text)
        text::fail(input_, lineNo,
                   fmt::format("column '{}': expected a number or '-', found '{}'", cols_[i].name,
                               text::excerpt(tokens_[i])));
      if (v.kind == text::ValueKind::Number) table.set(tc[i], v.number);
      if (v.kind == text::ValueKind::NonFinite) nonFinite_.add(lineNo, tokens_[i]);
    }
    ++rows_;
    return true;
  }

  // The time of GPU g's row (see the time rule at the top of the file).
  int64_t timeOfRow(int g, int64_t lineNo) {
    if (timeCol_ < 0) return options_.start_ns.value_or(0) + rowCount_[g] * kDefaultDelayNs;
    const auto tod = text::parseTimeOfDay(tokens_[static_cast<size_t>(timeCol_)]);
    if (!tod)
      text::fail(input_, lineNo,
                 fmt::format("column 'time': expected HH:MM:SS, found '{}'",
                             text::excerpt(tokens_[static_cast<size_t>(timeCol_)])));
    int64_t day = 0;
    if (dateCol_ >= 0) {
      const auto d = text::parseDate(tokens_[static_cast<size_t>(dateCol_)]);
      if (!d)
        text::fail(input_, lineNo,
                   fmt::format("column 'date': expected YYYYMMDD, found '{}'",
                               text::excerpt(tokens_[static_cast<size_t>(dateCol_)])));
      day = *d * text::kNsPerDay;
    } else {
      // Time of day only: advance a day when the clock goes backwards past midnight.
      auto [it, inserted] = lastTimeOfDay_.emplace(g, *tod);
      if (!inserted) {
        if (*tod + text::kNsPerDay / 2 < it->second) dayOffset_[g] += text::kNsPerDay;
        it->second = *tod;
      }
      day = startLocalDayNs_.value_or(0) + dayOffset_[g];
    }
    const int64_t wall = day + *tod;
    return (dateCol_ >= 0 || startLocalDayNs_) ? zone_.localToUtc(wall) : wall;
  }

  void addNotes(ImportedData& data) const {
    const std::string subject = fmt::format("file {}", input_.filename().string());
    if (timeCol_ < 0) {
      data.absoluteTime = options_.start_ns.has_value();
      data.startTimeUsed = options_.start_ns.has_value();
      data.sample_interval_s = 1.0;
      data.notes.push_back(
          {Severity::Warning, "dmon_no_timestamps", subject,
           fmt::format("nvidia-smi dmon was run without -o T: rows were placed 1 s apart (dmon's "
                       "default -d 1) from {}; run dmon with -o DT for real timestamps",
                       options_.start_ns ? "the given start time" : "time 0 (relative)")});
    } else {
      data.sample_interval_s = tel::medianIntervalSeconds(data.gpus.front().table.t_ns);
      if (dateCol_ < 0 && !startLocalDayNs_) {
        data.absoluteTime = false;
        data.notes.push_back(
            {Severity::Warning, "dmon_time_of_day_only", subject,
             "nvidia-smi dmon was run with -o T but without -o D: times are hours since midnight "
             "of an unknown day; give the start time (or run dmon with -o DT) to place them"});
      } else if (dateCol_ < 0) {
        data.startTimeUsed = true;
        data.notes.push_back(
            {Severity::Info, "dmon_date_from_start_time", subject,
             fmt::format("nvidia-smi dmon was run with -o T but without -o D: the times of day "
                         "were placed on {}, the local date of the given start time, a day later "
                         "after each midnight",
                         formatUtc(*startLocalDayNs_, 0).substr(0, 10))});
      }
    }
    zone_.addNote(data.notes, subject);
    tel::addTallyNote(data.notes, truncated_, "truncated_last_line", input_,
                      "last line cut off (no newline, too few columns)", "it was skipped");
    tel::addTallyNote(data.notes, nonFinite_, "non_finite_values", input_, "NaN or infinite values",
                      "they were read as missing values");
  }

  const std::filesystem::path& input_;
  const ImportOptions& options_;
  text::LineReader reader_;
  tel::ZonePolicy zone_;
  std::optional<int64_t> startLocalDayNs_;
  std::vector<Column> cols_;
  std::string headerText_;
  int64_t headerLine_ = 0;
  bool expectUnits_ = false;
  std::vector<std::string_view> tokens_;
  std::map<int, tel::TableBuilder> tables_;
  std::map<int, std::vector<size_t>> tableCols_;
  std::map<int, int64_t> rowCount_;
  std::map<int, int64_t> lastTimeOfDay_, dayOffset_;
  tel::Tally truncated_, nonFinite_;
  int dateCol_ = -1, timeCol_ = -1, gpuCol_ = -1;
  size_t rows_ = 0;
};

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
    return DmonRead(input, options).read(name(), progress);
  }
};

}  // namespace

std::unique_ptr<Importer> makeNvidiaSmiDmonImporter() {
  return std::make_unique<NvidiaSmiDmonImporter>();
}

}  // namespace wl::import
