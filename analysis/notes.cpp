// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/notes.h"

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/analysis_json.h"
#include "analysis/range_summary.h"
#include "analysis/run_analysis.h"
#include "loaders/core/error.h"

namespace wl {
namespace {

using nlohmann::json;

// What a value is, for "got ...": short JSON text (strings quoted), at most 40 characters.
std::string got(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

[[noreturn]] void fail(const std::string& source, const std::string& where,
                       const std::string& expected, const json& value) {
  throw Error(fmt::format("{}: {}: expected {}, got {}", source, where, expected, got(value)));
}

std::vector<int> idsFromJson(const json& j, const std::string& source, const std::string& where) {
  if (!j.is_array()) fail(source, where, "an array of ids (integers >= 0)", j);
  std::vector<int> ids;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& v = j[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1'000'000)
      fail(source, fmt::format("{}[{}]", where, i), "an id (an integer >= 0)", v);
    ids.push_back(v.get<int>());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

TimeRange noteRange(const Note& note, int64_t runStart) {
  return {runStart + note.start_ns, runStart + note.end_ns};
}

json noteToJson(const Note& n) {
  return {
      {"range_ns", {n.start_ns, n.end_ns}}, {"gpus", n.gpus}, {"ranks", n.ranks}, {"text", n.text}};
}

Note noteFromJson(const json& j, const std::string& source, const std::string& where) {
  if (!j.is_object()) fail(source, where, "an object", j);
  Note n;
  const auto r = j.find("range_ns");
  if (r == j.end()) fail(source, where + ".range_ns", "[start, end] in ns", json());
  if (!r->is_array() || r->size() != 2 || !(*r)[0].is_number_integer() ||
      !(*r)[1].is_number_integer())
    fail(source, where + ".range_ns", "[start, end] in ns (two integers)", *r);
  // Relative times stay far below 2^53 (exact as doubles); larger ones would overflow when added
  // to the run's start.
  constexpr int64_t kLimit = int64_t{1} << 53;
  for (const json& t : *r)
    if (!t.is_number_integer() || (t.is_number_unsigned() && t.get<uint64_t>() > kLimit) ||
        t.get<int64_t>() > kLimit || t.get<int64_t>() < -kLimit)
      fail(source, where + ".range_ns", "[start, end] in ns (two integers within ±2^53)", *r);
  n.start_ns = (*r)[0].get<int64_t>();
  n.end_ns = (*r)[1].get<int64_t>();
  if (n.end_ns <= n.start_ns) fail(source, where + ".range_ns", "start < end", *r);
  if (const auto g = j.find("gpus"); g != j.end())
    n.gpus = idsFromJson(*g, source, where + ".gpus");
  if (const auto k = j.find("ranks"); k != j.end())
    n.ranks = idsFromJson(*k, source, where + ".ranks");
  const auto t = j.find("text");
  if (t == j.end() || !t->is_string())
    fail(source, where + ".text", "a string", t == j.end() ? json() : *t);
  n.text = t->get<std::string>();
  return n;
}

std::string notesSidecarPath(const std::string& runPath) {
  return runPath + ".notes.json";
}

std::string notesFileText(const std::vector<Note>& notes) {
  json list = json::array();
  for (const Note& n : notes)
    list.push_back(noteToJson(n));
  const json j = {{"format", kNotesFormat}, {"version", kNotesVersion}, {"notes", list}};
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::vector<Note> notesFromText(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(fmt::format("{}: $: not JSON (at byte {})", source, e.byte));
  }
  if (!j.is_object()) fail(source, "$", "an object", j);
  const auto f = j.find("format");
  if (f == j.end() || *f != kNotesFormat)
    fail(source, "$.format", fmt::format("\"{}\"", kNotesFormat), f == j.end() ? json() : *f);
  const auto v = j.find("version");
  if (v == j.end() || !v->is_number_integer() || v->get<int64_t>() < 1 ||
      v->get<int64_t>() > kNotesVersion)
    fail(source, "$.version", fmt::format("a version this Wattline reads (1 to {})", kNotesVersion),
         v == j.end() ? json() : *v);
  const auto list = j.find("notes");
  if (list == j.end() || !list->is_array())
    fail(source, "$.notes", "an array of notes", list == j.end() ? json() : *list);
  std::vector<Note> notes;
  for (size_t i = 0; i < list->size(); ++i)
    notes.push_back(noteFromJson((*list)[i], source, fmt::format("$.notes[{}]", i)));
  return notes;
}

std::vector<Note> readNotes(const std::string& runPath) {
  const std::string path = notesSidecarPath(runPath);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof())
    throw Error(fmt::format("{}: cannot be read ({})", path, std::strerror(errno)));
  return notesFromText(text.str(), path);
}

void writeNotes(const std::string& runPath, const std::vector<Note>& notes) {
  const std::string path = notesSidecarPath(runPath);
  const std::string tmp = fmt::format("{}.tmp-{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << notesFileText(notes);
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp);
      throw Error(fmt::format("{}: cannot be written ({})", path, std::strerror(errno)));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw Error(fmt::format("{}: cannot be written ({})", path, ec.message()));
  }
}

json notesAnalysisJson(const RunFile& run, const std::vector<Note>& notes,
                       const AnalysisOptions& options) {
  json out = json::array();
  const int64_t start = run.info().start_ns;
  for (const Note& n : notes) {
    json j = noteToJson(n);
    try {
      AnalysisScope scope;
      scope.range = rangeInsideRun(run, noteRange(n, start));
      scope.gpus = n.gpus;
      scope.ranks = n.ranks;
      // The whole report, as `analyze --json --range` prints it, of which a note keeps the totals
      // and the GPUs: one function computes both, so they are the same numbers.
      const json report = toJson(analyzeRun(run, scope, options));
      j["analysis"] = {{"start_ns", scope.range.t0},
                       {"end_ns", scope.range.t1},
                       {"totals", report.at("totals")},
                       {"gpus", report.at("gpus")}};
      // What the window's Selection dock shows when the note is clicked (its range selected).
      j["selection"] =
          toJson(summarizeRange(run, scope.range.t0, scope.range.t1, scopeGpus(run, scope),
                                scopeRanks(run, scope), options));
    } catch (const Error& e) {
      j["error"] = e.what();
    }
    out.push_back(j);
  }
  return out;
}

std::string formatIdList(const std::vector<int>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size();) {
    size_t k = i;
    while (k + 1 < ids.size() && ids[k + 1] == ids[k] + 1)
      ++k;
    s += (s.empty() ? "" : ",") +
         (k > i + 1 ? fmt::format("{}-{}", ids[i], ids[k]) : std::to_string(ids[i]));
    if (k == i + 1) s += "," + std::to_string(ids[k]);
    i = k + 1;
  }
  return s;
}

std::optional<std::vector<int>> parseIdList(const std::string& text) {
  std::vector<int> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item.empty()) continue;
    int a = 0, b = 0;
    char dash = 0, extra = 0;
    std::istringstream one(item);
    if (one >> a && !(one >> dash)) {
      b = a;
    } else {
      std::istringstream two(item);
      if (!(two >> a >> dash >> b) || dash != '-' || two >> extra) return std::nullopt;
    }
    if (a < 0 || b < a || b - a > 100'000) return std::nullopt;
    for (int i = a; i <= b; ++i)
      ids.push_back(i);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace wl
