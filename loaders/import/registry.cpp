// SPDX-License-Identifier: GPL-3.0-or-later
// The one table of importers, and content-based detection.
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>

#include "loaders/core/error.h"
#include "loaders/import/importer.h"
#include "loaders/import/kineto_importer.h"
#include "loaders/import/nsys_importer.h"
#include "loaders/import/rocprof_csv_importer.h"
#include "loaders/import/rocprofv3_importer.h"
#include "loaders/import/telemetry/telemetry_importers.h"

namespace wl::import {
namespace {

constexpr size_t kHeadBytes = 64 * 1024;
constexpr size_t kMaxEntries = 100000;
constexpr int kMaxDepth = 6;

std::vector<std::unique_ptr<Importer>> makeImporters() {
  std::vector<std::unique_ptr<Importer>> list;
  // Kernel traces.
  list.push_back(makeKinetoImporter());
  list.push_back(makeRocprofV3Importer());
  list.push_back(makeRocprofCsvImporter());
  list.push_back(makeNsysImporter());
  // Telemetry.
  list.push_back(makeNvidiaSmiCsvImporter());
  list.push_back(makeNvidiaSmiDmonImporter());
  list.push_back(makeDcgmDmonImporter());
  list.push_back(makeDcgmCsvImporter());
  list.push_back(makeAmdSmiCsvImporter());
  list.push_back(makeZeusMonitorImporter());
  list.push_back(makeZeusWindowsImporter());
  list.push_back(makeCharLlmImporter());
  return list;
}

std::string gunzipHead(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return {};
  std::string out(kHeadBytes, '\0');
  const int n = gzread(f, out.data(), static_cast<unsigned>(out.size()));
  gzclose(f);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

}  // namespace

InputProbe probeInput(const std::filesystem::path& path) {
  InputProbe p;
  p.path = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(fmt::format("{}: no such file or folder", path.string()));
  if (std::filesystem::is_directory(path, ec)) {
    p.isDirectory = true;
    std::filesystem::recursive_directory_iterator it(
        path, std::filesystem::directory_options::skip_permission_denied, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot list the folder ({})", path.string(), ec.message()));
    for (; it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
      if (it->is_regular_file(ec))
        p.entries.push_back(std::filesystem::relative(it->path(), path, ec));
      if (p.entries.size() >= kMaxEntries) break;
    }
    std::sort(p.entries.begin(), p.entries.end());
    return p;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot be read (permission denied?)", path.string()));
  std::string head(kHeadBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    p.gzip = true;
    p.head = gunzipHead(path);
  } else {
    p.head = std::move(head);
  }
  return p;
}

const std::vector<std::unique_ptr<Importer>>& importers() {
  static const std::vector<std::unique_ptr<Importer>> list = makeImporters();
  return list;
}

const Importer* findImporter(std::string_view name) {
  for (const auto& i : importers())
    if (i->name() == name) return i.get();
  return nullptr;
}

const Importer* detectImporter(const InputProbe& probe) {
  const Importer* best = nullptr;
  int bestScore = 0;
  for (const auto& i : importers()) {
    const int s = i->detect(probe);
    if (s > bestScore) {
      best = i.get();
      bestScore = s;
    }
  }
  return best;
}

}  // namespace wl::import
