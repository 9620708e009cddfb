// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Notes pinned to the timeline: a time range of a run, optionally some of its GPUs and ranks, and
// a line of text ("Power cap hit after the checkpoint"). They are the user's, not the run's: they
// live in a sidecar file beside the run (RUN.h5.notes.json, docs/format.md#notes-sidecar-files),
// written to a temporary name and renamed, so the run's HDF5 file is never rewritten; view files
// carry them too (docs/format.md#view-files, "notes").
//
// Times are ns relative to the run's start_ns (like view files): far below 2^53, so a JSON reader
// that reads numbers as doubles reads them exactly, and a note does not depend on the epoch.
//
// Reading never trusts the file: a wrong type, a missing member or an unknown version is a
// wl::Error "FILE: $.notes[1].range_ns: expected ..., got ...". Members not listed in the spec are
// ignored. Qt-free: the GUI (app/gui/notes_controller.h) and `wattline analyze` share this code.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "loaders/core/time_range.h"
#include "loaders/format/run_file.h"

namespace wl {

inline constexpr const char* kNotesFormat = "wattline-notes";
inline constexpr int kNotesVersion = 1;

struct Note {
  int64_t start_ns = 0, end_ns = 0;  // [start, end), relative to the run's start_ns
  std::vector<int> gpus;             // GPU ids; empty: every GPU
  std::vector<int> ranks;            // ranks; empty: every rank
  std::string text;
  bool operator==(const Note&) const = default;
};

// The note's range on the run's clock (absolute ns).
TimeRange noteRange(const Note& note, int64_t runStart);

// One note as a JSON object {"range_ns": [s, e], "gpus": [...], "ranks": [...], "text": "..."},
// and back: `where` is its JSON path in errors ("$.notes[2]"), `source` the file.
nlohmann::json noteToJson(const Note& note);
Note noteFromJson(const nlohmann::json& j, const std::string& source, const std::string& where);

// The sidecar's path: the run's path with ".notes.json" appended (run.h5 -> run.h5.notes.json).
std::string notesSidecarPath(const std::string& runPath);
// The sidecar's text (indented JSON), and its parse; `source` names the file in errors.
std::string notesFileText(const std::vector<Note>& notes);
std::vector<Note> notesFromText(const std::string& text, const std::string& source);
// The notes of a run: none when it has no sidecar; wl::Error naming the sidecar when it is not
// readable or not a notes file (the run itself opens regardless: callers show the message).
std::vector<Note> readNotes(const std::string& runPath);
// Writes the run's sidecar through a temporary file in the same folder and a rename (wl::Error
// naming the file on failure). The run's file is not touched.
void writeNotes(const std::string& runPath, const std::vector<Note>& notes);

// Each note with the numbers of its range: "analysis" holds the range analysed (absolute ns) and
// the "totals" and "gpus" that `wattline analyze --json --range S:E --gpus G --ranks R` prints
// (analyzeRun over the same scope), or "error" when the run cannot analyse it (a GPU id the run
// does not have, a range outside it). "selection" holds the numbers the window's Selection dock
// shows for the note's range (summarizeRange, range_summary.h).
nlohmann::json notesAnalysisJson(const RunFile& run, const std::vector<Note>& notes,
                                 const AnalysisOptions& options = {});

// "0,2-4" <-> {0, 2, 3, 4}; parsing returns nullopt for anything else ("" is the empty list).
std::string formatIdList(const std::vector<int>& ids);
std::optional<std::vector<int>> parseIdList(const std::string& text);

}  // namespace wl
