// SPDX-License-Identifier: GPL-3.0-or-later
#include "importers_telemetry/telemetry_test_util.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>

#include "loaders/core/error.h"
#include "loaders/format/run_writer.h"

namespace wl::test {

int64_t utcNs(int y, int mo, int d, int h, int mi, int s) {
  std::tm tm{};
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
  tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm)) * 1'000'000'000;
}

import::ImportedData importWith(std::string_view format, const std::filesystem::path& path,
                                const import::ImportOptions& options){
    const import::Importer* imp = import::findImporter(format);
if (!imp) throw std::runtime_error("no importer " + std::string(format));
return imp->read(path, options, Progress{});
}  // namespace wl::test

std::string detectedFormat(const std::filesystem::path& path) {
  const import::Importer* imp = import::detectImporter(import::probeInput(path));
  return imp ? std::string(imp->name()) : std::string();
}

std::string errorMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

void writeText(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::vector<std::string> readLines(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return lines;
  std::string current;
  char buf[65536];
  while (gzgets(f, buf, sizeof buf)) {
    current += buf;
    if (!current.empty() && current.back() == '\n') {
      current.pop_back();
      if (!current.empty() && current.back() == '\r') current.pop_back();
      lines.push_back(current);
      current.clear();
    }
  }
  if (!current.empty()) lines.push_back(current);
  gzclose(f);
  return lines;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    const size_t k = s.find(sep, pos);
    out.push_back(s.substr(pos, k == std::string::npos ? std::string::npos : k - pos));
    if (k == std::string::npos) return out;
    pos = k + 1;
  }
}

const TelemetryColumn& column(const import::ImportedGpu& gpu, std::string_view metric) {
  const TelemetryColumn* c = gpu.table.column(metric);
  if (!c) {
    ADD_FAILURE() << "no column " << metric;
    static const TelemetryColumn empty;
    return empty;
  }
  return *c;
}

std::pair<double, double> finiteRange(const std::vector<double>& v) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double x : v)
    if (std::isfinite(x)) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  return {lo, hi};
}

size_t finiteCount(const std::vector<double>& v) {
  return static_cast<size_t>(
      std::count_if(v.begin(), v.end(), [](double x) { return std::isfinite(x); }));
}

const import::ImportedGpu* gpuByIndex(const import::ImportedData& d, int localIndex) {
  for (const auto& g : d.gpus)
    if (g.info.local_index == localIndex) return &g;
  return nullptr;
}

std::shared_ptr<const RunFile> writeRun(const import::ImportedData& data,
                                        const std::filesystem::path& out) {
  RunInfo info;
  info.name = "test";
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const auto& g : data.gpus)
    for (int64_t t : g.table.t_ns) {
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
  info.start_ns = lo;
  info.end_ns = hi > lo ? hi : lo + 1;
  info.sample_interval_s = data.sample_interval_s;
  std::vector<GpuInfo> gpus;
  for (size_t i = 0; i < data.gpus.size(); ++i) {
    GpuInfo g = data.gpus[i].info;
    g.id = static_cast<int>(i);
    gpus.push_back(g);
  }
  {
    RunWriter w(out, info, gpus, {});
    for (size_t i = 0; i < data.gpus.size(); ++i)
      w.addGpuTelemetry(static_cast<int>(i), data.gpus[i].table);
    for (const QualityNote& n : data.notes)
      w.addQualityNote(n);
    w.finish();
  }
  return RunFile::open(out);
}

const QualityNote* findNote(const std::vector<QualityNote>& notes, std::string_view code) {
  for (const QualityNote& n : notes)
    if (n.code == code) return &n;
  return nullptr;
}

bool hasNote(const std::vector<QualityNote>& notes, std::string_view code) {
  return findNote(notes, code) != nullptr;
}

}  // namespace wl::test
