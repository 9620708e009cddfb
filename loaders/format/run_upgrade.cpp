// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/format/run_upgrade.h"

#include <fmt/format.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "loaders/core/error.h"
#include "loaders/core/temp_files.h"
#include "loaders/format/format_version.h"
#include "loaders/format/kernel_summary.h"
#include "loaders/format/run_file.h"
#include "loaders/h5/h5.h"

namespace wl {
namespace {

// Every track's partial, as RunWriter computes it while writing the track.
struct SummaryColumns {
  std::vector<uint32_t> name;
  std::vector<uint8_t> cls, kind;
  std::vector<uint64_t> count, offsets{0};
  std::vector<int64_t> total, min, max;
};

SummaryColumns summariesOf(const RunFile& run, const Progress& progress) {
  SummaryColumns c;
  const TimeRange range = summaryRange(run.info().start_ns, run.info().end_ns);
  const size_t n = run.tracks().size();
  for (size_t t = 0; t < n; ++t) {
    progress.report(static_cast<double>(t) / static_cast<double>(std::max<size_t>(n, 1)),
                    "kernel summaries");
    KernelNameTable table;
    table.add(
        run.readAllKernels(t, RunFile::kKernelName | RunFile::kKernelClass | RunFile::kKernelKind),
        range);
    for (const KernelNameSummary& r : table.rows()) {
      c.name.push_back(r.name);
      c.cls.push_back(static_cast<uint8_t>(r.cls));
      c.kind.push_back(static_cast<uint8_t>(r.kind));
      c.count.push_back(r.count);
      c.total.push_back(r.total_ns);
      c.min.push_back(r.min_ns);
      c.max.push_back(r.max_ns);
    }
    c.offsets.push_back(c.name.size());
  }
  return c;
}

void writeSummaries(hid_t file, const RunInfo& info, const SummaryColumns& c) {
  h5::Id g = h5::createGroup(file, "kernels/summary");
  const TimeRange r = summaryRange(info.start_ns, info.end_ns);
  h5::setAttr(g, "range_start_ns", r.t0);
  h5::setAttr(g, "range_end_ns", r.t1);
  const h5::Layout L;
  h5::write(g, "name", c.name, L);
  h5::write(g, "class", c.cls, L);
  h5::write(g, "kind", c.kind, L);
  h5::write(g, "count", c.count, L);
  h5::write(g, "total_ns", c.total, L);
  h5::write(g, "min_ns", c.min, L);
  h5::write(g, "max_ns", c.max, L);
  h5::write(g, "offsets", c.offsets, L);
}

// Version 1 has no /domains: the domains the reader derived, stored as RunWriter stores them.
void writeDomains(hid_t file, const RunFile& run) {
  const std::vector<PowerDomain>& D = run.domains();
  std::vector<int32_t> id, node, powerGpu;
  std::vector<std::string> kind, name;
  std::vector<float> limit;
  for (const PowerDomain& d : D) {
    id.push_back(d.id), node.push_back(d.node), powerGpu.push_back(d.power_gpu);
    kind.push_back(d.kind), name.push_back(d.name), limit.push_back(d.power_limit_w);
  }
  const h5::Layout L;
  h5::Id g = h5::createGroup(file, "domains");
  h5::write(g, "id", id, L);
  h5::writeStrings(g, "kind", kind, L);
  h5::writeStrings(g, "name", name, L);
  h5::write(g, "node", node, L);
  h5::write(g, "power_gpu", powerGpu, L);
  h5::write(g, "power_limit_w", limit, L);
  std::vector<int32_t> domainOf;
  for (const GpuInfo& gpu : run.gpus())
    domainOf.push_back(run.domainOf(gpu.id).id);
  h5::Id gpus = h5::openGroup(file, "gpus");
  h5::write(gpus, "domain", domainOf, L);
}

}  // namespace

UpgradeResult upgradeRun(const std::filesystem::path& input, const std::filesystem::path& output,
                         const Progress& progress) {
  std::error_code ec;
  if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(input, output, ec))
    throw Error(fmt::format("{}: the output is the input; upgrade writes a new file (-o OUT.h5)",
                            output.string()));
  const auto parent =
      output.parent_path().empty() ? std::filesystem::path(".") : output.parent_path();
  if (!std::filesystem::is_directory(parent, ec))
    throw Error(fmt::format("{}: the folder {} does not exist", output.string(), parent.string()));
  const auto run = RunFile::open(input);
  UpgradeResult res;
  res.from_version = run->formatVersion();
  res.to_version = format::kVersion;
  res.tracks = run->tracks().size();
  if (run->formatVersion() >= format::kVersion)
    throw Error(fmt::format("{}: already in run format version {}; nothing to upgrade",
                            input.string(), run->formatVersion()));
  const SummaryColumns sums = summariesOf(*run, progress.sub(0.0, 0.8));
  res.summary_rows = sums.name.size();

  progress.report(0.8, "copying");
  TempFile temp(output);
  if (!std::filesystem::copy_file(input, temp.path(),
                                  std::filesystem::copy_options::overwrite_existing, ec))
    throw Error(fmt::format("{}: cannot write a copy of {} ({})", output.string(), input.string(),
                            ec.message()));
  temp.lock();
  {
    std::lock_guard lock(h5::lock());
    h5::Id f = h5::openFileForUpdate(temp.path());
    progress.report(0.9, "writing kernel summaries");
    if (run->formatVersion() < 2) writeDomains(f, *run);
    writeSummaries(f, run->info(), sums);
    h5::setAttr(f, "format_version", format::kVersion);
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
      throw Error(fmt::format("{}: cannot flush ({})", temp.path().string(), h5::lastError()));
  }
  temp.commit(ec);
  if (ec)
    throw Error(fmt::format("{}: cannot move the upgraded run into place: {}", output.string(),
                            ec.message()));
  progress.report(1.0, "done");
  return res;
}

}  // namespace wl
