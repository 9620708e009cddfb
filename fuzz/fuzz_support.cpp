// SPDX-License-Identifier: GPL-3.0-or-later
// In-memory files, the scratch folder and the import driver of the fuzz targets.
#include "fuzz_support.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>

#include "loaders/core/error.h"

namespace wl::fuzz {
namespace fs = std::filesystem;

MemFile::MemFile(std::string_view bytes, const char* name) {
  fd_ = ::memfd_create(name, MFD_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("memfd_create failed");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n <= 0) throw std::runtime_error("write to memfd failed");
    done += static_cast<size_t>(n);
  }
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemFile::~MemFile() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

fs::path makeScratch() {
  std::error_code ec;
  std::string base = fs::is_directory("/dev/shm", ec) ? "/dev/shm" : fs::temp_directory_path(ec);
  std::string tmpl = base + "/wattline-fuzz-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

void removeScratch();

const fs::path& scratchPath() {
  static const fs::path p = [] {
    fs::path d = makeScratch();
    std::atexit(removeScratch);
    return d;
  }();
  return p;
}

void removeScratch() {
  std::error_code ec;
  fs::remove_all(scratchPath(), ec);
}

}  // namespace

const fs::path& scratchDir() {
  return scratchPath();
}

void clearDir(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    fs::remove_all(e.path(), ec);
}

bool writeFile(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool written =
      bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && written;
}

namespace {
std::string g_lastError;
}

const std::string& lastError() {
  return g_lastError;
}

void clearLastError() {
  g_lastError.clear();
}

void noteError(const std::exception& e) {
  g_lastError = e.what();
}

import::InputProbe probeOf(const fs::path& path){try {return import::probeInput(path);
}  // namespace wl::fuzz
catch (const Error&) {
  return {};
}
}

import::ImportOptions optionsFor(std::string_view data){import::ImportOptions o;
o.dcgm_interval_ms = 100.0;
switch (data.size() % 16) {
  case 1:
    o.dcgm_interval_ms = 1e-9;
    break;
  case 2:
    o.dcgm_interval_ms = 1e300;
    break;
  case 3:
    o.start_ns = 1'700'000'000'000'000'000;
    o.utc_offset_s = 7200;
    break;
  default:
    break;
}
return o;
}

namespace {

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz: broken invariant of the imported data: %s\n", what.c_str());
  std::abort();
}

void checkTable(const TelemetryTable& t, const std::string& what) {
  for (const TelemetryColumn& c : t.columns)
    if (c.values.size() != t.t_ns.size())
      broken(what + ": column " + c.metric + " has " + std::to_string(c.values.size()) +
             " values for " + std::to_string(t.t_ns.size()) + " timestamps");
  if (!t.throttle_reasons.empty() && t.throttle_reasons.size() != t.t_ns.size())
    broken(what + ": throttle masks and timestamps differ in number");
}

}  // namespace

void checkImported(const import::ImportedData& d) {
  for (const import::ImportedGpu& g : d.gpus)
    checkTable(g.table, "GPU " + std::to_string(g.info.local_index));
  for (const import::ImportedNode& n : d.nodes)
    checkTable(n.table, "node " + std::to_string(n.node));
  for (const import::ImportedRank& r : d.ranks)
    for (const KernelTrack& t : r.tracks) {
      for (const KernelEvent& e : t.events) {
        if (e.dur_ns < 0) broken("a kernel event with a negative duration");
        if (e.name >= d.strings.size()) broken("a kernel name outside the string table");
      }
      for (const CollectiveInfo& c : t.collectives)
        if (c.event >= t.events.size()) broken("a collective of an event that does not exist");
    }
}

void importBytes(std::string_view importer, std::string_view data,
                 const import::ImportOptions& options) {
  const import::Importer* imp = import::findImporter(importer);
  if (!imp) std::abort();  // a target names an importer that does not exist
  MemFile file(data);
  const import::InputProbe probe = probeOf(file.path());
  (void)import::detectImporter(probe);
  try {
    checkImported(imp->read(file.path(), options, Progress{}));
  } catch (const Error& e) {
    noteError(e);
  } catch (const Cancelled& e) {
    noteError(e);
  }
}

}  // namespace wl::fuzz
