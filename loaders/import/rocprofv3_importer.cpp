// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/rocprofv3_importer.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <map>
#include <unordered_map>

#include "loaders/core/error.h"
#include "loaders/import/json_stream.h"
#include "loaders/import/trace_builder.h"

namespace wl::import {
namespace {

namespace dom = simdjson::dom;

struct Agent {
  int64_t type = 0;  // 1 CPU, 2 GPU
  int64_t gpuIndex = -1;
  std::string product;
};

struct Record {
  int64_t start = 0, end = 0;
  uint64_t kernel = 0;  // kernel id, or the copy operation
  uint64_t agent = 0;
  uint64_t source = 0;  // copies: the source agent (the destination is `agent`)
  int64_t stream = 0;
  int64_t correlation = -1;
  bool copy = false;
};

struct Process {
  int64_t pid = -1;
  std::string hostname;
  std::map<uint64_t, Agent> agents;
  std::unordered_map<uint64_t, std::string> symbols;
  std::vector<std::string> copyOperations;
  std::vector<Record> records;
};

class RocprofV3Reader {
 public:
  RocprofV3Reader(const std::filesystem::path& path, const Progress& progress)
      : path_(path), js_(path, progress) {}

  ImportedData read();

 private:
  void readProcess(size_t index);
  void readBufferRecords(Process& p, const std::string& base);
  template <typename F>
  void forEachElement(const std::string& path, F&& f);
  dom::element parse(std::string_view raw);
  int64_t integer(dom::element e, std::string_view key, std::string_view path, bool required);
  // A timestamp: an integer within +-kMaxAbsTimeNs (importer.h).
  int64_t time(dom::element e, std::string_view key);
  uint64_t handle(dom::element e, std::string_view key);

  std::filesystem::path path_;
  JsonStream js_;
  dom::parser parser_;
  std::vector<Process> processes_;
  size_t negative_ = 0;
};

dom::element RocprofV3Reader::parse(std::string_view raw) {
  dom::element e;
  if (auto err = parser_.parse(raw.data(), raw.size(), false).get(e))
    js_.fail(fmt::format("invalid JSON ({})", simdjson::error_message(err)));
  return e;
}

int64_t RocprofV3Reader::integer(dom::element e, std::string_view key, std::string_view path,
                                 bool required) {
  dom::element v;
  if (e.at_key(key).get(v)) {
    if (required)
      js_.fail(fmt::format("expected an integer field \"{}\"{}, found none", key,
                           path.empty() ? std::string() : " in " + std::string(path)));
    return -1;
  }
  int64_t i = 0;
  uint64_t u = 0;
  if (!v.get_int64().get(i)) return i;
  if (!v.get_uint64().get(u)) return static_cast<int64_t>(u);
  js_.fail(fmt::format("{}{}{}: expected an integer, found {}", path, path.empty() ? "" : ".", key,
                       describeBytes(simdjson::to_string(v), 40)));
}

int64_t RocprofV3Reader::time(dom::element e, std::string_view key) {
  dom::element v;
  if (e.at_key(key).get(v))
    js_.fail(fmt::format("expected an integer field \"{}\", found none", key));
  int64_t i = 0;
  if (v.get_int64().get(i) == simdjson::SUCCESS && inTimeRange(i)) return i;
  if (v.is_int64() || v.is_uint64())
    js_.fail(
        fmt::format("{}: {} ns is out of range (expected a time within 146 years of the "
                    "clock's origin)",
                    key, simdjson::to_string(v)));
  js_.fail(fmt::format("{}: expected an integer number of nanoseconds, found {}", key,
                       describeBytes(simdjson::to_string(v), 40)));
}

uint64_t RocprofV3Reader::handle(dom::element e, std::string_view key) {
  dom::element v;
  if (e.at_key(key).get(v)) return 0;
  uint64_t h = 0;
  if (v.is_object()) {
    if (v["handle"].get_uint64().get(h)) return 0;
    return h;
  }
  if (v.get_uint64().get(h)) return 0;
  return h;
}

template <typename F>
void RocprofV3Reader::forEachElement(const std::string& path, F&& f) {
  if (js_.peek() != '[') js_.fail("expected an array");
  js_.expect('[');
  if (js_.peek() == ']') {
    js_.expect(']');
    return;
  }
  int64_t i = 0;
  do {
    js_.setPath(path, i);
    f(js_.rawValue(), i);
    ++i;
  } while (js_.nextMember(']'));
  js_.setPath(path);
}

void RocprofV3Reader::readBufferRecords(Process& p, const std::string& base) {
  js_.expect('{');
  if (js_.peek() == '}') {
    js_.expect('}');
    return;
  }
  do {
    js_.setPath(base);
    const std::string key = js_.readKey();
    const std::string path = base + "." + key;
    js_.setPath(path);
    if (key == "kernel_dispatch") {
      forEachElement(path, [&](std::string_view raw, int64_t) {
        const dom::element r = parse(raw);
        Record rec;
        rec.start = time(r, "start_timestamp");
        rec.end = time(r, "end_timestamp");
        dom::element info;
        if (r.at_key("dispatch_info").get(info))
          js_.fail("expected a \"dispatch_info\" object, found none");
        rec.kernel = static_cast<uint64_t>(integer(info, "kernel_id", "dispatch_info", true));
        rec.agent = handle(info, "agent_id");
        // Tracks are the GPU's hardware queues, as in rocprof v1 CSV: HIP stream ids can
        // number in the hundreds (one per short-lived stream) and say less about what ran
        // concurrently on the device.
        rec.stream = static_cast<int64_t>(handle(info, "queue_id"));
        dom::element corr;
        if (!r.at_key("correlation_id").get(corr))
          rec.correlation = corr.is_object() ? integer(corr, "internal", "correlation_id", false)
                                             : integer(r, "correlation_id", "", false);
        p.records.push_back(rec);
      });
    } else if (key == "memory_copy") {
      forEachElement(path, [&](std::string_view raw, int64_t) {
        const dom::element r = parse(raw);
        Record rec;
        rec.copy = true;
        rec.start = time(r, "start_timestamp");
        rec.end = time(r, "end_timestamp");
        rec.kernel =
            static_cast<uint64_t>(std::max<int64_t>(0, integer(r, "operation", "", false)));
        const uint64_t dst = handle(r, "dst_agent_id");
        const uint64_t src = handle(r, "src_agent_id");
        rec.agent = dst;
        rec.source = src;
        rec.stream = -2;  // copies run on the copy (SDMA) engines: one track for them
        dom::element corr;
        if (!r.at_key("correlation_id").get(corr))
          rec.correlation = corr.is_object() ? integer(corr, "internal", "correlation_id", false)
                                             : integer(r, "correlation_id", "", false);
        p.records.push_back(rec);
      });
    } else {
      js_.skipValue();
    }
  } while (js_.nextMember('}'));
}

void RocprofV3Reader::readProcess(size_t index) {
  Process p;
  const std::string base = fmt::format("rocprofiler-sdk-tool[{}]", index);
  js_.setPath(base);
  if (js_.peek() != '{') js_.fail("expected an object");
  js_.expect('{');
  if (js_.peek() != '}') do {
      js_.setPath(base);
      const std::string key = js_.readKey();
      const std::string path = base + "." + key;
      js_.setPath(path);
      if (key == "metadata") {
        const dom::element m = parse(js_.rawValue());
        p.pid = integer(m, "pid", "metadata", false);
        std::string_view host;
        if (!m["node"]["hostname"].get_string().get(host)) p.hostname = host;
      } else if (key == "agents") {
        const dom::element a = parse(js_.rawValue());
        dom::array arr;
        if (a.get_array().get(arr)) js_.fail("expected an array of agents");
        for (dom::element ag : arr) {
          Agent x;
          x.type = integer(ag, "type", "agents[]", false);
          x.gpuIndex = integer(ag, "logical_node_type_id", "agents[]", false);
          std::string_view s;
          if (!ag["product_name"].get_string().get(s) && !s.empty())
            x.product = s;
          else if (!ag["name"].get_string().get(s))
            x.product = s;
          p.agents[handle(ag, "id")] = x;
        }
      } else if (key == "kernel_symbols") {
        forEachElement(path, [&](std::string_view raw, int64_t) {
          const dom::element s = parse(raw);
          const int64_t id = integer(s, "kernel_id", "", true);
          std::string_view name;
          for (const char* k : {"formatted_kernel_name", "demangled_kernel_name", "kernel_name"})
            if (!s[k].get_string().get(name) && !name.empty()) break;
          p.symbols[static_cast<uint64_t>(id)] = std::string(name);
        });
      } else if (key == "strings") {
        const dom::element s = parse(js_.rawValue());
        dom::array groups;
        if (!s["buffer_records"].get_array().get(groups))
          for (dom::element g : groups) {
            std::string_view kind;
            if (g["kind"].get_string().get(kind) || kind != "MEMORY_COPY") continue;
            dom::array ops;
            if (g["operations"].get_array().get(ops)) continue;
            for (dom::element op : ops) {
              std::string_view name;
              p.copyOperations.emplace_back(op.get_string().get(name) ? "" : name);
            }
          }
      } else if (key == "buffer_records") {
        if (js_.peek() != '{') js_.fail("expected an object of record arrays");
        readBufferRecords(p, path);
      } else {
        js_.skipValue();
      }
    } while (js_.nextMember('}'));
  else
    js_.expect('}');
  processes_.push_back(std::move(p));
}

ImportedData RocprofV3Reader::read() {
  const char first = js_.peek();
  if (first == 0 && js_.lookahead(1).empty())  // (a NUL byte is data: binary, not empty)
    throw Error(fmt::format("{}: the file is empty", path_.string()));
  if (first != '{')
    throw Error(fmt::format("{}: not a rocprofv3 JSON file: expected '{{' at byte {}, found {}",
                            path_.string(), js_.offset(), describeBytes(js_.lookahead(64), 24)));
  js_.expect('{');
  bool found = false;
  if (js_.peek() != '}') do {
      js_.setPath("");
      const std::string key = js_.readKey();
      js_.setPath(key);
      if (key == "rocprofiler-sdk-tool") {
        found = true;
        if (js_.peek() != '[') js_.fail("expected an array of processes");
        js_.expect('[');
        if (js_.peek() != ']') {
          size_t i = 0;
          do
            readProcess(i++);
          while (js_.nextMember(']'));
        } else {
          js_.expect(']');
        }
      } else {
        js_.skipValue();
      }
    } while (js_.nextMember('}'));
  else
    js_.expect('}');
  if (!found)
    throw Error(fmt::format("{}: not a rocprofv3 JSON file: no \"rocprofiler-sdk-tool\" member",
                            path_.string()));
  js_.reportProgress();

  ImportedData data;
  data.format = "rocprofv3";
  data.path = path_;
  data.absoluteTime = false;
  const std::string subject = path_.filename().string();
  size_t missingSymbols = 0;
  for (Process& p : processes_) {
    TraceBuilder builder(data.strings);
    std::string product;
    for (const Record& r : p.records) {
      auto ag = p.agents.find(r.agent);
      if (r.copy && (ag == p.agents.end() || ag->second.type != 2)) ag = p.agents.find(r.source);
      const int device = ag != p.agents.end() ? static_cast<int>(ag->second.gpuIndex) : -1;
      if (ag != p.agents.end() && product.empty()) product = ag->second.product;
      int64_t dur = r.end - r.start;
      if (dur < 0) {
        ++negative_;
        dur = 0;
      }
      if (r.copy) {
        const std::string name = r.kernel < p.copyOperations.size()
                                     ? p.copyOperations[r.kernel]
                                     : fmt::format("MEMORY_COPY_{}", r.kernel);
        builder.addEvent(device, r.stream, r.start, dur, name, GpuEventKind::Memcpy, r.correlation);
        continue;
      }
      const auto sym = p.symbols.find(r.kernel);
      if (sym == p.symbols.end()) {
        ++missingSymbols;
        builder.addEvent(device, r.stream, r.start, dur, fmt::format("kernel {}", r.kernel),
                         GpuEventKind::Kernel, r.correlation);
      } else {
        builder.addEvent(device, r.stream, r.start, dur, sym->second, GpuEventKind::Kernel,
                         r.correlation);
      }
    }
    ImportedRank rank;
    rank.info.rank = -1;
    rank.info.pid = p.pid;
    rank.info.hostname = p.hostname;
    rank.info.source = path_.string();
    rank.device = builder.mainDevice();
    for (const auto& [h, a] : p.agents)
      if (a.type == 2 && a.gpuIndex == rank.device) rank.deviceName = a.product;
    rank.tracks = builder.finish();
    if (data.platform.empty()) data.platform = rank.deviceName;
    data.ranks.push_back(std::move(rank));
    p.records.clear();
    p.records.shrink_to_fit();
  }
  data.notes.push_back({Severity::Info, "relative_clock", subject,
                        "rocprofv3 timestamps count from the host's boot (monotonic clock); give "
                        "--offset to place them on the wall clock"});
  if (negative_ > 0)
    data.notes.push_back({Severity::Warning, "negative_durations", subject,
                          fmt::format("{} records end before they start; their durations were "
                                      "set to 0",
                                      negative_)});
  if (missingSymbols > 0)
    data.notes.push_back({Severity::Warning, "missing_kernel_symbols", subject,
                          fmt::format("{} dispatches name a kernel_id missing from "
                                      "kernel_symbols; they are named \"kernel ID\"",
                                      missingSymbols)});
  return data;
}

class RocprofV3Importer : public Importer {
 public:
  std::string_view name() const override { return "rocprofv3"; }
  std::string_view description() const override {
    return "rocprofv3 JSON (rocprofiler-sdk-tool: kernel dispatches, memory copies, agents)";
  }
  bool telemetry() const override { return false; }
  int detect(const InputProbe& p) const override {
    if (p.isDirectory) return 0;
    const std::string_view h = std::string_view(p.head).substr(0, 4096);
    const size_t brace = h.find_first_not_of(" \t\r\n");
    if (brace == std::string_view::npos || h[brace] != '{') return 0;
    return h.find("\"rocprofiler-sdk-tool\"") != std::string_view::npos ? 95 : 0;
  }
  ImportedData read(const std::filesystem::path& input, const ImportOptions&,
                    const Progress& progress) const override {
    RocprofV3Reader reader(input, progress);
    return reader.read();
  }
};

}  // namespace

std::unique_ptr<Importer> makeRocprofV3Importer() {
  return std::make_unique<RocprofV3Importer>();
}

}  // namespace wl::import
