// SPDX-License-Identifier: GPL-3.0-or-later
#include "import_test_util.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "support/bad_input.h"
#include "support/run_process.h"

namespace wl::test {

std::filesystem::path testData(const std::string& rel) {
  return std::filesystem::path(WATTLINE_TEST_DATA) / rel;
}

const nlohmann::json& reference(const std::string& format, const std::filesystem::path& file) {
  static std::map<std::string, nlohmann::json> cache;
  const std::string key = format + "|" + file.string();
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const std::string script = std::string(WATTLINE_SOURCE_DIR) + "/tests/importers/reference.py";
  const ProcessResult r = runProcess("/usr/bin/python3", {script, format, file.string()});
  if (r.exitCode != 0) throw std::runtime_error("reference.py failed: " + r.err);
  return cache.emplace(key, nlohmann::json::parse(r.out)).first->second;
}

RankNumbers rankNumbers(const RunFile& run, int rank) {
  RankNumbers n;
  n.first_ns = INT64_MAX;
  n.last_ns = INT64_MIN;
  std::set<std::pair<int, int64_t>> streams;
  const auto& tracks = run.tracks();
  for (size_t t = 0; t < tracks.size(); ++t) {
    if (tracks[t].rank != rank) continue;
    streams.insert({tracks[t].device, tracks[t].stream});
    for (const KernelEvent& e : run.readAllKernels(t)) {
      if (e.kind == GpuEventKind::Kernel) ++n.kernels;
      if (e.kind == GpuEventKind::Memcpy) ++n.memcpy;
      if (e.kind == GpuEventKind::Memset) ++n.memset;
      if (e.cls == KernelClass::Communication) ++n.comm;
      n.first_ns = std::min(n.first_ns, e.start_ns);
      n.last_ns = std::max(n.last_ns, e.start_ns + e.dur_ns);
    }
  }
  n.streams = streams.size();
  for (const Iteration& it : run.iterations())
    if (it.rank == rank) ++n.iterations;
  return n;
}

import::ImportSummary importFiles(const std::vector<std::filesystem::path>& inputs,
                                  const std::filesystem::path& out, const std::string& format,
                                  const import::AssembleOptions& assemble){
    import::ImportRequest req;
for (const auto& p : inputs)
  req.inputs.push_back({p, {}});
req.output = out;
req.format = format;
req.assemble = assemble;
import::ImportJob job(std::move(req));
return job.run();
}  // namespace wl::test

std::string readFile(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path.string());
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

std::string readFileRaw(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string gzipBytes(const std::string& plain) {
  return gzipText(plain);
}

std::vector<std::string> leftovers(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".h5" || name.find(".tmp-") != std::string::npos)
      out.push_back(name);
  }
  return out;
}

}  // namespace wl::test
