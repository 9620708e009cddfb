// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/nsys_importer.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <set>

#include "core/error.h"
#include "import/importer.h"
#include "import/trace_builder.h"

namespace wl::import {
namespace {

constexpr std::string_view kSqliteMagic("SQLite format 3\0", 16);

// A read-only SQLite database with one-line errors that name the file.
class Database {
 public:
  explicit Database(const std::filesystem::path& path) : file_(path.string()) {
    if (sqlite3_open_v2(file_.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) !=
        SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw Error(fmt::format("{}: cannot open as an SQLite database: {}", file_, msg));
    }
  }
  ~Database() { sqlite3_close(db_); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  class Statement {
   public:
    Statement(Database& db, const std::string& sql) : db_(db) {
      if (sqlite3_prepare_v2(db.db_, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK) db.fail(sql);
    }
    ~Statement() { sqlite3_finalize(st_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    bool step() {
      const int rc = sqlite3_step(st_);
      if (rc == SQLITE_ROW) return true;
      if (rc == SQLITE_DONE) return false;
      db_.fail(sqlite3_sql(st_));
    }
    bool isNull(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }
    bool isInteger(int c) const { return sqlite3_column_type(st_, c) == SQLITE_INTEGER; }
    int64_t integer(int c) const { return sqlite3_column_int64(st_, c); }
    std::string_view text(int c) const {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, c));
      return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(st_, c)))
               : std::string_view{};
    }

   private:
    Database& db_;
    sqlite3_stmt* st_ = nullptr;
  };

  [[noreturn]] void fail(std::string_view sql) const {
    const int code = sqlite3_errcode(db_);
    if (code == SQLITE_NOTADB)
      throw Error(
          fmt::format("{}: not an Nsight Systems SQLite export: the file is not an "
                      "SQLite database",
                      file_));
    if (code == SQLITE_CORRUPT)
      throw Error(fmt::format("{}: the SQLite database is damaged or truncated ({})", file_,
                              sqlite3_errmsg(db_)));
    std::string q(sql.substr(0, 60));
    throw Error(
        fmt::format("{}: SQLite error \"{}\" in query \"{}\"", file_, sqlite3_errmsg(db_), q));
  }

  std::set<std::string> tables() {
    std::set<std::string> out;
    Statement s(*this, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')");
    while (s.step())
      out.emplace(s.text(0));
    return out;
  }
  std::set<std::string> columns(const std::string& table) {
    std::set<std::string> out;
    Statement s(*this, fmt::format("PRAGMA table_info({})", table));
    while (s.step())
      out.emplace(s.text(1));
    return out;
  }
  int64_t count(const std::string& table) {
    Statement s(*this, fmt::format("SELECT COUNT(*) FROM {}", table));
    return s.step() ? s.integer(0) : 0;
  }

 private:
  std::string file_;
  sqlite3* db_ = nullptr;
};

int64_t pidOfGlobal(int64_t globalId) {
  return (globalId >> 24) & 0xFFFFFF;
}

std::string firstColumn(const std::set<std::string>& cols,
                        std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (cols.count(n)) return n;
  return {};
}

ImportedData readNsys(const std::filesystem::path& path, const Progress& progress) {
  const std::string file = path.string();
  {
    // A clear message for a file that is not SQLite at all, before SQLite says "not a database".
    std::FILE* f = std::fopen(file.c_str(), "rb");
    if (!f) throw Error(fmt::format("{}: cannot be opened", file));
    char head[16] = {};
    const size_t n = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
    if (n == 0) throw Error(fmt::format("{}: the file is empty", file));
    if (std::string_view(head, n) != kSqliteMagic)
      throw Error(
          fmt::format("{}: not an Nsight Systems SQLite export: the file does not start "
                      "with the SQLite header (export the report with `nsys export "
                      "--type sqlite`)",
                      file));
  }
  Database db(path);
  const std::set<std::string> tables = db.tables();
  const bool hasKernels = tables.count("CUPTI_ACTIVITY_KIND_KERNEL") > 0;
  if (!hasKernels && !tables.count("StringIds"))
    throw Error(
        fmt::format("{}: an SQLite database, but not an Nsight Systems export (no "
                    "CUPTI_ACTIVITY_KIND_KERNEL or StringIds table)",
                    file));
  ImportedData data;
  data.format = "nsys-sqlite";
  data.path = path;
  const std::string subject = path.filename().string();

  std::string schema;
  for (const char* meta : {"META_DATA_EXPORT", "EXPORT_META_DATA"})
    if (tables.count(meta)) {
      Database::Statement s(db, fmt::format("SELECT name, value FROM {}", meta));
      while (s.step())
        if (s.text(0) == "EXPORT_SCHEMA_VERSION") schema = s.text(1);
    }

  // The absolute clock: activity timestamps count ns from the session start.
  int64_t base = 0;
  if (tables.count("TARGET_INFO_SESSION_START_TIME")) {
    Database::Statement s(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1");
    if (s.step() && !s.isNull(0)) base = s.integer(0);
    if (!inTimeRange(base))
      throw Error(
          fmt::format("{}: TARGET_INFO_SESSION_START_TIME.utcEpochNs {} is out of range "
                      "(expected a time within 146 years of 1970)",
                      file, base));
  }
  if (base == 0) {
    data.absoluteTime = false;
    data.notes.push_back({Severity::Warning, "relative_clock", subject,
                          "the export has no TARGET_INFO_SESSION_START_TIME; timestamps count "
                          "from the session start (give --offset to place them)"});
  }

  // GPUs: device id -> (CUDA device index, name).
  std::map<int64_t, std::pair<int64_t, std::string>> gpus;
  if (tables.count("TARGET_INFO_GPU")) {
    const auto cols = db.columns("TARGET_INFO_GPU");
    const std::string idx = cols.count("cuDevice") ? "cuDevice" : "id";
    Database::Statement s(db, fmt::format("SELECT id, {}, name FROM TARGET_INFO_GPU", idx));
    while (s.step())
      gpus[s.integer(0)] = {s.isNull(1) ? s.integer(0) : s.integer(1), std::string(s.text(2))};
  }
  auto deviceIndex = [&](int64_t id) {
    const auto it = gpus.find(id);
    return static_cast<int>(it != gpus.end() ? it->second.first : id);
  };

  std::map<int64_t, TraceBuilder> byPid;
  auto builderFor = [&](int64_t pid) -> TraceBuilder& {
    auto it = byPid.find(pid);
    if (it == byPid.end()) it = byPid.emplace(pid, TraceBuilder(data.strings)).first;
    return it->second;
  };
  size_t negative = 0;
  int64_t done = 0;
  int64_t total = 0;
  for (const char* t : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                        "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS"})
    if (tables.count(t)) total += db.count(t);
  auto tick = [&] {
    if (++done % 65536 == 0 && total > 0)
      progress.report(static_cast<double>(done) / static_cast<double>(total), "reading");
  };
  // A start or end column: an integer whose time on the session clock (base + value) is in range.
  int64_t row = 0;
  auto timeAt = [&](const Database::Statement& st, int col, std::string_view table,
                    std::string_view column) -> int64_t {
    if (!st.isInteger(col))
      throw Error(fmt::format("{}: {} row {}: {} is {}, expected an integer number of ns", file,
                              table, row, column, st.isNull(col) ? "NULL" : "not an integer"));
    const int64_t t = st.integer(col);
    if (!inTimeRange(t) || !inTimeRange(base + t))
      throw Error(
          fmt::format("{}: {} row {}: {} = {} ns is out of range (expected a time within "
                      "146 years of 1970)",
                      file, table, row, column, t));
    return t;
  };
  auto duration = [&](int64_t start, int64_t end) {
    if (end < start) {
      ++negative;
      return int64_t{0};
    }
    return end - start;
  };

  if (hasKernels) {
    const auto cols = db.columns("CUPTI_ACTIVITY_KIND_KERNEL");
    const std::string nameCol = firstColumn(cols, {"demangledName", "shortName", "mangledName"});
    if (nameCol.empty() || !cols.count("start") || !cols.count("end"))
      throw Error(
          fmt::format("{}: CUPTI_ACTIVITY_KIND_KERNEL lacks start, end or a name column", file));
    const std::string sql = fmt::format(
        "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, k.globalPid, s.value "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = k.{}",
        nameCol);
    Database::Statement s(db, sql);
    row = 0;
    while (s.step()) {
      ++row;
      const int64_t start = timeAt(s, 0, "CUPTI_ACTIVITY_KIND_KERNEL", "start");
      const int64_t end = timeAt(s, 1, "CUPTI_ACTIVITY_KIND_KERNEL", "end");
      builderFor(pidOfGlobal(s.integer(5)))
          .addEvent(deviceIndex(s.integer(2)), s.integer(3), base + start, duration(start, end),
                    s.text(6), GpuEventKind::Kernel, s.isNull(4) ? -1 : s.integer(4));
      tick();
    }
  }
  if (tables.count("CUPTI_ACTIVITY_KIND_MEMCPY")) {
    std::map<int64_t, std::string> kinds;
    if (tables.count("ENUM_CUDA_MEMCPY_OPER")) {
      Database::Statement k(db, "SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER");
      while (k.step())
        kinds[k.integer(0)] = std::string(k.text(1));
    }
    Database::Statement s(db,
                          "SELECT start, end, deviceId, streamId, correlationId, globalPid, "
                          "copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY");
    row = 0;
    while (s.step()) {
      ++row;
      const int64_t start = timeAt(s, 0, "CUPTI_ACTIVITY_KIND_MEMCPY", "start");
      const int64_t end = timeAt(s, 1, "CUPTI_ACTIVITY_KIND_MEMCPY", "end");
      const auto k = kinds.find(s.integer(6));
      const std::string name =
          k != kinds.end() ? "Memcpy " + k->second : fmt::format("Memcpy kind {}", s.integer(6));
      builderFor(pidOfGlobal(s.integer(5)))
          .addEvent(deviceIndex(s.integer(2)), s.integer(3), base + start, duration(start, end),
                    name, GpuEventKind::Memcpy, s.isNull(4) ? -1 : s.integer(4));
      tick();
    }
  }
  if (tables.count("CUPTI_ACTIVITY_KIND_MEMSET")) {
    Database::Statement s(db,
                          "SELECT start, end, deviceId, streamId, correlationId, globalPid "
                          "FROM CUPTI_ACTIVITY_KIND_MEMSET");
    row = 0;
    while (s.step()) {
      ++row;
      const int64_t start = timeAt(s, 0, "CUPTI_ACTIVITY_KIND_MEMSET", "start");
      const int64_t end = timeAt(s, 1, "CUPTI_ACTIVITY_KIND_MEMSET", "end");
      builderFor(pidOfGlobal(s.integer(5)))
          .addEvent(deviceIndex(s.integer(2)), s.integer(3), base + start, duration(start, end),
                    "Memset", GpuEventKind::Memset, s.isNull(4) ? -1 : s.integer(4));
      tick();
    }
  }

  // NVTX ranges: ProfilerStep#N ranges are iterations, the others annotations.
  std::map<int64_t, std::vector<Iteration>> iterations;
  std::map<int64_t, std::vector<Annotation>> annotations;
  if (tables.count("NVTX_EVENTS")) {
    const auto cols = db.columns("NVTX_EVENTS");
    const bool textId = cols.count("textId") > 0;
    const std::string sql = fmt::format(
        "SELECT n.start, n.end, n.text, {}, n.globalTid FROM NVTX_EVENTS n {} WHERE n.end IS "
        "NOT NULL",
        textId ? "s.value" : "NULL", textId ? "LEFT JOIN StringIds s ON s.id = n.textId" : "");
    Database::Statement s(db, sql);
    row = 0;
    while (s.step()) {
      tick();
      ++row;
      const int64_t start = timeAt(s, 0, "NVTX_EVENTS", "start");
      const int64_t dur = duration(start, timeAt(s, 1, "NVTX_EVENTS", "end"));
      std::string_view text = s.isNull(2) ? s.text(3) : s.text(2);
      const int64_t pid = pidOfGlobal(s.integer(4));
      if (text.substr(0, 13) == "ProfilerStep#") {
        int64_t step = 0;
        const std::string_view digits = text.substr(13);
        const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), step);
        if (r.ec == std::errc()) {
          iterations[pid].push_back({0, step, base + start, base + start + dur});
          continue;
        }
      }
      annotations[pid].push_back({0, base + start, dur, data.strings.intern(text), false});
    }
  }

  std::set<int64_t> pids;
  for (const auto& [pid, b] : byPid)
    pids.insert(pid);
  for (const auto& [pid, v] : iterations)
    if (byPid.count(pid) || byPid.empty()) pids.insert(pid);
  for (int64_t pid : pids) {
    ImportedRank r;
    r.info.rank = -1;
    r.info.pid = pid;
    r.info.source = file;
    if (auto it = byPid.find(pid); it != byPid.end()) {
      r.device = it->second.mainDevice();
      r.tracks = it->second.finish();
    }
    for (const auto& [id, g] : gpus)
      if (g.first == r.device) r.deviceName = g.second;
    if (auto it = iterations.find(pid); it != iterations.end())
      r.iterations = std::move(it->second);
    if (auto it = annotations.find(pid); it != annotations.end())
      r.annotations = std::move(it->second);
    if (data.platform.empty()) data.platform = r.deviceName;
    data.ranks.push_back(std::move(r));
  }
  if (!schema.empty())
    data.notes.push_back({Severity::Info, "export_schema", subject,
                          fmt::format("Nsight Systems export schema {}", schema)});
  if (byPid.empty())
    data.notes.push_back({Severity::Warning, "no_gpu_events", subject,
                          "the export has no CUDA kernel, memcpy or memset activity"});
  if (negative > 0)
    data.notes.push_back({Severity::Warning, "negative_durations", subject,
                          fmt::format("{} rows end before they start; their durations were set "
                                      "to 0",
                                      negative)});
  return data;
}

class NsysImporter : public Importer {
 public:
  std::string_view name() const override { return "nsys-sqlite"; }
  std::string_view description() const override {
    return "Nsight Systems SQLite export (nsys export --type sqlite): CUDA kernels, memcpy, "
           "memset, NVTX";
  }
  bool telemetry() const override { return false; }
  int detect(const InputProbe& p) const override {
    if (p.isDirectory || p.head.substr(0, kSqliteMagic.size()) != kSqliteMagic) return 0;
    for (std::string_view t : {"CUPTI_ACTIVITY_KIND", "TARGET_INFO_SESSION_START_TIME",
                               "META_DATA_EXPORT", "EXPORT_META_DATA", "NVTX_EVENTS"})
      if (p.head.find(t) != std::string::npos) return 95;
    return 30;  // an SQLite file whose schema did not fit in the probe: worth a try
  }
  ImportedData read(const std::filesystem::path& input, const ImportOptions&,
                    const Progress& progress) const override {
    return readNsys(input, progress);
  }
};

}  // namespace

std::unique_ptr<Importer> makeNsysImporter() {
  return std::make_unique<NsysImporter>();
}

}  // namespace wl::import
