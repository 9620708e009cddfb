// SPDX-License-Identifier: GPL-3.0-or-later
// Golden outputs of the bundled samples: `wattline analyze --json` and the figures `wattline
// export` draws of them (every timeline-type view, the comparison included, as SVG and PNG) are
// byte-identical to the SHA-256 pinned in tests/golden/samples.txt. A refactor that should change
// nothing keeps them; an intentional change regenerates them with scripts/update-golden.sh. A
// failing case leaves its output in the temp folder and names it.
#include <gtest/gtest.h>

#include <QCryptographicHash>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/read_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

struct GoldenCase {
  std::string sha256, name, args;
};

const std::string kManifest = WATTLINE_SOURCE_DIR "/tests/golden/samples.txt";

std::vector<GoldenCase> readManifest() {
  std::vector<GoldenCase> out;
  std::ifstream in(kManifest);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    GoldenCase c;
    ss >> c.sha256 >> c.name;
    std::getline(ss >> std::ws, c.args);
    out.push_back(c);
  }
  return out;
}

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream ss(s);
  std::vector<std::string> out;
  for (std::string w; ss >> w;)
    out.push_back(w);
  return out;
}

std::string sha256(const std::string& bytes) {
  return QCryptographicHash::hash(QByteArray::fromStdString(bytes), QCryptographicHash::Sha256)
      .toHex()
      .toStdString();
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, OutputOfTheBundledSamplesIsUnchanged) {
  const GoldenCase& c = GetParam();
  test::TempDir dir;
  const std::string file = (dir.path() / c.name).string();
  const bool toFile = c.args.find("{OUT}") != std::string::npos;
  std::string args = replaceAll(c.args, "{S}", WATTLINE_SOURCE_DIR "/resources/samples");
  args = replaceAll(args, "{OUT}", file);
  const test::ProcessResult r = test::runWattline(words(args));
  ASSERT_EQ(r.exitCode, 0) << c.args << "\n" << r.err;
  const std::string bytes = toFile ? test::readFile(file) : r.out;
  ASSERT_FALSE(bytes.empty()) << c.args;
  const std::string got = sha256(bytes);
  if (got == c.sha256) return;
  // Keep the output for a look (and a diff against the previous one).
  const auto kept = std::filesystem::temp_directory_path() / ("wattline-golden-" + c.name);
  std::ofstream(kept, std::ios::binary) << bytes;
  ADD_FAILURE() << c.name << ": SHA-256 " << got << ", pinned " << c.sha256 << "\n  wattline "
                << c.args << "\n  output kept in " << kept.string()
                << "\n  if the change is intended: scripts/update-golden.sh, then look at "
                   "build/golden/ and commit tests/golden/samples.txt";
}

INSTANTIATE_TEST_SUITE_P(Samples, Golden, ::testing::ValuesIn(readManifest()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(GoldenManifest, ListsTheSamplesAndEveryTimelineView) {
  const std::vector<GoldenCase> cases = readManifest();
  ASSERT_GE(cases.size(), 10u) << kManifest;
  bool timeline = false, heatmap = false, compare = false;
  for (const GoldenCase& c : cases) {
    EXPECT_EQ(c.sha256.size(), 64u) << c.name << ": run scripts/update-golden.sh";
    timeline = timeline || c.args.find("--view timeline") != std::string::npos;
    heatmap = heatmap || c.args.find("--view heatmap") != std::string::npos;
    compare = compare || c.args.find("--view compare") != std::string::npos;
  }
  EXPECT_TRUE(timeline && heatmap && compare);
}

}  // namespace
}  // namespace wl
