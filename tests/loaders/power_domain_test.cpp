// SPDX-License-Identifier: GPL-3.0-or-later
// Power domains in the run format: derivation from GpuInfo::package, what the writer stores (given
// or derived), version 1 files read with derived domains, and validation of damaged /domains.
#include <gtest/gtest.h>

#include <hdf5.h>

#include <cmath>
#include <functional>
#include <optional>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/power_domain.h"
#include "loaders/format/run_file.h"
#include "loaders/format/run_writer.h"
#include "loaders/h5/h5.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kSec = 1'000'000'000;

// `n` GPUs on one node; package[g] as given; power limit 560 W (an MI250 package's cap) or 700 W.
std::vector<GpuInfo> gpusWith(const std::vector<int>& package, float limit) {
  std::vector<GpuInfo> out;
  for (size_t g = 0; g < package.size(); ++g) {
    GpuInfo gi;
    gi.id = static_cast<int>(g);
    gi.local_index = static_cast<int>(g);
    gi.power_limit_w = limit;
    gi.package = package[g];
    out.push_back(gi);
  }
  return out;
}

// Ten 1 s samples of power (NaN where `hasPower` is false) and temperature.
TelemetryTable table(bool hasPower) {
  TelemetryTable t;
  t.columns = {{std::string(metric::kPower), {}}, {std::string(metric::kTemp), {}}};
  for (int i = 0; i < 10; ++i) {
    t.t_ns.push_back(kT0 + i * kSec);
    t.columns[0].values.push_back(hasPower ? 300.0 + i : kNaN);
    t.columns[1].values.push_back(50.0);
  }
  return t;
}

// Writes a run of these GPUs, power on the GPUs listed in `powered`; `domains` if given.
void writeRun(const std::filesystem::path& out, const std::vector<GpuInfo>& gpus,
              const std::vector<int>& powered,
              const std::optional<std::vector<PowerDomain>>& domains = std::nullopt) {
  RunInfo info;
  info.name = "domains";
  info.start_ns = kT0;
  info.end_ns = kT0 + 10 * kSec;
  RunWriter w(out, info, gpus, {});
  for (size_t g = 0; g < gpus.size(); ++g)
    w.addGpuTelemetry(static_cast<int>(g),
                      table(std::find(powered.begin(), powered.end(), g) != powered.end()));
  if (domains) w.setDomains(*domains);
  w.finish();
}

// Turns a version 2 file into what version 1 wrote: no /domains, no /gpus/domain.
void makeVersion1(const std::filesystem::path& p) {
  std::lock_guard lock(h5::lock());
  h5::Id f(H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
  ASSERT_TRUE(f.valid());
  EXPECT_GE(H5Ldelete(f, "domains", H5P_DEFAULT), 0);
  EXPECT_GE(H5Ldelete(f, "gpus/domain", H5P_DEFAULT), 0);
  EXPECT_GE(H5Adelete(f, "format_version"), 0);
  h5::setAttr(f, "format_version", int64_t{1});
}

TEST(PowerDomains, DeriveBoardsAndPackages) {
  // GPUs 0-1 and 4-5 share packages 0 and 7; GPUs 2 and 3 have none; power on GPUs 1 and 4.
  std::vector<GpuInfo> gpus = gpusWith({0, 0, -1, -1, 7, 7}, 560);
  gpus[2].power_limit_w = 700;
  const auto d = deriveDomains(gpus, {false, true, true, false, true, false});
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].kind, "package");
  EXPECT_EQ(d[0].gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(d[0].power_gpu, 1);  // the one GCD with power samples
  EXPECT_EQ(d[0].name, "package 0");
  EXPECT_FLOAT_EQ(d[0].power_limit_w, 560);
  EXPECT_EQ(d[1].kind, "board");
  EXPECT_EQ(d[1].gpus, (std::vector<int>{2}));
  EXPECT_EQ(d[1].power_gpu, 2);
  EXPECT_FLOAT_EQ(d[1].power_limit_w, 700);
  EXPECT_EQ(d[2].gpus, (std::vector<int>{3}));
  EXPECT_EQ(d[2].power_gpu, 3);  // a board carries its own power even without samples
  EXPECT_EQ(d[3].id, 3);
  EXPECT_EQ(d[3].gpus, (std::vector<int>{4, 5}));
  EXPECT_EQ(d[3].power_gpu, 4);
  EXPECT_EQ(domainProblem(d, 6), "");
  EXPECT_EQ(powerRole(d[0], 1), PowerRole::Whole);
  EXPECT_EQ(powerRole(d[0], 0), PowerRole::None);
  EXPECT_EQ(powerRole(d[1], 2), PowerRole::Whole);
  EXPECT_EQ(domainOfGpus(d, 6), (std::vector<int>{0, 0, 1, 2, 3, 3}));
}

TEST(PowerDomains, PackageWithPowerOnBothGcdsIsTheirSum) {
  const auto d = deriveDomains(gpusWith({0, 0}, 560), {true, true});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].power_gpu, -1);
  EXPECT_EQ(powerRole(d[0], 0), PowerRole::Share);
  EXPECT_EQ(powerRole(d[0], 1), PowerRole::Share);
  // Unknown power: the same (nothing says which GCD carries it).
  EXPECT_EQ(deriveDomains(gpusWith({0, 0}, 560))[0].power_gpu, -1);
}

TEST(PowerDomains, SamePackageIdOnTwoNodesIsTwoPackages) {
  auto gpus = gpusWith({0, 0, 0, 0}, 560);
  gpus[2].node = gpus[3].node = 1;
  const auto d = deriveDomains(gpus, {true, false, true, false});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].gpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(d[1].node, 1);
}

TEST(PowerDomains, ProblemsAreNamed) {
  auto d = deriveDomains(gpusWith({0, 0, -1}, 560), {true, false, true});
  EXPECT_EQ(domainProblem(d, 4), "GPU 3 belongs to no domain");
  auto bad = d;
  bad[1].gpus = {1};
  EXPECT_EQ(domainProblem(bad, 3), "GPU 1 belongs to domains 0 and 1");
  bad = d;
  bad[0].power_gpu = 2;
  EXPECT_EQ(domainProblem(bad, 3), "the power GPU 2 of domain 0 is not one of its GPUs");
  bad = d;
  bad[1].id = 5;
  EXPECT_EQ(domainProblem(bad, 3), "domain 1 has id 5 (ids are dense)");
}

TEST(PowerDomains, WriterDerivesDomainsFromPackagesAndPowerSamples) {
  test::TempDir dir;
  // MI250-like: package power on the first GCD, NaN on the second (what `simulate` writes).
  writeRun(dir / "run.h5", gpusWith({0, 0, 1, 1}, 560), {0, 2});
  const auto run = RunFile::open(dir / "run.h5");
  EXPECT_EQ(run->formatVersion(), 3);
  ASSERT_EQ(run->domains().size(), 2u);
  const PowerDomain& p1 = run->domains()[1];
  EXPECT_EQ(p1.kind, "package");
  EXPECT_EQ(p1.gpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(p1.power_gpu, 2);
  EXPECT_FLOAT_EQ(p1.power_limit_w, 560);
  EXPECT_EQ(run->domainOf(3).id, 1);
  EXPECT_EQ(run->powerRoleOf(2), PowerRole::Whole);
  EXPECT_EQ(run->powerRoleOf(3), PowerRole::None);
  EXPECT_THROW(run->domainOf(4), Error);
}

TEST(PowerDomains, WriterStoresTheDomainsItIsGiven) {
  test::TempDir dir;
  PowerDomain chip;
  chip.id = 0;
  chip.kind = "superchip";
  chip.name = "GH200 0";
  chip.power_limit_w = 1000;
  chip.gpus = {0, 1};
  chip.power_gpu = 1;
  writeRun(dir / "run.h5", gpusWith({-1, -1}, 700), {1}, std::vector<PowerDomain>{chip});
  const auto run = RunFile::open(dir / "run.h5");
  ASSERT_EQ(run->domains().size(), 1u);
  EXPECT_EQ(run->domains()[0], chip);
}

TEST(PowerDomains, WriterRejectsDomainsThatDoNotPartitionTheGpus) {
  test::TempDir dir;
  PowerDomain one;
  one.kind = "board";
  one.gpus = {0};
  one.power_gpu = 0;
  try {
    writeRun(dir / "run.h5", gpusWith({-1, -1}, 700), {0, 1}, std::vector<PowerDomain>{one});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 1 belongs to no domain"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "no half-written file is left";
}

TEST(PowerDomains, Version1FilesReadWithDerivedDomains) {
  test::TempDir dir;
  // Boards: one domain per GPU.
  writeRun(dir / "h100.h5", gpusWith({-1, -1, -1}, 700), {0, 1, 2});
  makeVersion1(dir / "h100.h5");
  const auto h100 = RunFile::open(dir / "h100.h5");
  EXPECT_EQ(h100->formatVersion(), 1);
  ASSERT_EQ(h100->domains().size(), 3u);
  for (int g = 0; g < 3; ++g) {
    EXPECT_EQ(h100->domainOf(g).kind, "board");
    EXPECT_EQ(h100->domainOf(g).power_gpu, g);
  }
  // GCD pairs with power on the second GCD of the first pair and the first of the second: the
  // power GPU comes from the pyramid's sample counts.
  writeRun(dir / "mi250.h5", gpusWith({0, 0, 1, 1}, 560), {1, 2});
  makeVersion1(dir / "mi250.h5");
  const auto mi = RunFile::open(dir / "mi250.h5");
  EXPECT_EQ(mi->formatVersion(), 1);
  ASSERT_EQ(mi->domains().size(), 2u);
  EXPECT_EQ(mi->domains()[0].kind, "package");
  EXPECT_EQ(mi->domains()[0].power_gpu, 1);
  EXPECT_EQ(mi->domains()[1].power_gpu, 2);
  EXPECT_EQ(mi->powerRoleOf(0), PowerRole::None);
}

TEST(PowerDomains, DamagedDomainsAreRejectedWithOneLine) {
  test::TempDir dir;
  writeRun(dir / "run.h5", gpusWith({0, 0}, 560), {0});
  {
    std::lock_guard lock(h5::lock());
    h5::Id f(H5Fopen((dir / "run.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    ASSERT_TRUE(f.valid());
    H5Ldelete(f, "gpus/domain", H5P_DEFAULT);
    h5::Id g = h5::openGroup(f, "gpus");
    h5::write(g, "domain", std::vector<int32_t>{0, 3});
  }
  try {
    RunFile::open(dir / "run.h5");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("run.h5: /gpus/domain[1] is 3, but the run has 1 power domains"),
              std::string::npos)
        << m;
  }
}

TEST(PowerDomains, Version2WithoutDomainsIsRejected) {
  test::TempDir dir;
  writeRun(dir / "run.h5", gpusWith({-1}, 700), {0});
  {
    std::lock_guard lock(h5::lock());
    h5::Id f(H5Fopen((dir / "run.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    ASSERT_TRUE(f.valid());
    H5Ldelete(f, "domains", H5P_DEFAULT);
  }
  try {
    RunFile::open(dir / "run.h5");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run.h5: missing required dataset or group /domains"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace wl
