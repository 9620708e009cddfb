// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/nsys_importer.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <set>

#include "loaders/core/error.h"
#include "loaders/import/importer.h"
#include "loaders/import/trace_builder.h"

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

// A clear message for a file that is not SQLite at all, before SQLite says "not a database".
void checkSqliteHeader(const std::string& file) {
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

// Reads one export: the session clock and the GPUs first, then the activity tables row by row
// into a trace builder per process, then one rank per process.
class NsysReader {
 public:
  NsysReader(const std::filesystem::path& path, const Progress& progress)
      : file_(path.string()), progress_(progress), db_(path), tables_(db_.tables()) {
    data_.format = "nsys-sqlite";
    data_.path = path;
  }

  ImportedData read() {
    const bool hasKernels = tables_.count("CUPTI_ACTIVITY_KIND_KERNEL") > 0;
    if (!hasKernels && !tables_.count("StringIds"))
      throw Error(
          fmt::format("{}: an SQLite database, but not an Nsight Systems export (no "
                      "CUPTI_ACTIVITY_KIND_KERNEL or StringIds table)",
                      file_));
    const std::string subject = data_.path.filename().string();
    const std::string schema = readSchemaVersion();
    readSessionStart(subject);
    readGpus();
    for (const char* t : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                          "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS"})
      if (tables_.count(t)) total_ += db_.count(t);
    if (hasKernels) readKernels();
    if (tables_.count("CUPTI_ACTIVITY_KIND_MEMCPY")) readMemcpy();
    if (tables_.count("CUPTI_ACTIVITY_KIND_MEMSET")) readMemset();
    if (tables_.count("NVTX_EVENTS")) readNvtx();
    makeRanks();
    if (!schema.empty())
      data_.notes.push_back({Severity::Info, "export_schema", subject,
                             fmt::format("Nsight Systems export schema {}", schema)});
    if (byPid_.empty())
      data_.notes.push_back({Severity::Warning, "no_gpu_events", subject,
                             "the export has no CUDA kernel, memcpy or memset activity"});
    if (negative_ > 0)
      data_.notes.push_back({Severity::Warning, "negative_durations", subject,
                             fmt::format("{} rows end before they start; their durations were set "
                                         "to 0",
                                         negative_)});
    return std::move(data_);
  }

 private:
  std::string readSchemaVersion() {
    std::string schema;
    for (const char* meta : {"META_DATA_EXPORT", "EXPORT_META_DATA"})
      if (tables_.count(meta)) {
        Database::Statement s(db_, fmt::format("SELECT name, value FROM {}", meta));
        while (s.step())
          if (s.text(0) == "EXPORT_SCHEMA_VERSION") schema = s.text(1);
      }
    return schema;
  }

  // The absolute clock: activity timestamps count ns from the session start.
  void readSessionStart(const std::string& subject) {
    if (tables_.count("TARGET_INFO_SESSION_START_TIME")) {
      Database::Statement s(db_, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1");
      if (s.step() && !s.isNull(0)) base_ = s.integer(0);
      if (!inTimeRange(base_))
        throw Error(
            fmt::format("{}: TARGET_INFO_SESSION_START_TIME.utcEpochNs {} is out of range "
                        "(expected a time within 146 years of 1970)",
                        file_, base_));
    }
    if (base_ == 0) {
      data_.absoluteTime = false;
      data_.notes.push_back({Severity::Warning, "relative_clock", subject,
                             "the export has no TARGET_INFO_SESSION_START_TIME; timestamps count "
                             "from the session start (give --offset to place them)"});
    }
  }

  // GPUs: device id -> (CUDA device index, name).
  void readGpus() {
    if (!tables_.count("TARGET_INFO_GPU")) return;
    const auto cols = db_.columns("TARGET_INFO_GPU");
    const std::string idx = cols.count("cuDevice") ? "cuDevice" : "id";
    Database::Statement s(db_, fmt::format("SELECT id, {}, name FROM TARGET_INFO_GPU", idx));
    while (s.step())
      gpus_[s.integer(0)] = {s.isNull(1) ? s.integer(0) : s.integer(1), std::string(s.text(2))};
  }

  int deviceIndex(int64_t id) const {
    const auto it = gpus_.find(id);
    return static_cast<int>(it != gpus_.end() ? it->second.first : id);
  }

  TraceBuilder& builderFor(int64_t pid) {
    auto it = byPid_.find(pid);
    if (it == byPid_.end()) it = byPid_.emplace(pid, TraceBuilder(data_.strings)).first;
    return it->second;
  }

  void tick() {
    if (++done_ % 65536 == 0 && total_ > 0)
      progress_.report(static_cast<double>(done_) / static_cast<double>(total_), "reading");
  }

  // A start or end column: an integer whose time on the session clock (base + value) is in range.
  int64_t timeAt(const Database::Statement& st, int col, std::string_view table,
                 std::string_view column) const {
    if (!st.isInteger(col))
      throw Error(fmt::format("{}: {} row {}: {} is {}, expected an integer number of ns", file_,
                              table, row_, column, st.isNull(col) ? "NULL" : "not an integer"));
    const int64_t t = st.integer(col);
    if (!inTimeRange(t) || !inTimeRange(base_ + t))
      throw Error(
          fmt::format("{}: {} row {}: {} = {} ns is out of range (expected a time within "
                      "146 years of 1970)",
                      file_, table, row_, column, t));
    return t;
  }

  int64_t duration(int64_t start, int64_t end) {
    if (end < start) {
      ++negative_;
      return int64_t{0};
    }
    return end - start;
  }

  // One GPU activity row (start, end, deviceId, streamId, correlationId, globalPid first).
  void addActivity(const Database::Statement& s, std::string_view table, std::string_view name,
                   GpuEventKind kind) {
    const int64_t start = timeAt(s, 0, table, "start");
    const int64_t end = timeAt(s, 1, table, "end");
    builderFor(pidOfGlobal(s.integer(5)))
        .addEvent(deviceIndex(s.integer(2)), s.integer(3), base_ + start, duration(start, end),
                  name, kind, s.isNull(4) ? -1 : s.integer(4));
  }

  void readKernels() {
    const auto cols = db_.columns("CUPTI_ACTIVITY_KIND_KERNEL");
    const std::string nameCol = firstColumn(cols, {"demangledName", "shortName", "mangledName"});
    if (nameCol.empty() || !cols.count("start") || !cols.count("end"))
      throw Error(
          fmt::format("{}: CUPTI_ACTIVITY_KIND_KERNEL lacks start, end or a name column", file_));
    const std::string sql = fmt::format(
        "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, k.globalPid, s.value "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = k.{}",
        nameCol);
    Database::Statement s(db_, sql);
    row_ = 0;
    while (s.step()) {
      ++row_;
      addActivity(s, "CUPTI_ACTIVITY_KIND_KERNEL", s.text(6), GpuEventKind::Kernel);
      tick();
    }
  }

  void readMemcpy() {
    std::map<int64_t, std::string> kinds;
    if (tables_.count("ENUM_CUDA_MEMCPY_OPER")) {
      Database::Statement k(db_, "SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER");
      while (k.step())
        kinds[k.integer(0)] = std::string(k.text(1));
    }
    Database::Statement s(db_,
                          "SELECT start, end, deviceId, streamId, correlationId, globalPid, "
                          "copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY");
    row_ = 0;
    while (s.step()) {
      ++row_;
      const auto k = kinds.find(s.integer(6));
      const std::string name =
          k != kinds.end() ? "Memcpy " + k->second : fmt::format("Memcpy kind {}", s.integer(6));
      addActivity(s, "CUPTI_ACTIVITY_KIND_MEMCPY", name, GpuEventKind::Memcpy);
      tick();
    }
  }

  void readMemset() {
    Database::Statement s(db_,
                          "SELECT start, end, deviceId, streamId, correlationId, globalPid "
                          "FROM CUPTI_ACTIVITY_KIND_MEMSET");
    row_ = 0;
    while (s.step()) {
      ++row_;
      addActivity(s, "CUPTI_ACTIVITY_KIND_MEMSET", "Memset", GpuEventKind::Memset);
      tick();
    }
  }

  // NVTX ranges: ProfilerStep#N ranges are iterations, the others annotations.
  void readNvtx() {
    const auto cols = db_.columns("NVTX_EVENTS");
    const bool textId = cols.count("textId") > 0;
    const std::string sql = fmt::format(
        "SELECT n.start, n.end, n.text, {}, n.globalTid FROM NVTX_EVENTS n {} WHERE n.end IS "
        "NOT NULL",
        textId ? "s.value" : "NULL", textId ? "LEFT JOIN StringIds s ON s.id = n.textId" : "");
    Database::Statement s(db_, sql);
    row_ = 0;
    while (s.step()) {
      tick();
      ++row_;
      const int64_t start = timeAt(s, 0, "NVTX_EVENTS", "start");
      const int64_t dur = duration(start, timeAt(s, 1, "NVTX_EVENTS", "end"));
      std::string_view text = s.isNull(2) ? s.text(3) : s.text(2);
      const int64_t pid = pidOfGlobal(s.integer(4));
      if (text.substr(0, 13) == "ProfilerStep#") {
        int64_t step = 0;
        const std::string_view digits = text.substr(13);
        const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), step);
        if (r.ec == std::errc()) {
          iterations_[pid].push_back({0, step, base_ + start, base_ + start + dur});
          continue;
        }
      }
      annotations_[pid].push_back({0, base_ + start, dur, data_.strings.intern(text), false});
    }
  }

  // One rank per process with GPU activity (or, without any, per process with iterations).
  void makeRanks() {
    std::set<int64_t> pids;
    for (const auto& [pid, b] : byPid_)
      pids.insert(pid);
    for (const auto& [pid, v] : iterations_)
      if (byPid_.count(pid) || byPid_.empty()) pids.insert(pid);
    for (int64_t pid : pids) {
      ImportedRank r;
      r.info.rank = -1;
      r.info.pid = pid;
      r.info.source = file_;
      if (auto it = byPid_.find(pid); it != byPid_.end()) {
        r.device = it->second.mainDevice();
        r.tracks = it->second.finish();
      }
      for (const auto& [id, g] : gpus_)
        if (g.first == r.device) r.deviceName = g.second;
      if (auto it = iterations_.find(pid); it != iterations_.end())
        r.iterations = std::move(it->second);
      if (auto it = annotations_.find(pid); it != annotations_.end())
        r.annotations = std::move(it->second);
      if (data_.platform.empty()) data_.platform = r.deviceName;
      data_.ranks.push_back(std::move(r));
    }
  }

  const std::string file_;
  const Progress& progress_;
  Database db_;
  const std::set<std::string> tables_;
  ImportedData data_;
  int64_t base_ = 0;
  std::map<int64_t, std::pair<int64_t, std::string>> gpus_;  // id -> (CUDA index, name)
  std::map<int64_t, TraceBuilder> byPid_;
  std::map<int64_t, std::vector<Iteration>> iterations_;
  std::map<int64_t, std::vector<Annotation>> annotations_;
  size_t negative_ = 0;
  int64_t done_ = 0, total_ = 0;
  int64_t row_ = 0;  // of the table being read, for messages
};

ImportedData readNsys(const std::filesystem::path& path, const Progress& progress) {
  checkSqliteHeader(path.string());
  return NsysReader(path, progress).read();
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
