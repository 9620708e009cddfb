// SPDX-License-Identifier: GPL-3.0-or-later
// Notes pinned to the timeline (analysis/notes.h): the sidecar round trip, that writing it leaves
// the run's file as it was, the id lists of the note dialog, and a table of bad sidecar files,
// each with the message that names the file and the JSON path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "analysis/notes.h"
#include "analysis_test_util.h"
#include "loaders/core/error.h"
#include "support/read_file.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

void spit(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::vector<Note> twoNotes() {
  return {Note{20 * test::kSec, 30 * test::kSec, {}, {}, "all GPUs: checkpoint"},
          Note{15 * test::kSec, 45 * test::kSec, {1, 3}, {0}, "GPU 1 \"capped\" — ünïcode"}};
}

TEST(NotesSidecar, WriteThenReadGivesTheSameNotes) {
  test::TempDir dir;
  const std::string run = (dir / "run.h5").string();
  spit(run, "not really a run, but its bytes must not change");
  const std::string before = test::readFile(run);
  EXPECT_TRUE(readNotes(run).empty());  // no sidecar: no notes
  writeNotes(run, twoNotes());
  EXPECT_EQ(notesSidecarPath(run), run + ".notes.json");
  EXPECT_EQ(readNotes(run), twoNotes());
  EXPECT_EQ(test::readFile(run), before);
  // Rewritten in place through a rename: no temporary file is left beside it.
  writeNotes(run, {twoNotes()[1]});
  EXPECT_EQ(readNotes(run), std::vector<Note>{twoNotes()[1]});
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path()))
    ++files;
  EXPECT_EQ(files, 2);
}

TEST(NotesSidecar, FileIsTheDocumentedJson) {
  const auto j = nlohmann::json::parse(notesFileText(twoNotes()));
  EXPECT_EQ(j["format"], "wattline-notes");
  EXPECT_EQ(j["version"], 1);
  ASSERT_EQ(j["notes"].size(), 2u);
  EXPECT_EQ(j["notes"][1]["range_ns"], nlohmann::json({15'000'000'000, 45'000'000'000}));
  EXPECT_EQ(j["notes"][1]["gpus"], nlohmann::json({1, 3}));
  EXPECT_EQ(j["notes"][1]["ranks"], nlohmann::json({0}));
  EXPECT_EQ(j["notes"][0]["text"], "all GPUs: checkpoint");
}

TEST(NotesSidecar, UnknownMembersAndMissingListsAreAccepted) {
  const auto notes = notesFromText(
      R"({"format": "wattline-notes", "version": 1, "later": true,
          "notes": [{"range_ns": [1, 2], "text": "x", "colour": "red"}]})",
      "f.json");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], (Note{1, 2, {}, {}, "x"}));
}

struct BadSidecar {
  const char* name;
  const char* text;
  const char* message;
};

TEST(NotesSidecar, BadFilesAreNamedWithTheirJsonPath) {
  const std::string head = R"({"format": "wattline-notes", "version": 1, "notes": )";
  const std::vector<BadSidecar> table = {
      {"truncated", R"({"format": "wattline-notes", )", "n.json: $: not JSON (at byte 30)"},
      {"empty", "", "n.json: $: not JSON (at byte 1)"},
      {"array", " []", "n.json: $: expected an object, got []"},
      {"format", R"({"format": "x", "version": 1, "notes": []})",
       R"(n.json: $.format: expected "wattline-notes", got "x")"},
      {"no format", R"({"version": 1, "notes": []})",
       R"(n.json: $.format: expected "wattline-notes", got null)"},
      {"newer", R"({"format": "wattline-notes", "version": 2, "notes": []})",
       "n.json: $.version: expected a version this Wattline reads (1 to 1), got 2"},
      {"no notes", R"({"format": "wattline-notes", "version": 1})",
       "n.json: $.notes: expected an array of notes, got null"},
      {"note not object", "[3]}", "n.json: $.notes[0]: expected an object, got 3"},
      {"no range", R"([{"text": "x"}]})",
       "n.json: $.notes[0].range_ns: expected [start, end] in ns, got null"},
      {"range of one", R"([{"range_ns": [5], "text": "x"}]})",
       "n.json: $.notes[0].range_ns: expected [start, end] in ns (two integers), got [5]"},
      {"range of text", R"([{"range_ns": ["1s", "2s"], "text": "x"}]})",
       R"(n.json: $.notes[0].range_ns: expected [start, end] in ns (two integers), got ["1s","2s"])"},
      {"range too far", R"([{"range_ns": [0, 9223372036854775807], "text": "x"}]})",
       "n.json: $.notes[0].range_ns: expected [start, end] in ns (two integers within ±2^53), got "
       "[0,9223372036854775807]"},
      {"range reversed",
       R"([{"range_ns": [1, 2], "text": "a"}, {"range_ns": [5, 2], "text": "x"}]})",
       "n.json: $.notes[1].range_ns: expected start < end, got [5,2]"},
      {"negative gpu", R"([{"range_ns": [1, 2], "gpus": [0, -1], "text": "x"}]})",
       "n.json: $.notes[0].gpus[1]: expected an id (an integer >= 0), got -1"},
      {"ranks not list", R"([{"range_ns": [1, 2], "ranks": 3, "text": "x"}]})",
       "n.json: $.notes[0].ranks: expected an array of ids (integers >= 0), got 3"},
      {"no text", R"([{"range_ns": [1, 2]}]})",
       "n.json: $.notes[0].text: expected a string, got null"},
      {"text number", R"([{"range_ns": [1, 2], "text": 7}]})",
       "n.json: $.notes[0].text: expected a string, got 7"},
  };
  for (const BadSidecar& b : table) {
    std::string text = b.text;
    if (text.starts_with("[")) text = head + text;
    try {
      notesFromText(text, "n.json");
      ADD_FAILURE() << b.name << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), b.message) << b.name;
    }
  }
}

TEST(NotesSidecar, ReadingABadFileNamesTheSidecar) {
  test::TempDir dir;
  const std::string run = (dir / "run.h5").string();
  spit(run + ".notes.json", R"({"format": "wattline-notes", "version": 1, "notes": {}})");
  try {
    readNotes(run);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              run + ".notes.json: $.notes: expected an array of notes, got {}");
  }
}

TEST(NoteIdLists, FormatAndParseAreInverse) {
  EXPECT_EQ(formatIdList({}), "");
  EXPECT_EQ(formatIdList({3}), "3");
  EXPECT_EQ(formatIdList({0, 1}), "0,1");
  EXPECT_EQ(formatIdList({0, 2, 3, 4, 7, 8}), "0,2-4,7,8");
  EXPECT_EQ(parseIdList("0, 2-4 ,7,8"), (std::vector<int>{0, 2, 3, 4, 7, 8}));
  EXPECT_EQ(parseIdList(""), std::vector<int>{});
  EXPECT_EQ(parseIdList("4,1,1"), (std::vector<int>{1, 4}));
  for (const char* bad : {"x", "-1", "3-1", "2x", "1-", "1-2-3"})
    EXPECT_FALSE(parseIdList(bad)) << bad;
}

}  // namespace
}  // namespace wl
