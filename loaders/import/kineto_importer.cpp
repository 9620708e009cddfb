// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/kineto_importer.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <map>

#include "loaders/core/error.h"
#include "loaders/import/json_stream.h"
#include "loaders/import/trace_builder.h"

namespace wl::import {
namespace {

namespace od = simdjson::ondemand;

// Epoch nanoseconds of 2000-01-01: a timestamp below it is not on the Unix epoch clock.
constexpr int64_t kEpoch2000Ns = 946684800LL * 1000000000LL;

enum class Category : uint8_t {
  Kernel,
  Memcpy,
  Memset,
  GpuAnnotation,
  UserAnnotation,
  CpuOp,
  Other,
  Unknown
};

std::string_view trimRight(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

bool isQuoted(std::string_view tok) {
  return tok.size() >= 2 && tok.front() == '"' && tok.back() == '"';
}

// The raw inside of a string token, without unescaping (categories and ph never need it).
std::string_view rawInside(std::string_view tok) {
  return isQuoted(tok) ? tok.substr(1, tok.size() - 2) : std::string_view{};
}

Category categoryOf(std::string_view tok) {
  const std::string_view c = rawInside(tok);
  switch (c.size()) {
    case 6:
      if (c == "kernel" || c == "Kernel") return Category::Kernel;
      if (c == "Memcpy") return Category::Memcpy;
      if (c == "Memset") return Category::Memset;
      if (c == "cpu_op") return Category::CpuOp;
      break;
    case 8:
      if (c == "Operator") return Category::CpuOp;
      break;
    case 10:
      if (c == "gpu_memcpy") return Category::Memcpy;
      if (c == "gpu_memset") return Category::Memset;
      break;
    case 15:
      if (c == "user_annotation") return Category::UserAnnotation;
      break;
    case 19:
      if (c == "gpu_user_annotation") return Category::GpuAnnotation;
      break;
    default:
      break;
  }
  return Category::Other;
}

bool wantsArgs(Category c) {
  return c == Category::Kernel || c == Category::Memcpy || c == Category::Memset ||
         c == Category::Unknown;
}

// An integer from a number token or a string holding one ("7", "0x0", "stream 7").
std::optional<int64_t> integerOf(std::string_view tok) {
  tok = trimRight(tok);
  if (tok.empty()) return std::nullopt;
  if (tok.front() == '"') {
    std::string_view s = rawInside(tok);
    if (s.substr(0, 7) == "stream ") s.remove_prefix(7);
    while (!s.empty() && s.back() == ' ')
      s.remove_suffix(1);
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      uint64_t v = 0;
      const auto r = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
      if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
      return static_cast<int64_t>(v);
    }
    return parseDecimalScaled(s, 0);
  }
  if (tok == "null" || tok == "true" || tok == "false") return std::nullopt;
  return parseDecimalScaled(tok, 0);
}

struct EventFields {
  std::string_view ph, cat, name, pid, tid, ts, dur;
  Category category = Category::Unknown;
  bool argsSeen = false;
  std::string_view device, stream, correlation;
  CollectiveArgs coll;
  std::string_view collName, dtype, pgName, pgDesc, pgRanks, inNelems, outNelems, groupSize;
};

class KinetoReader {
 public:
  KinetoReader(const std::filesystem::path& path, const Progress& progress,
               std::shared_ptr<KernelSpool> spool)
      : path_(path), js_(path, progress), builder_(data_.strings) {
    builder_.setSpool(std::move(spool));
  }

  ImportedData read();

 private:
  void readTopObject();
  void readEventArray();
  void handleEvent(std::string_view raw);
  void readArgs(od::value& v, EventFields& f);
  void readDistributedInfo(std::string_view raw);
  void readDeviceProperties(std::string_view raw);
  nlohmann::json parseSmall(std::string_view raw);

  [[noreturn]] void failEvent(std::string_view field, std::string_view what) const {
    throw Error(fmt::format("{}: at traceEvents[{}]{}{} (byte {}): {}", path_.string(), index_,
                            field.empty() ? "" : ".", field, eventStart_, what));
  }
  [[noreturn]] void failJson(simdjson::error_code e) const {
    failEvent("", fmt::format("invalid JSON ({})", simdjson::error_message(e)));
  }
  int64_t timeOf(std::string_view tok, std::string_view field) const;
  // Widens the trace's span by an event (both within +-kMaxAbsTimeNs: the sum cannot overflow).
  void noteSpan(int64_t ts, int64_t dur) {
    if (!inTimeRange(ts + dur)) failEvent("dur", "the event ends out of range (after 2116)");
    firstTs_ = std::min(firstTs_, ts);
    lastEnd_ = std::max(lastEnd_, ts + dur);
  }
  std::string_view stringOf(std::string_view tok, std::string& scratch,
                            std::string_view field) const;

  std::filesystem::path path_;
  ImportedData data_;
  JsonStream js_;
  TraceBuilder builder_;
  od::parser parser_;
  int64_t index_ = 0;
  uint64_t eventStart_ = 0;
  bool sawEvents_ = false;
  bool legacy_ = false;

  std::optional<int64_t> base_;
  std::optional<int64_t> rank_, worldSize_;
  std::map<int64_t, std::string> deviceNames_;
  int64_t cpuPid_ = -1;
  int64_t firstTs_ = INT64_MAX;
  int64_t lastEnd_ = INT64_MIN;
  size_t negativeDurations_ = 0;
  std::string firstNegative_;
  size_t gpuEvents_ = 0;
  size_t unknownDevice_ = 0;
  std::vector<Iteration> iterations_;
  std::vector<Annotation> annotations_;
  std::string scratchName_, scratch2_, scratchPgName_, scratchPgDesc_, scratchPgRanks_,
      scratchDtype_;
};

nlohmann::json KinetoReader::parseSmall(std::string_view raw) {
  try {
    return nlohmann::json::parse(raw.begin(), raw.end());
  } catch (const nlohmann::json::exception& e) {
    js_.fail(fmt::format("invalid JSON ({})", e.what()));
  }
}

int64_t KinetoReader::timeOf(std::string_view tok, std::string_view field) const {
  tok = trimRight(tok);
  if (tok.empty()) failEvent(field, "expected a number, found nothing");
  std::optional<int64_t> v;
  if (tok.front() == '"')
    v = parseMicrosToNs(rawInside(tok));  // a number written as a string
  else
    v = parseMicrosToNs(tok);
  if (!v) {
    if (tok == "NaN" || tok == "Infinity" || tok == "-Infinity" || tok == "nan" || tok == "inf")
      failEvent(field, fmt::format("expected a finite number of microseconds, found {}", tok));
    const std::string_view digits = tok.front() == '"' ? rawInside(tok) : tok;
    double d = 0;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), d);
    if (r.ptr == digits.data() + digits.size() && r.ec != std::errc::invalid_argument)
      failEvent(field, fmt::format("{} microseconds is out of range (expected a time within 146 "
                                   "years of 1970)",
                                   digits.substr(0, 40)));
    failEvent(field, fmt::format("expected a number of microseconds, found {}",
                                 describeBytes(tok.substr(0, 40), 40)));
  }
  if (!inTimeRange(*v))
    failEvent(field, fmt::format("{} microseconds is out of range (expected a time within 146 "
                                 "years of 1970)",
                                 tok.substr(0, 40)));
  return *v;
}

std::string_view KinetoReader::stringOf(std::string_view tok, std::string& scratch,
                                        std::string_view field) const {
  tok = trimRight(tok);
  if (!isQuoted(tok)) {
    if (tok.empty() || tok == "null") return {};
    return tok;  // a number where a string was expected: keep its text
  }
  const std::string_view in = tok.substr(1, tok.size() - 2);
  if (in.find('\\') == std::string_view::npos) return in;
  if (!unescapeJsonString(in, scratch)) failEvent(field, "invalid escape sequence in a string");
  return scratch;
}

void KinetoReader::readArgs(od::value& v, EventFields& f) {
  f.argsSeen = true;
  od::object args;
  if (v.get_object().get(args)) return;  // args that are not an object are ignored
  for (auto fr : args) {
    od::field field;
    if (auto e = std::move(fr).get(field)) failJson(e);
    const od::raw_json_string key = field.key();
    const char* k = key.raw();
    od::value& val = field.value();
    switch (k[0]) {
      case 'd':
        if (key.unsafe_is_equal("device"))
          f.device = val.raw_json_token();
        else if (key.unsafe_is_equal("dtype"))
          f.dtype = val.raw_json_token();
        break;
      case 's':
        if (key.unsafe_is_equal("stream")) f.stream = val.raw_json_token();
        break;
      case 'c':
        if (key.unsafe_is_equal("correlation")) f.correlation = val.raw_json_token();
        break;
      case 'C':
        if (key.unsafe_is_equal("Collective name")) f.collName = val.raw_json_token();
        break;
      case 'I':
        if (key.unsafe_is_equal("In msg nelems")) f.inNelems = val.raw_json_token();
        break;
      case 'O':
        if (key.unsafe_is_equal("Out msg nelems")) f.outNelems = val.raw_json_token();
        break;
      case 'G':
        if (key.unsafe_is_equal("Group size")) f.groupSize = val.raw_json_token();
        break;
      case 'P':
        if (key.unsafe_is_equal("Process Group Name"))
          f.pgName = val.raw_json_token();
        else if (key.unsafe_is_equal("Process Group Description"))
          f.pgDesc = val.raw_json_token();
        else if (key.unsafe_is_equal("Process Group Ranks"))
          f.pgRanks = val.raw_json_token();
        break;
      default:
        break;
    }
  }
}

void KinetoReader::handleEvent(std::string_view raw) {
  od::document doc;
  const size_t room = raw.size() + JsonStream::kPadding;
  if (auto e = parser_.iterate(raw.data(), raw.size(), room).get(doc)) failJson(e);
  od::object obj;
  if (doc.get_object().get(obj))
    failEvent("", fmt::format("expected an event object, found {}", describeBytes(raw, 16)));
  EventFields f;
  for (auto fr : obj) {
    od::field field;
    if (auto e = std::move(fr).get(field)) failJson(e);
    const od::raw_json_string key = field.key();
    const char* k = key.raw();
    od::value& v = field.value();
    switch (k[0]) {
      case 'p':
        if (key.unsafe_is_equal("ph"))
          f.ph = v.raw_json_token();
        else if (key.unsafe_is_equal("pid"))
          f.pid = v.raw_json_token();
        break;
      case 'c':
        if (key.unsafe_is_equal("cat")) {
          f.cat = trimRight(v.raw_json_token());
          f.category = categoryOf(f.cat);
        }
        break;
      case 'n':
        if (key.unsafe_is_equal("name")) f.name = v.raw_json_token();
        break;
      case 't':
        if (key.unsafe_is_equal("ts"))
          f.ts = v.raw_json_token();
        else if (key.unsafe_is_equal("tid"))
          f.tid = v.raw_json_token();
        break;
      case 'd':
        if (key.unsafe_is_equal("dur")) f.dur = v.raw_json_token();
        break;
      case 'a':
        if (key.unsafe_is_equal("args") && wantsArgs(f.category)) readArgs(v, f);
        break;
      default:
        break;
    }
  }
  const std::string_view ph = rawInside(trimRight(f.ph));
  if (ph != "X") return;
  if (f.category == Category::Unknown) f.category = Category::Other;
  const Category cat = f.category;
  if (cat == Category::Other) return;

  if (cat == Category::CpuOp || cat == Category::UserAnnotation) {
    const std::string_view name = stringOf(f.name, scratchName_, "name");
    const bool step = name.substr(0, 13) == "ProfilerStep#";
    if (cpuPid_ < 0)
      if (auto p = integerOf(f.pid)) cpuPid_ = *p;
    if (!step && cat == Category::CpuOp) return;
    if (f.ts.empty()) failEvent("ts", "expected a timestamp, found none");
    const int64_t ts = timeOf(f.ts, "ts");
    int64_t dur = f.dur.empty() ? 0 : timeOf(f.dur, "dur");
    if (dur < 0) {
      if (negativeDurations_++ == 0)
        firstNegative_ = fmt::format("traceEvents[{}].dur = {} ns", index_, dur);
      dur = 0;
    }
    noteSpan(ts, dur);
    if (step) {
      int64_t n = 0;
      const std::string_view digits = name.substr(13);
      const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (r.ec == std::errc())
        iterations_.push_back(Iteration{.rank = 0, .step = n, .start_ns = ts, .end_ns = ts + dur});
      return;
    }
    annotations_.push_back(Annotation{.rank = 0,
                                      .start_ns = ts,
                                      .dur_ns = dur,
                                      .name = data_.strings.intern(name),
                                      .on_gpu = false});
    return;
  }

  // Device activity: kernels, memcpy, memset, GPU user annotations.
  if (f.ts.empty()) failEvent("ts", "expected a timestamp, found none");
  const int64_t ts = timeOf(f.ts, "ts");
  if (f.dur.empty()) failEvent("dur", "expected a duration, found none");
  int64_t dur = timeOf(f.dur, "dur");
  if (dur < 0) {
    if (negativeDurations_++ == 0)
      firstNegative_ = fmt::format("traceEvents[{}].dur = {} ns", index_, dur);
    dur = 0;
  }
  noteSpan(ts, dur);
  const std::string_view name = stringOf(f.name, scratchName_, "name");
  if (cat == Category::GpuAnnotation) {
    annotations_.push_back(Annotation{.rank = 0,
                                      .start_ns = ts,
                                      .dur_ns = dur,
                                      .name = data_.strings.intern(name),
                                      .on_gpu = true});
    return;
  }
  std::optional<int64_t> device = f.device.empty() ? std::nullopt : integerOf(f.device);
  if (!device) device = integerOf(f.pid);
  if (!device || *device < 0 || *device > 1 << 20) {
    device = -1;
    ++unknownDevice_;
  }
  std::optional<int64_t> stream = f.stream.empty() ? std::nullopt : integerOf(f.stream);
  if (!stream) stream = integerOf(f.tid);
  const int64_t correlation = f.correlation.empty() ? -1 : integerOf(f.correlation).value_or(-1);
  const GpuEventKind kind = cat == Category::Kernel   ? GpuEventKind::Kernel
                            : cat == Category::Memcpy ? GpuEventKind::Memcpy
                                                      : GpuEventKind::Memset;
  CollectiveArgs coll;
  if (!f.collName.empty() || !f.pgName.empty()) {
    coll.present = true;
    coll.collective = stringOf(f.collName, scratch2_, "args.Collective name");
    coll.pgName = stringOf(f.pgName, scratchPgName_, "args.Process Group Name");
    coll.pgDesc = stringOf(f.pgDesc, scratchPgDesc_, "args.Process Group Description");
    coll.pgRanks = stringOf(f.pgRanks, scratchPgRanks_, "args.Process Group Ranks");
    coll.dtype = stringOf(f.dtype, scratchDtype_, "args.dtype");
    if (!f.inNelems.empty()) coll.inNelems = integerOf(f.inNelems).value_or(-1);
    if (!f.outNelems.empty()) coll.outNelems = integerOf(f.outNelems).value_or(-1);
    if (!f.groupSize.empty())
      coll.groupSize = static_cast<int32_t>(integerOf(f.groupSize).value_or(-1));
    builder_.addEvent(static_cast<int>(*device), stream.value_or(-1), ts, dur, name, kind,
                      correlation, &coll);
  } else {
    builder_.addEvent(static_cast<int>(*device), stream.value_or(-1), ts, dur, name, kind,
                      correlation, nullptr);
  }
  ++gpuEvents_;
}

void KinetoReader::readEventArray() {
  js_.expect('[');
  sawEvents_ = true;
  js_.setPath("traceEvents", 0);
  if (js_.peek() == ']') {
    js_.expect(']');
    return;
  }
  do {
    js_.setIndex(index_);
    js_.peek();
    eventStart_ = js_.offset();
    handleEvent(js_.rawValue());
    ++index_;
  } while (js_.nextMember(']'));
}

void KinetoReader::readDistributedInfo(std::string_view raw) {
  const nlohmann::json j = parseSmall(raw);
  if (!j.is_object()) return;
  auto num = [](const nlohmann::json& v) -> std::optional<int64_t> {
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number()) return static_cast<int64_t>(v.get<double>());
    if (v.is_string()) return parseDecimalScaled(v.get<std::string>(), 0);
    return std::nullopt;
  };
  if (j.contains("rank")) rank_ = num(j["rank"]);
  if (j.contains("world_size")) worldSize_ = num(j["world_size"]);
}

void KinetoReader::readDeviceProperties(std::string_view raw) {
  const nlohmann::json j = parseSmall(raw);
  if (!j.is_array()) return;
  for (const auto& d : j)
    if (d.is_object() && d.contains("id") && d["id"].is_number_integer() && d.contains("name") &&
        d["name"].is_string())
      deviceNames_[d["id"].get<int64_t>()] = d["name"].get<std::string>();
}

void KinetoReader::readTopObject() {
  js_.expect('{');
  if (js_.peek() == '}') {
    js_.expect('}');
    return;
  }
  do {
    js_.setPath("");
    const std::string key = js_.readKey();
    js_.setPath(key);
    if (key == "traceEvents") {
      const char c = js_.peek();
      if (c != '[')
        js_.fail(fmt::format("expected an array of events, found {}",
                             c == '{'   ? "an object"
                             : c == '"' ? "a string"
                             : c == 'n' ? "null"
                                        : "a number or another value"));
      readEventArray();
    } else if (key == "distributedInfo") {
      readDistributedInfo(js_.rawValue());
    } else if (key == "deviceProperties") {
      readDeviceProperties(js_.rawValue());
    } else if (key == "baseTimeNanoseconds") {
      const std::string_view tok = trimRight(js_.rawValue());
      const auto v = parseDecimalScaled(isQuoted(tok) ? rawInside(tok) : tok, 0);
      if (!v) js_.fail(fmt::format("expected an integer number of nanoseconds, found {}", tok));
      if (!inTimeRange(*v))
        js_.fail(
            fmt::format("{} ns is out of range (expected a time within 146 years of 1970)", *v));
      base_ = *v;
    } else {
      js_.skipValue();
    }
  } while (js_.nextMember('}'));
}

ImportedData KinetoReader::read() {
  data_.format = "kineto";
  data_.path = path_;
  const char first = js_.peek();
  if (first == 0 && js_.lookahead(1).empty())  // (a NUL byte is data: binary, not empty)
    throw Error(fmt::format("{}: the file is empty", path_.string()));
  if (first == '[') {
    legacy_ = true;
    readEventArray();
  } else if (first == '{') {
    readTopObject();
    if (!sawEvents_)
      throw Error(
          fmt::format("{}: not a Kineto/Chrome trace: the JSON object has no \"traceEvents\" array",
                      path_.string()));
  } else {
    throw Error(
        fmt::format("{}: not a Kineto JSON trace: expected '{{' or '[' at byte {}, found {}",
                    path_.string(), js_.offset(), describeBytes(js_.lookahead(64), 24)));
  }
  js_.setPath("");
  if (!js_.atEnd()) js_.fail("unexpected data after the end of the trace");
  js_.reportProgress();

  // Clock: baseTimeNanoseconds + ts, or ts already on the epoch.
  int64_t offset = base_.value_or(0);
  if (firstTs_ <= lastEnd_ && (!inTimeRange(firstTs_ + offset) || !inTimeRange(lastEnd_ + offset)))
    throw Error(
        fmt::format("{}: baseTimeNanoseconds {} puts the events out of range (expected "
                    "times within 146 years of 1970)",
                    path_.string(), offset));
  if (!base_ && firstTs_ != INT64_MAX && firstTs_ < kEpoch2000Ns) {
    data_.absoluteTime = false;
    data_.notes.push_back({Severity::Warning, "relative_clock", path_.filename().string(),
                           "the trace has no baseTimeNanoseconds and its timestamps are not "
                           "epoch microseconds; they are kept as they are (give --offset to "
                           "place them)"});
  }

  ImportedRank r;
  r.info.rank = rank_ ? static_cast<int>(*rank_) : -1;
  r.info.pid = cpuPid_;
  r.info.source = path_.string();
  r.world_size = worldSize_.value_or(-1);
  r.device = builder_.mainDevice();
  if (r.device < 0 && deviceNames_.size() == 1)
    r.device = static_cast<int>(deviceNames_.begin()->first);
  if (auto it = deviceNames_.find(r.device); it != deviceNames_.end()) r.deviceName = it->second;
  r.tracks = builder_.finish(offset);
  r.spilled = builder_.takeSpilled();
  for (Iteration& it : iterations_)
    it.start_ns += offset, it.end_ns += offset;
  for (Annotation& a : annotations_)
    a.start_ns += offset;
  r.iterations = std::move(iterations_);
  r.annotations = std::move(annotations_);

  const std::string subject = path_.filename().string();
  if (negativeDurations_ > 0)
    data_.notes.push_back(
        {Severity::Warning, "negative_durations", subject,
         fmt::format("{} events had a negative duration and were set to 0 (first: {})",
                     negativeDurations_, firstNegative_)});
  if (unknownDevice_ > 0)
    data_.notes.push_back({Severity::Warning, "unknown_device", subject,
                           fmt::format("{} GPU events name no device (args.device or a numeric "
                                       "pid); they were put on device -1",
                                       unknownDevice_)});
  if (gpuEvents_ == 0)
    data_.notes.push_back(
        {Severity::Warning, "no_gpu_events", subject,
         fmt::format("the trace has no GPU events (kernels, memcpy, memset): a CPU-only trace; "
                     "{} iterations and {} annotations were imported",
                     r.iterations.size(), r.annotations.size())});
  if (legacy_)
    data_.notes.push_back({Severity::Info, "legacy_trace", subject,
                           "legacy Kineto trace (a bare array of events, PyTorch 1.8 naming)"});
  if (!r.deviceName.empty()) data_.platform = r.deviceName;
  data_.ranks.push_back(std::move(r));
  return std::move(data_);
}

// Content detection: the JSON keys of a Kineto trace near the start of the file.
int detectKineto(const InputProbe& p) {
  if (p.isDirectory) return 0;
  std::string_view h = p.head;
  if (h.substr(0, 3) == "\xEF\xBB\xBF") h.remove_prefix(3);
  size_t i = 0;
  while (i < h.size() && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
    ++i;
  if (i >= h.size()) return 0;
  if (h.find("\"rocprofiler-sdk-tool\"") != std::string_view::npos) return 0;
  if (h[i] == '{') {
    if (h.find("\"traceEvents\"") != std::string_view::npos) return 95;
    if (h.find("\"schemaVersion\"") != std::string_view::npos &&
        h.find("\"deviceProperties\"") != std::string_view::npos)
      return 80;
    return 0;
  }
  if (h[i] == '[') {
    const bool events =
        h.find("\"ph\"") != std::string_view::npos && h.find("\"ts\"") != std::string_view::npos;
    return events ? 80 : 0;
  }
  return 0;
}

class KinetoImporter : public Importer {
 public:
  std::string_view name() const override { return "kineto"; }
  std::string_view description() const override {
    return "PyTorch profiler / Kineto Chrome-trace JSON (.json, .json.gz; NVIDIA and AMD; "
           "object or legacy array form)";
  }
  bool telemetry() const override { return false; }
  int detect(const InputProbe& probe) const override { return detectKineto(probe); }
  ImportedData read(const std::filesystem::path& input, const ImportOptions& options,
                    const Progress& progress) const override {
    return readKinetoTrace(input, progress, options.spool);
  }
};

}  // namespace

ImportedData readKinetoTrace(const std::filesystem::path& path, const Progress& progress,
                             std::shared_ptr<KernelSpool> spool) {
  KinetoReader reader(path, progress, std::move(spool));
  return reader.read();
}

std::unique_ptr<Importer> makeKinetoImporter() {
  return std::make_unique<KinetoImporter>();
}

}  // namespace wl::import
