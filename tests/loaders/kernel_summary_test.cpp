// SPDX-License-Identifier: GPL-3.0-or-later
// Stored kernel summaries (/kernels/summary, format version 3): the per-track partial against a
// by-hand reference, what RunWriter and `wattline upgrade` store against the events in the file,
// and damaged summaries named in one message.
#include <gtest/gtest.h>

#include <hdf5.h>

#include <fstream>
#include <map>
#include <sstream>

#include "loaders/core/error.h"
#include "loaders/format/format_version.h"
#include "loaders/format/kernel_summary.h"
#include "loaders/format/run_file.h"
#include "loaders/format/run_upgrade.h"
#include "loaders/format/run_writer.h"
#include "loaders/h5/h5.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string bytesOf(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The per-name table of events starting in `range`, by a plain map (the reference).
std::vector<KernelNameSummary> reference(const std::vector<KernelEvent>& events, TimeRange range) {
  std::map<uint32_t, KernelNameSummary> m;
  for (const KernelEvent& e : events) {
    if (e.start_ns < range.t0 || e.start_ns >= range.t1) continue;
    const int64_t d = e.dur_ns < 0 ? 0 : e.dur_ns;
    auto [it, fresh] = m.try_emplace(e.name);
    KernelNameSummary& r = it->second;
    if (fresh) r = {e.name, e.cls, e.kind, 0, 0, d, d};
    r.count += 1;
    r.total_ns += d;
    r.min_ns = d < r.min_ns ? d : r.min_ns;
    r.max_ns = d > r.max_ns ? d : r.max_ns;
  }
  std::vector<KernelNameSummary> out;
  for (const auto& [name, r] : m)
    out.push_back(r);
  return out;
}

TEST(KernelSummary, PartialOfATrackByHand) {
  const std::vector<KernelEvent> ev = {
      {100, 10, 2, KernelClass::Compute, GpuEventKind::Kernel, -1},
      {120, -5, 2, KernelClass::Memory, GpuEventKind::Memcpy, -1},  // negative: counts as 0
      {130, 30, 1, KernelClass::Communication, GpuEventKind::Kernel, -1},
      {140, 20, 2, KernelClass::Compute, GpuEventKind::Kernel, -1},
      {200, 99, 1, KernelClass::Communication, GpuEventKind::Kernel, -1},  // outside [0, 200)
  };
  KernelNameTable t;
  t.add(ev, {0, 200});
  const std::vector<KernelNameSummary> want = {
      {1, KernelClass::Communication, GpuEventKind::Kernel, 1, 30, 30, 30},
      // the class and kind of the name's first event
      {2, KernelClass::Compute, GpuEventKind::Kernel, 3, 30, 0, 20},
  };
  EXPECT_EQ(t.rows(), want);
  EXPECT_EQ(t.events(), 4u);
  // Combined from chunks, or from stored rows, it is the same table.
  KernelNameTable a, b, c;
  a.add(std::span(ev).first(2), {0, 200});
  b.add(std::span(ev).subspan(2), {0, 200});
  a.merge(b);
  EXPECT_EQ(a.rows(), want);
  c.addRows(t.rows());
  EXPECT_EQ(c.rows(), want);
  EXPECT_EQ(c.events(), 4u);
}

class KernelSummaryFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, bool summaries) {
    WriteOptions o;
    o.kernel_summaries = summaries;
    test::writeSyntheticRun(src, dir / name, o);
    return dir / name;
  }
  // Every track's stored rows equal the reference computed from the events read back.
  void expectRowsMatchEvents(const RunFile& run) {
    ASSERT_TRUE(run.hasKernelSummary());
    const TimeRange range = summaryRange(run.info().start_ns, run.info().end_ns);
    for (size_t t = 0; t < run.tracks().size(); ++t)
      EXPECT_EQ(run.kernelSummary(t), reference(run.readAllKernels(t), range)) << t;
  }
  test::TempDir dir;
  test::SyntheticRun src = test::makeSyntheticRun(2, 10.0, 300);
};

TEST_F(KernelSummaryFile, WriterStoresEachTracksPartial) {
  const auto run = RunFile::open(write("with.h5", true));
  EXPECT_EQ(run->formatVersion(), 3);
  EXPECT_EQ(format::kVersion, 3);
  ASSERT_GE(run->tracks().size(), 2u);
  expectRowsMatchEvents(*run);
  const auto old = RunFile::open(write("without.h5", false));
  EXPECT_EQ(old->formatVersion(), 2);
  EXPECT_FALSE(old->hasKernelSummary());
}

TEST_F(KernelSummaryFile, UpgradeAddsTheWritersRowsAndLeavesTheInput) {
  const auto in = write("v2.h5", false);
  const std::string before = bytesOf(in);
  const UpgradeResult r = upgradeRun(in, dir / "v3.h5");
  EXPECT_EQ(bytesOf(in), before);
  EXPECT_EQ(r.from_version, 2);
  EXPECT_EQ(r.to_version, 3);
  const auto up = RunFile::open(dir / "v3.h5");
  const auto direct = RunFile::open(write("direct.h5", true));
  EXPECT_EQ(up->formatVersion(), 3);
  ASSERT_EQ(up->tracks().size(), direct->tracks().size());
  for (size_t t = 0; t < up->tracks().size(); ++t)
    EXPECT_EQ(up->kernelSummary(t), direct->kernelSummary(t)) << t;
  expectRowsMatchEvents(*up);
  // Nothing to do on a current file; never onto the input; no file left by a refusal.
  EXPECT_NE(errorOf([&] {
              upgradeRun(dir / "v3.h5", dir / "again.h5");
            }).find("already in run format version 3"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "again.h5"));
  EXPECT_NE(errorOf([&] { upgradeRun(in, in); }).find("the output is the input"),
            std::string::npos);
  EXPECT_EQ(bytesOf(in), before);
  EXPECT_NE(errorOf([&] { upgradeRun(dir / "missing.h5", dir / "x.h5"); }).find("no such file"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { upgradeRun(in, dir / "no" / "x.h5"); }).find("does not exist"),
            std::string::npos);
}

TEST_F(KernelSummaryFile, UpgradeFromVersion1StoresTheDomainsTheReaderDerives) {
  const auto in = write("v1.h5", false);
  {
    // What version 1 wrote: no /domains, no /gpus/domain.
    std::lock_guard lock(h5::lock());
    h5::Id f = h5::openFileForUpdate(in);
    ASSERT_GE(H5Ldelete(f, "domains", H5P_DEFAULT), 0);
    ASSERT_GE(H5Ldelete(f, "gpus/domain", H5P_DEFAULT), 0);
    h5::setAttr(f, "format_version", int64_t{1});
  }
  const auto v1 = RunFile::open(in);
  ASSERT_EQ(v1->formatVersion(), 1);
  EXPECT_EQ(upgradeRun(in, dir / "up.h5").from_version, 1);
  const auto up = RunFile::open(dir / "up.h5");
  EXPECT_EQ(up->formatVersion(), 3);
  EXPECT_EQ(up->domains(), v1->domains());
  expectRowsMatchEvents(*up);
}

// Overwrites one element of a dataset of a copy through the raw HDF5 API.
template <typename T>
void poke(const std::filesystem::path& p, const char* dataset, hid_t type, T value) {
  std::lock_guard lock(h5::lock());
  h5::Id f = h5::openFileForUpdate(p);
  h5::Id d(H5Dopen2(f, dataset, H5P_DEFAULT));
  ASSERT_TRUE(d.valid());
  h5::Id space(H5Dget_space(d));
  const hsize_t at = 0, one = 1;
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &at, nullptr, &one, nullptr);
  h5::Id mem(H5Screate_simple(1, &one, nullptr));
  ASSERT_GE(H5Dwrite(d, type, mem, space, H5P_DEFAULT, &value), 0);
}

TEST_F(KernelSummaryFile, DamagedSummaryIsNamedInOneMessage) {
  const auto good = write("good.h5", true);
  const auto rowBad = dir / "row.h5", offBad = dir / "offsets.h5", gone = dir / "gone.h5";
  std::filesystem::copy_file(good, rowBad);
  std::filesystem::copy_file(good, offBad);
  std::filesystem::copy_file(good, gone);
  poke(rowBad, "/kernels/summary/min_ns", H5T_NATIVE_INT64, int64_t{-7});
  poke(offBad, "/kernels/summary/offsets", H5T_NATIVE_UINT64, uint64_t{5});
  {
    std::lock_guard lock(h5::lock());
    h5::Id f = h5::openFileForUpdate(gone);
    ASSERT_GE(H5Ldelete(f, "/kernels/summary", H5P_DEFAULT), 0);
  }
  const auto run = RunFile::open(rowBad);  // rows are checked as they are read
  const std::string row = errorOf([&] { run->kernelSummary(0); });
  EXPECT_NE(row.find(rowBad.string()), std::string::npos) << row;
  EXPECT_NE(row.find("/kernels/summary row 0 (track 0) is damaged"), std::string::npos) << row;
  const std::string off = errorOf([&] { RunFile::open(offBad); });
  EXPECT_NE(off.find("/kernels/summary/offsets do not rise from 0"), std::string::npos) << off;
  const std::string missing = errorOf([&] { RunFile::open(gone); });
  EXPECT_NE(missing.find("/kernels/summary"), std::string::npos) << missing;
  EXPECT_NE(missing.find(gone.string()), std::string::npos) << missing;
}

}  // namespace
}  // namespace wl
