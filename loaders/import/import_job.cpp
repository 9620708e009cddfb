// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/import_job.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "loaders/core/error.h"
#include "loaders/core/free_memory.h"
#include "loaders/core/time_format.h"
#include "loaders/import/json_stream.h"
#include "loaders/import/telemetry/text_input.h"
#include "loaders/import/telemetry_checks.h"

namespace wl::import {
namespace {

const Importer* importerNamed(const std::string& name) {
  if (name.empty()) return nullptr;
  const Importer* i = findImporter(name);
  if (!i)
    throw Error(
        fmt::format("unknown format \"{}\" (`wattline import --format list` shows the "
                    "formats)",
                    name));
  return i;
}

// Why no importer reads a file, in one line.
std::string unreadable(const InputProbe& p) {
  const std::string file = p.path.string();
  if (p.head.empty()) return fmt::format("{}: the file is empty", file);
  if (p.head.size() > 262 && p.head.compare(257, 5, "ustar") == 0)
    return fmt::format("{}: a tar archive: extract it and import the folder", file);
  return fmt::format(
      "{}: not a format Wattline reads (it starts with {}; "
      "`wattline import --format list` shows the formats)",
      file, describeBytes(p.head, 24));
}

// How well a --utc-offset names a planned input: 2 its file, 1 its format, 0 every input, -1 not.
int utcMatch(const UtcOffset& o, const PlannedInput& p) {
  if (o.source.empty()) return 0;
  for (const std::filesystem::path& path : {p.path, p.given}) {
    const std::string s = path.string();
    if (o.source == s || o.source == path.filename().string()) return 2;
    if (s.size() > o.source.size() &&
        s.compare(s.size() - o.source.size(), o.source.size(), o.source) == 0 &&
        s[s.size() - o.source.size() - 1] == '/')
      return 2;
  }
  return p.importer && o.source == p.importer->name() ? 1 : -1;
}

// The options of one input: the best-matching --utc-offset replaces the global one.
ImportOptions optionsFor(const ImportRequest& r, const PlannedInput& p) {
  ImportOptions o = r.options;
  int best = -1;
  for (const UtcOffset& u : r.utcOffsets) {
    const int m = utcMatch(u, p);
    if (m > best) best = m, o.utc_offset_s = u.seconds;
  }
  return o;
}

std::string offsetText(int64_t seconds) {
  const int64_t a = seconds < 0 ? -seconds : seconds;
  return fmt::format("{}{:02}:{:02}", seconds < 0 ? '-' : '+', a / 3600, a % 3600 / 60);
}

bool hidden(const std::filesystem::path& rel) {
  for (const auto& part : rel)
    if (!part.empty() && part.string().front() == '.') return true;
  return false;
}

}  // namespace

ImportJob::ImportJob(ImportRequest request) : request_(std::move(request)) {}

std::vector<PlannedInput> ImportJob::plan() const {
  std::vector<PlannedInput> out;
  const Importer* globalFormat = importerNamed(request_.format);
  for (const ImportInput& in : request_.inputs) {
    const Importer* forced = in.format.empty() ? globalFormat : importerNamed(in.format);
    const InputProbe probe = probeInput(in.path);
    if (probe.isDirectory) {
      const Importer* whole =
          forced ? (forced->detect(probe) > 0 ? forced : nullptr) : detectImporter(probe);
      if (whole) {
        out.push_back({in.path, in.path, whole, forced != nullptr, {}});
        continue;
      }
      size_t files = 0;
      for (const std::filesystem::path& rel : probe.entries) {
        if (hidden(rel)) continue;
        ++files;
        const std::filesystem::path file = in.path / rel;
        PlannedInput p{file, in.path, nullptr, forced != nullptr, {}};
        try {
          const InputProbe fp = probeInput(file);
          p.importer = forced ? forced : detectImporter(fp);
          if (!p.importer) p.problem = unreadable(fp);
        } catch (const Error& e) {
          p.problem = e.what();
        }
        out.push_back(std::move(p));
      }
      if (files == 0)
        out.push_back({in.path, in.path, nullptr, false,
                       fmt::format("{}: the folder holds no files", in.path.string())});
      continue;
    }
    PlannedInput p{in.path, in.path, forced, forced != nullptr, {}};
    if (!p.importer) p.importer = detectImporter(probe);
    if (!p.importer) p.problem = unreadable(probe);
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// The run's record of how it was imported: inputs, formats, offsets and options.
std::string importParametersJson(const ImportRequest& request,
                                 const std::vector<const PlannedInput*>& readable,
                                 const AssembleOptions& assemble) {
  nlohmann::json j;
  nlohmann::json inputs = nlohmann::json::array();
  for (const PlannedInput* p : readable)
    inputs.push_back({{"path", p->path.string()},
                      {"format", p->importer->name()},
                      {"detected", !p->overridden}});
  for (const RemoteInput& r : request.remote)
    inputs.push_back({{"path", r.label}, {"format", r.format}, {"detected", false}});
  j["import"]["inputs"] = inputs;
  for (const SourceOffset& o : assemble.offsets)
    j["import"]["offsets"][o.source] = o.offset_ns;
  if (request.options.dcgm_interval_ms)
    j["import"]["dcgm_interval_ms"] = *request.options.dcgm_interval_ms;
  if (request.options.gpus) j["import"]["gpus"] = *request.options.gpus;
  if (request.options.start_ns) {
    j["import"]["start_time_ns"] = *request.options.start_ns;
    j["import"]["start_time"] = formatUtc(*request.options.start_ns, 9);
  }
  if (request.options.utc_offset_s)
    j["import"]["utc_offsets"]["*"] = offsetText(*request.options.utc_offset_s);
  for (const UtcOffset& u : request.utcOffsets)
    j["import"]["utc_offsets"][u.source.empty() ? "*" : u.source] = offsetText(u.seconds);
  return j.dump();
}

// Reads one planned file; an error that is not a wl::Error is named with the file.
ImportedData readOne(const PlannedInput& p, const ImportOptions& options,
                     const Progress& progress) {
  try {
    ImportedData d = p.importer->read(p.path, options, progress);
    if (d.format.empty()) d.format = std::string(p.importer->name());
    d.path = p.path;
    return d;
  } catch (const Error&) {
    throw;
  } catch (const Cancelled&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(
        fmt::format("{}: cannot be read as {}: {}", p.path.string(), p.importer->name(), e.what()));
  }
}

// Step of each reader, in an import within a budget: once an input is read its telemetry checks run
// (telemetry_checks.h; the assembler would run them on the tables) and its GPU tables are written
// to the spill file when keeping them would take the telemetry held by the import past a quarter
// of the budget. The tables kept count against that share until the run is written; spilled ones
// are read back one GPU at a time as the run is written (assemble.cpp).
void spillTelemetry(ImportedData& d, const std::shared_ptr<KernelSpool>& spool) {
  if (d.gpus.empty()) return;
  std::vector<QualityNote> notes;
  checkTelemetry(d, notes);
  d.checkNotes = std::move(notes);
  size_t bytes = 0;
  for (const ImportedGpu& g : d.gpus)
    bytes += tableBytes(g.table);
  const auto held = static_cast<int64_t>(bytes);
  spool->holdTelemetry(held);
  if (spool->telemetryHeld() <= static_cast<int64_t>(spool->budget() / 4)) return;
  spool->holdTelemetry(-held);
  for (ImportedGpu& g : d.gpus) {
    if (g.table.t_ns.empty()) continue;
    g.spilled = writeTable(spool, g.table);
    g.table = {};
  }
  releaseFreedMemory();
}

// Step: the files, readerCount() at a time (each reader has its own thread and state; the spool
// and its budget are shared), taken in the order given. Progress is the share of bytes read over
// all files. When a file fails the other readers stop, and that file's error is the one thrown.
std::vector<ImportedData> readFiles(const ImportRequest& request,
                                    const std::vector<const PlannedInput*>& readable,
                                    const std::vector<double>& weight, const Progress& progress,
                                    const std::shared_ptr<KernelSpool>& spool) {
  const size_t n = readable.size();
  double sum = 0;
  for (double w : weight)
    sum += w;
  std::vector<std::optional<ImportedData>> out(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<double> done(n, 0.0);
  std::mutex mutex;  // progress (the caller's callback is not reentrant) and `done`
  std::atomic<bool> stop{false};
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k = next++; k < n && !stop; k = next++) {
      const PlannedInput& p = *readable[k];
      const std::string label = fmt::format("reading {} ({}/{}, {})", p.path.filename().string(),
                                            k + 1, n, p.importer->name());
      const Progress sub([&, k](double f, std::string_view) {
        if (stop) return false;
        std::lock_guard lock(mutex);
        done[k] = f;
        double bytes = 0;
        for (size_t i = 0; i < n; ++i)
          bytes += weight[i] * done[i];
        progress.report(bytes / sum, label);
        return true;
      });
      try {
        sub.report(0.0);
        ImportOptions options = optionsFor(request, p);
        options.spool = spool;
        out[k] = readOne(p, options, sub);
        if (spool) spillTelemetry(*out[k], spool);
      } catch (...) {
        errors[k] = std::current_exception();
        stop = true;
      }
    }
  };
  const unsigned readers = readerCount(request.threads, n, request.memoryBudget);
  std::vector<std::thread> others;
  others.reserve(readers - 1);
  for (unsigned k = 1; k < readers; ++k) {
    try {
      others.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the readers started share the files
    }
  }
  work();
  for (std::thread& t : others)
    t.join();
  // The first error that is not the other reader stopping because of it.
  std::exception_ptr first;
  for (const std::exception_ptr& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const Cancelled&) {
      if (!first) first = e;
      continue;
    } catch (...) {
    }
    std::rethrow_exception(e);
  }
  if (first) std::rethrow_exception(first);
  std::vector<ImportedData> data;
  data.reserve(n);
  for (auto& d : out)
    data.push_back(std::move(*d));
  return data;
}
}  // namespace

unsigned readerCount(unsigned threads, size_t files, uint64_t budget) {
  uint64_t n = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  n = std::min<uint64_t>(n, files);
  if (budget > 0) n = std::min(n, budget / kReaderMemory);
  return static_cast<unsigned>(std::max<uint64_t>(n, 1));
}

ImportSummary ImportJob::run(const Progress& progress) {
  if (request_.inputs.empty() && request_.remote.empty())
    throw Error("nothing to import: no input given");
  if (request_.output.empty()) throw Error("no output file given");
  if (cancel_) throw Cancelled();
  const std::vector<PlannedInput> planned = plan();
  if (cancel_) throw Cancelled();

  // Never write over an input.
  for (const ImportInput& in : request_.inputs) {
    std::error_code ec;
    if (std::filesystem::exists(request_.output, ec) &&
        std::filesystem::equivalent(in.path, request_.output, ec))
      throw Error(fmt::format("{}: the output would overwrite an input", request_.output.string()));
  }

  // Inputs given as files must be readable; a folder's unreadable files are skipped (noted).
  std::vector<const PlannedInput*> readable;
  std::map<std::filesystem::path, std::vector<std::string>> skipped;
  std::map<std::filesystem::path, size_t> readableIn;
  for (const PlannedInput& p : planned) {
    const bool fromFolder = p.path != p.given;
    if (p.importer) {
      readable.push_back(&p);
      ++readableIn[p.given];
    } else if (!fromFolder) {
      throw Error(p.problem);
    } else {
      skipped[p.given].push_back(p.path.lexically_relative(p.given).string());
    }
  }
  for (const UtcOffset& u : request_.utcOffsets) {
    if (u.source.empty()) continue;
    bool used = false;
    for (const PlannedInput* p : readable)
      used = used || utcMatch(u, *p) > 0;
    if (!used) {
      std::string names;
      for (const PlannedInput* p : readable)
        names += (names.empty() ? "" : ", ") + p->path.filename().string() + " (" +
                 std::string(p->importer->name()) + ")";
      throw Error(fmt::format("--utc-offset {}={}: no input is named {} (inputs: {})", u.source,
                              offsetText(u.seconds), u.source, names));
    }
  }
  for (const ImportInput& in : request_.inputs)
    if (readableIn[in.path] == 0)
      throw Error(
          fmt::format("{}: no file in the folder is a format Wattline reads ({} files "
                      "looked at)",
                      in.path.string(), skipped[in.path].size()));

  // Progress: reading takes 80% (by file size), assembling and writing the rest.
  const Progress total([this, &progress](double f, std::string_view stage) {
    if (cancel_) return false;
    progress.report(f, stage);
    return true;
  });
  std::vector<double> weight;
  for (const PlannedInput* p : readable) {
    std::error_code ec;
    const double size = std::filesystem::is_regular_file(p->path, ec)
                            ? static_cast<double>(std::filesystem::file_size(p->path, ec))
                            : 1.0;
    weight.push_back(std::max(size, 1.0));
  }
  // One spool for the whole import: the budget covers every input together.
  std::shared_ptr<KernelSpool> spool;
  if (request_.memoryBudget > 0)
    spool =
        std::make_shared<KernelSpool>(request_.output, static_cast<size_t>(request_.memoryBudget));
  std::vector<ImportedData> data;
  // Remote sources weigh as much as all files together (or everything without files).
  const double remoteShare = request_.remote.empty() ? 0.0 : readable.empty() ? 1.0 : 0.5;
  for (size_t k = 0; k < request_.remote.size(); ++k) {
    const RemoteInput& r = request_.remote[k];
    const double n = static_cast<double>(request_.remote.size());
    const double from = 0.8 * remoteShare * static_cast<double>(k) / n;
    const double to = 0.8 * remoteShare * static_cast<double>(k + 1) / n;
    const std::string label = fmt::format("reading {}", r.label);
    total.report(from, label);
    data.push_back(r.read(Progress([&](double f, std::string_view stage) {
      total.report(from + (to - from) * f, stage.empty() ? std::string_view(label) : stage);
      return true;
    })));
    if (data.back().format.empty()) data.back().format = r.format;
    data.back().path = r.label;
  }
  const double fileFrom = 0.8 * remoteShare;
  std::vector<ImportedData> fromFiles =
      readFiles(request_, readable, weight, total.sub(fileFrom, 0.8), spool);
  data.insert(data.end(), std::make_move_iterator(fromFiles.begin()),
              std::make_move_iterator(fromFiles.end()));
  if (request_.options.start_ns && !data.empty() &&
      std::none_of(data.begin(), data.end(), [](const ImportedData& d) { return d.startTimeUsed; }))
    data.front().notes.push_back(
        {Severity::Warning, "start_time_unused", "--start-time",
         "no input has relative times (nvidia-smi dmon without a date, dcgmi dmon, ZeusMonitor "
         "windows on the monotonic clock): the start time was not used"});
  for (const auto& [folder, files] : skipped) {
    std::string list;
    for (size_t i = 0; i < files.size() && i < 5; ++i)
      list += (i ? ", " : "") + files[i];
    if (files.size() > 5) list += fmt::format(" and {} more", files.size() - 5);
    data.front().notes.push_back(
        {Severity::Info, "skipped_files", folder.filename().string(),
         fmt::format("{} files in the folder are not a format Wattline reads and were skipped: "
                     "{}",
                     files.size(), list)});
  }

  AssembleOptions assemble = request_.assemble;
  if (assemble.parametersJson.empty())
    assemble.parametersJson = importParametersJson(request_, readable, assemble);
  ImportSummary summary =
      assembleRun(std::move(data), assemble, request_.output, total.sub(0.8, 1.0));
  if (spool) summary.spillRuns = spool->runs(), summary.spillBytes = spool->bytesWritten();
  return summary;
}

UtcOffset parseUtcOffset(std::string_view text) {
  UtcOffset u;
  std::string_view value = text;
  // "SOURCE=+02:00"; a file name may hold '=', the offset never does.
  if (const size_t eq = text.rfind('='); eq != std::string_view::npos) {
    u.source = std::string(text.substr(0, eq));
    value = text.substr(eq + 1);
    if (u.source.empty())
      throw Error(
          fmt::format("--utc-offset \"{}\": nothing before '='; write SOURCE=+HH:MM or "
                      "+HH:MM",
                      text));
  }
  auto bad = [&] {
    return Error(
        fmt::format("--utc-offset \"{}\": expected an offset from UTC such as +02:00, "
                    "-05:30 or Z (optionally SOURCE= in front), found \"{}\"",
                    text, value));
  };
  std::string_view v = value;
  for (std::string_view prefix : {"UTC", "utc", "GMT", "gmt"})
    if (v.substr(0, prefix.size()) == prefix) v.remove_prefix(prefix.size());
  if (v.empty() || v == "Z" || v == "z" || v == "0") {
    if (value.empty()) throw bad();
    return u;
  }
  if (v.front() != '+' && v.front() != '-') throw bad();
  const int sign = v.front() == '-' ? -1 : 1;
  v.remove_prefix(1);
  std::string digits;
  size_t colon = std::string_view::npos;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == ':' && colon == std::string_view::npos) {
      colon = digits.size();
      continue;
    }
    if (v[i] < '0' || v[i] > '9') throw bad();
    digits += v[i];
  }
  int hours = 0, minutes = 0;
  if (colon != std::string_view::npos) {  // H:MM or HH:MM
    if (colon == 0 || colon > 2 || digits.size() - colon != 2) throw bad();
    hours = std::stoi(digits.substr(0, colon));
    minutes = std::stoi(digits.substr(colon));
  } else if (digits.size() <= 2 && !digits.empty()) {  // H or HH
    hours = std::stoi(digits);
  } else if (digits.size() == 4) {  // HHMM
    hours = std::stoi(digits.substr(0, 2));
    minutes = std::stoi(digits.substr(2));
  } else {
    throw bad();
  }
  // The form was right: say what is wrong with the value (it once blamed the form for +15:00).
  if (minutes >= 60)
    throw Error(fmt::format("--utc-offset \"{}\": the minutes of an offset are 00 to 59", text));
  if (hours * 60 + minutes > 14 * 60)
    throw Error(fmt::format(
        "--utc-offset \"{}\": the offset from UTC must lie between -14:00 and +14:00", text));
  u.seconds = sign * (hours * 3600 + minutes * 60);
  return u;
}

std::string formatList() {
  std::string out;
  for (bool telemetry : {false, true}) {
    out += telemetry ? "telemetry:\n" : "kernel traces:\n";
    size_t n = 0;
    for (const auto& i : importers())
      if (i->telemetry() == telemetry) {
        out += fmt::format("  {:<16} {}\n", i->name(), i->description());
        ++n;
      }
    if (n == 0) out += "  (none)\n";
  }
  return out;
}

int64_t parseStartTime(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Error(fmt::format("--start-time \"{}\": {}", text, why));
  };
  const std::string_view s = text::trim(text);
  const auto dt = text::parseDateTime(s);
  const bool emptyFraction = s.size() > 19 && (s[19] == '.' || s[19] == ',') &&
                             (s.size() == 20 || s[20] < '0' || s[20] > '9');
  if (!dt || s[4] != '-' || emptyFraction)
    throw bad(
        "expected an ISO 8601 time with its zone, such as 2026-11-27T17:44:13.6Z or "
        "2026-11-27T18:44:13+01:00");
  if (!dt->zone_offset_s)
    throw bad("the time has no zone; add Z (UTC) or the offset from UTC, such as +01:00");
  // The zone's minutes ("+HH:MM" or "+HHMM" at the end) and hours: within +-14:00.
  if (s.back() != 'Z') {
    std::string zone(s.substr(s.find_last_of("+-")));
    std::erase(zone, ':');
    const int minutes = zone.size() == 5 ? std::stoi(zone.substr(3)) : 0;
    if (minutes >= 60) throw bad("the minutes of an offset are 00 to 59");
    if (std::abs(*dt->zone_offset_s) > 14 * 3600)
      throw bad("the offset from UTC must lie between -14:00 and +14:00");
  }
  // parseDateTime accepts any day up to 31: check the month has it.
  const int y = std::stoi(std::string(s.substr(0, 4)));
  const int m = std::stoi(std::string(s.substr(5, 2)));
  const int d = std::stoi(std::string(s.substr(8, 2)));
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d > kDays[m - 1] + (m == 2 && leap ? 1 : 0))
    throw bad(fmt::format("{}-{:02} has no day {}", y, m, d));
  const int64_t ns = dt->wall_ns - *dt->zone_offset_s * text::kNsPerSecond;
  if (!inTimeRange(ns)) throw bad("the time is out of range");
  return ns;
}

}  // namespace wl::import
