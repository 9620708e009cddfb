// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/rocprof_csv_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "loaders/core/error.h"
#include "loaders/import/importer.h"
#include "loaders/import/json_stream.h"
#include "loaders/import/trace_builder.h"

namespace wl::import {
namespace {

// Splits the lines of a ByteReader; a line is valid until the next call.
class LineReader {
 public:
  explicit LineReader(const std::filesystem::path& path) : reader_(path) {}
  bool next(std::string_view& line) {
    for (;;) {
      const size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        line = std::string_view(buf_).substr(pos_, nl - pos_);
        pos_ = nl + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        ++lineNo_;
        return true;
      }
      if (eof_) {
        if (pos_ >= buf_.size()) return false;
        unterminated_ = true;
        line = std::string_view(buf_).substr(pos_);
        pos_ = buf_.size();
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        ++lineNo_;
        return true;
      }
      buf_.erase(0, pos_);
      pos_ = 0;
      const size_t old = buf_.size();
      buf_.resize(old + (size_t{1} << 20));
      const size_t n = reader_.read(buf_.data() + old, size_t{1} << 20);
      buf_.resize(old + n);
      if (n == 0) eof_ = true;
    }
  }
  size_t lineNo() const { return lineNo_; }
  // True once the line returned last ended the file without a newline (cut off while written).
  bool lastLineUnterminated() const { return unterminated_; }
  double fraction() const {
    return reader_.fileSize()
               ? static_cast<double>(reader_.fileOffset()) / static_cast<double>(reader_.fileSize())
               : 0.0;
  }

 private:
  ByteReader reader_;
  std::string buf_;
  size_t pos_ = 0;
  size_t lineNo_ = 0;
  bool eof_ = false;
  bool unterminated_ = false;
};

// Splits one CSV line (RFC 4180 quotes; "" inside quotes is a quote). Returns false on an
// unterminated quote.
bool splitCsv(std::string_view line, std::vector<std::string>& out) {
  out.clear();
  std::string field;
  size_t i = 0;
  for (;;) {
    field.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        field += line[i++];
      }
      if (!closed) return false;
      while (i < line.size() && line[i] != ',')
        field += line[i++];
    } else {
      while (i < line.size() && line[i] != ',')
        field += line[i++];
    }
    out.push_back(field);
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return true;
}

std::string trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string_view::npos) return {};
  const size_t b = s.find_last_not_of(" \t");
  return std::string(s.substr(a, b - a + 1));
}

int columnOf(const std::vector<std::string>& header,
             std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == n) return static_cast<int>(i);
  return -1;
}

bool looksLikeRocprofHeader(std::string_view line) {
  const bool name = line.find("KernelName") != std::string_view::npos ||
                    line.find("Kernel_Name") != std::string_view::npos;
  const bool time = line.find("BeginNs") != std::string_view::npos ||
                    line.find("Start_Timestamp") != std::string_view::npos;
  return name && time;
}

ImportedData readRocprofCsv(const std::filesystem::path& path, const Progress& progress) {
  LineReader lines(path);
  const std::string file = path.string();
  std::string_view line;
  std::vector<std::string> header;
  // The header is the first non-empty line.
  for (;;) {
    if (!lines.next(line)) throw Error(fmt::format("{}: the file is empty", file));
    if (!trim(line).empty()) break;
  }
  if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  if (!splitCsv(line, header))
    throw Error(fmt::format("{}:{}: unterminated quote in the header", file, lines.lineNo()));
  for (std::string& h : header)
    h = trim(h);
  const int cName = columnOf(header, {"KernelName", "Kernel_Name", "kernel-name"});
  const int cBegin = columnOf(header, {"BeginNs", "Start_Timestamp"});
  const int cEnd = columnOf(header, {"EndNs", "End_Timestamp"});
  const int cGpu = columnOf(header, {"gpu-id", "GPU_ID", "gpu_id"});
  const int cQueue = columnOf(header, {"queue-id", "Queue_ID", "queue_id"});
  const int cPid = columnOf(header, {"pid", "PID"});
  const int cCorr = columnOf(header, {"Correlation_ID", "Index", "Dispatch_ID"});
  if (cName < 0 || cBegin < 0 || cEnd < 0)
    throw Error(fmt::format(
        "{}:{}: not a rocprof kernel CSV: expected KernelName, BeginNs and EndNs columns, found "
        "{}",
        file, lines.lineNo(), describeBytes(line, 60)));

  ImportedData data;
  data.format = "rocprof-csv";
  data.path = path;
  data.absoluteTime = false;
  std::map<int64_t, TraceBuilder> byPid;
  std::vector<std::string> f;
  size_t negative = 0, rows = 0;
  auto integerAt = [&](int col, std::string_view what) -> int64_t {
    const std::string v = trim(f[static_cast<size_t>(col)]);
    int64_t x = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size())
      throw Error(fmt::format("{}:{}: {}: expected an integer, found {}", file, lines.lineNo(),
                              what, describeBytes(v, 30)));
    return x;
  };
  auto timeAt = [&](int col) -> int64_t {
    const int64_t t = integerAt(col, header[static_cast<size_t>(col)]);
    if (!inTimeRange(t))
      throw Error(
          fmt::format("{}:{}: {}: {} ns is out of range (expected a time within 146 "
                      "years of the clock's origin)",
                      file, lines.lineNo(), header[static_cast<size_t>(col)], t));
    return t;
  };
  size_t cutOff = 0;
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    const bool parsed = splitCsv(line, f);
    if (lines.lastLineUnterminated() && (!parsed || f.size() < header.size())) {
      ++cutOff;  // the last line was cut off while the file was written
      break;
    }
    if (!parsed) throw Error(fmt::format("{}:{}: unterminated quote", file, lines.lineNo()));
    if (f.size() != header.size())
      throw Error(fmt::format("{}:{}: expected {} columns as in the header, found {}", file,
                              lines.lineNo(), header.size(), f.size()));
    const int64_t begin = timeAt(cBegin);
    const int64_t end = timeAt(cEnd);
    const int64_t gpu = cGpu >= 0 ? integerAt(cGpu, header[static_cast<size_t>(cGpu)]) : -1;
    const int64_t queue = cQueue >= 0 ? integerAt(cQueue, header[static_cast<size_t>(cQueue)]) : 0;
    const int64_t pid = cPid >= 0 ? integerAt(cPid, header[static_cast<size_t>(cPid)]) : -1;
    const int64_t corr = cCorr >= 0 ? integerAt(cCorr, header[static_cast<size_t>(cCorr)]) : -1;
    int64_t dur = end - begin;
    if (dur < 0) {
      ++negative;
      dur = 0;
    }
    auto it = byPid.find(pid);
    if (it == byPid.end()) it = byPid.emplace(pid, TraceBuilder(data.strings)).first;
    it->second.addEvent(static_cast<int>(gpu), queue, begin, dur, f[static_cast<size_t>(cName)],
                        GpuEventKind::Kernel, corr);
    if (++rows % 65536 == 0) progress.report(lines.fraction(), "reading");
  }
  for (auto& [pid, builder] : byPid) {
    ImportedRank r;
    r.info.rank = -1;
    r.info.pid = pid;
    r.info.source = file;
    r.device = builder.mainDevice();
    r.tracks = builder.finish();
    data.ranks.push_back(std::move(r));
  }
  const std::string subject = path.filename().string();
  if (rows == 0)
    data.notes.push_back(
        {Severity::Warning, "no_gpu_events", subject, "the CSV has a header but no kernel rows"});
  data.notes.push_back({Severity::Info, "relative_clock", subject,
                        "rocprof timestamps count from the host's boot (monotonic clock); give "
                        "--offset to place them on the wall clock"});
  if (negative > 0)
    data.notes.push_back({Severity::Warning, "negative_durations", subject,
                          fmt::format("{} rows end before they begin; their durations were set "
                                      "to 0",
                                      negative)});
  if (cutOff > 0)
    data.notes.push_back({Severity::Warning, "truncated_last_line", subject,
                          fmt::format("the last line ({}:{}) is cut off (no newline, too few "
                                      "columns); it was skipped",
                                      file, lines.lineNo())});
  return data;
}

class RocprofCsvImporter : public Importer {
 public:
  std::string_view name() const override { return "rocprof-csv"; }
  std::string_view description() const override {
    return "rocprof v1/v2 kernel trace CSV (KernelName, gpu-id, queue-id, BeginNs, EndNs...)";
  }
  bool telemetry() const override { return false; }
  int detect(const InputProbe& p) const override {
    if (p.isDirectory) return 0;
    std::string_view h = p.head;
    if (h.substr(0, 3) == "\xEF\xBB\xBF") h.remove_prefix(3);
    const std::string_view first = h.substr(0, h.find('\n'));
    return looksLikeRocprofHeader(first) ? 95 : 0;
  }
  ImportedData read(const std::filesystem::path& input, const ImportOptions&,
                    const Progress& progress) const override {
    return readRocprofCsv(input, progress);
  }
};

}  // namespace

std::unique_ptr<Importer> makeRocprofCsvImporter() {
  return std::make_unique<RocprofCsvImporter>();
}

}  // namespace wl::import
