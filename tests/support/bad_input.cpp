// SPDX-License-Identifier: GPL-3.0-or-later
// Runs one bad-input case end to end (bad_input.h).
#include "support/bad_input.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "loaders/core/error.h"
#include "loaders/format/run_file.h"
#include "loaders/import/import_job.h"
#include "support/temp_dir.h"

namespace wl::test {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

}  // namespace

std::string gzipText(const std::string& plain) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, plain.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
  zs.avail_in = static_cast<uInt>(plain.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

void checkBadInput(const BadInput& c) {
  TempDir dir;
  const fs::path input = dir / c.file;
  if (c.files.empty()) {
    write(input, c.bytes);
  } else {
    fs::create_directories(input);
    for (const auto& [name, bytes] : c.files)
      write(input / name, bytes);
  }
  const fs::path out = dir / "out" / "run.h5";
  fs::create_directories(out.parent_path());
  import::ImportRequest req;
  req.inputs.push_back({input, c.importer});
  req.output = out;
  req.options = c.options;
  std::string error;
  try {
    import::ImportJob job(req);
    job.run();
  } catch (const Error& e) {
    error = e.what();
  }
  if (!c.error.empty()) {
    ASSERT_FALSE(error.empty()) << "the import succeeded; expected an error containing \""
                                << c.error << "\"";
    EXPECT_NE(error.find(c.error), std::string::npos) << "message: " << error;
    EXPECT_NE(error.find(input.filename().string()), std::string::npos)
        << "the message names the file: " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "one line: " << error;
    for (const auto& e : fs::directory_iterator(out.parent_path()))
      ADD_FAILURE() << "left behind: " << e.path().filename();
    return;
  }
  ASSERT_TRUE(error.empty()) << "expected a run" << (c.note.empty() ? "" : " with note ") << c.note
                             << ", got: " << error;
  const auto run = RunFile::open(out);
  if (c.note.empty()) return;
  std::string codes;
  for (const QualityNote& n : run->quality()) {
    codes += " " + n.code;
    if (n.code != c.note) continue;
    EXPECT_NE(n.message.find(c.noteText), std::string::npos) << c.note << ": " << n.message;
    return;
  }
  ADD_FAILURE() << "no quality note " << c.note << " (notes:" << codes << ")";
}

void checkEveryKindIsCovered(const std::vector<BadInput>& cases) {
  std::map<std::string, std::set<std::string>> kinds;
  for (const BadInput& c : cases)
    kinds[c.importer].insert(c.kind);
  for (const auto& [importer, have] : kinds)
    for (const std::string& k : kBadInputKinds)
      EXPECT_TRUE(have.count(k)) << importer << " has no '" << k << "' case";
}

std::string badInputName(const BadInput& c) {
  std::string n = c.importer + "_" + c.kind;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

}  // namespace wl::test
