// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The bad-input corpus of the importers (docs/robustness.md): for every importer the same kinds of
// damaged input (truncated, binary, wrong format, NaN/Inf, negative, non-monotonic, duplicated,
// huge numbers, empty, header only), each imported end to end the way `wattline import --format F`
// does, with the outcome the user sees asserted: a one-line wl::Error that names the file and
// says what was expected (and no output or temporary file left behind), or a run whose quality
// notes say what was repaired.

#include <string>
#include <string_view>
#include <vector>

#include "loaders/import/importer.h"

namespace wl::test {

// The kinds every importer is tested with.
inline const std::vector<std::string> kBadInputKinds = {
    "truncated",     "binary",     "wrong_format", "nan_inf", "negative",
    "non_monotonic", "duplicated", "huge_number",  "empty",   "header_only"};

struct BadInput {
  std::string importer;  // the importer name, as --format takes it
  std::string kind;      // one of kBadInputKinds
  std::string file;      // the file name written (a folder of files for CharLLM-PPT: see files)
  std::string bytes;
  // Expected outcome: either the import fails with a message containing `error` ...
  std::string error = {};
  // ... or it succeeds and the run has a quality note with code `note` (none if empty) whose
  // message contains `noteText`.
  std::string note = {}, noteText = {};
  // More files beside `file` (name, bytes), for folder inputs; `file` is then the folder.
  std::vector<std::pair<std::string, std::string>> files = {};
  import::ImportOptions options = {};
};

// Imports the case into a temporary folder and checks the outcome with gtest expectations.
void checkBadInput(const BadInput& c);
// Fails the test for every importer in `cases` that lacks a kind of kBadInputKinds.
void checkEveryKindIsCovered(const std::vector<BadInput>& cases);
// gtest parameter names: "nvidia_smi_csv_truncated".
std::string badInputName(const BadInput& c);
// Gzip bytes of a text (for truncated .gz inputs).
std::string gzipText(const std::string& plain);

}  // namespace wl::test
