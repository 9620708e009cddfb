// SPDX-License-Identifier: GPL-3.0-or-later
// Exact properties of simulated runs: energy bookkeeping, determinism, collectives that match
// across the ranks of every process group, kernel classes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "sim_test_support.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

class PowerIntegral : public sim::SimObserver {
 public:
  void onStep(double, double dtS, std::span<const double> powerW) override {
    energy.resize(powerW.size(), 0.0);
    for (size_t g = 0; g < powerW.size(); ++g)
      energy[g] += powerW[g] * dtS;
    seconds += dtS;
  }
  std::vector<double> energy;
  double seconds = 0;
};

TEST(SimulatedTruth, EnergyIsTheIntegralOfTheSimulatedPower) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.durationS = 8;
  PowerIntegral integral;
  const auto run = test::simulateAndOpen(c, dir / "e.h5", &integral);
  const std::vector<double> truth = run->truthEnergy();
  ASSERT_EQ(truth.size(), 8u);
  const double span = static_cast<double>(run->info().end_ns - run->info().start_ns) * 1e-9;
  EXPECT_NEAR(integral.seconds, span, 1e-6);
  for (size_t g = 0; g < truth.size(); ++g) {
    EXPECT_NEAR(truth[g], integral.energy[g], 1e-9 * truth[g]);
    EXPECT_GT(truth[g], 8 * 100.0);  // a GPU draws at least its idle power
  }
}

TEST(SimulatedTruth, IdealSensorsAtThePhysicsRateRecordTheSimulatedPower) {
  // One sample per 5 ms physics step, each the step's power: their sum times 5 ms is the energy.
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.durationS = 4;
  c.idealSensors = true;
  c.sampleHz = 200;
  const auto run = test::simulateAndOpen(c, dir / "ideal.h5");
  const std::vector<double> truth = run->truthEnergy();
  const double span = static_cast<double>(run->info().end_ns - run->info().start_ns) * 1e-9;
  for (const GpuInfo& g : run->gpus()) {
    const test::Series p = test::series(*run, g.id, "power_w");
    ASSERT_EQ(p.v.size(), static_cast<size_t>(std::llround(span * 200)));
    double sum = 0;
    for (double v : p.v)
      sum += v * 0.005;
    EXPECT_NEAR(sum, truth[static_cast<size_t>(g.id)], 1e-5 * sum) << "GPU " << g.id;
  }
}

// Everything a run file holds, as text, for comparing two runs.
std::string dump(const RunFile& run) {
  std::ostringstream o;
  o.precision(17);
  o << run.info().start_ns << ' ' << run.info().end_ns << ' ' << run.info().parameters_json << '\n';
  for (const GpuInfo& g : run.gpus()) {
    o << g.uuid << ' ' << g.slot << ' ' << g.package << '\n';
    for (const MetricInfo& m : run.series().metrics) {
      const Samples s = run.readAllSamples(SeriesKind::Gpu, g.id, m.id);
      for (size_t i = 0; i < s.t_ns.size(); ++i)
        o << s.t_ns[i] << ':' << s.v[i] << ' ';
      o << '\n';
    }
    for (uint32_t r : run.readThrottle(g.id, 0, run.series().samples(g.id)))
      o << r << ' ';
    o << '\n';
  }
  for (size_t t = 0; t < run.tracks().size(); ++t) {
    o << "track " << run.tracks()[t].rank << ' ' << run.tracks()[t].stream << '\n';
    for (const KernelEvent& e : run.readAllKernels(t))
      o << e.start_ns << ' ' << e.dur_ns << ' ' << run.str(e.name) << ' ' << int(e.cls) << '\n';
    for (float f : run.readTruthClock(t))
      o << f << ' ';
    o << '\n';
  }
  for (const CollectiveRecord& c : run.collectives())
    o << c.track << ' ' << c.event << ' ' << run.str(c.info.pg_name) << ' ' << c.info.seq << '\n';
  for (const Iteration& i : run.iterations())
    o << i.rank << ' ' << i.step << ' ' << i.start_ns << ' ' << i.end_ns << '\n';
  for (const Annotation& a : run.annotations())
    o << a.rank << ' ' << a.start_ns << ' ' << a.dur_ns << ' ' << run.str(a.name) << '\n';
  for (const ThrottleTruth& t : run.truthThrottle())
    o << t.gpu << ' ' << t.start_ns << ' ' << t.end_ns << ' ' << t.reasons << '\n';
  for (double e : run.truthEnergy())
    o << e << ' ';
  return o.str();
}

sim::SimConfig tracedConfig() {
  sim::SimConfig c = test::tinyConfig();
  c.tp = 2, c.pp = 2, c.dp = 2;
  c.mbs = 1;
  c.gbs = 8;
  c.durationS = 0;
  c.iterations = 2;
  c.overlap = true;
  c.trace.ranks = sim::TraceSelection::Ranks::All;
  return c;
}

TEST(SimulatedRun, TheSameSeedGivesTheSameRunAndAnotherSeedAnotherOne) {
  test::TempDir dir;
  sim::SimConfig c = tracedConfig();
  c.trace.ranks = sim::TraceSelection::Ranks::List;
  c.trace.rankList = {1, 6};  // a first-stage and a last-stage rank
  const std::string a = dump(*test::simulateAndOpen(c, dir / "a.h5"));
  const std::string b = dump(*test::simulateAndOpen(c, dir / "b.h5"));
  EXPECT_GT(a.size(), 100000u);
  EXPECT_TRUE(a == b);
  c.seed = 8;
  const std::string d = dump(*test::simulateAndOpen(c, dir / "d.h5"));
  EXPECT_FALSE(a == d);
}

// One traced run of tp 2 x pp 2 x dp 2 with overlap, shared by the tests below.
class TracedRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    run_ = test::simulateAndOpen(tracedConfig(), *dir_ / "traced.h5");
  }
  static void TearDownTestSuite() {
    run_.reset();
    delete dir_;
  }
  static test::TempDir* dir_;
  static std::shared_ptr<const RunFile> run_;
};
test::TempDir* TracedRun::dir_ = nullptr;
std::shared_ptr<const RunFile> TracedRun::run_;

std::set<int> parseRanks(const std::string& text) {
  std::set<int> out;
  std::string digits;
  for (char ch : text + ",") {
    if (ch >= '0' && ch <= '9') {
      digits += ch;
    } else if (!digits.empty()) {
      out.insert(std::stoi(digits));
      digits.clear();
    }
  }
  return out;
}

TEST_F(TracedRun, EveryCollectiveHasOneInstancePerGroupMemberWithTheSameSequenceNumber) {
  const auto& run = run_;
  struct Member {
    int rank;
    std::string collective;
    int64_t nelems;
    int32_t groupSize;
    std::string ranks;
  };
  std::map<std::pair<std::string, int64_t>, std::vector<Member>> instances;
  size_t commEvents = 0;
  for (size_t t = 0; t < run->tracks().size(); ++t)
    commEvents += run->tracks()[t].classCount[static_cast<size_t>(KernelClass::Communication)];
  const auto records = run->collectives();
  EXPECT_EQ(records.size(), commEvents);  // every communication kernel carries its metadata
  std::set<std::string> kinds;
  for (const CollectiveRecord& r : records) {
    const CollectiveInfo& ci = r.info;
    kinds.insert(run->str(ci.collective));
    instances[{run->str(ci.pg_name), ci.seq}].push_back({run->tracks()[r.track].rank,
                                                         run->str(ci.collective), ci.in_nelems,
                                                         ci.group_size, run->str(ci.pg_ranks)});
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"allreduce", "sendrecv"}));
  std::map<std::string, std::set<int64_t>> seqsPerGroup;
  for (const auto& [key, members] : instances) {
    const std::set<int> expected = parseRanks(members.front().ranks);
    std::set<int> seen;
    for (const Member& m : members) {
      EXPECT_EQ(m.collective, members.front().collective);
      EXPECT_EQ(m.nelems, members.front().nelems);
      EXPECT_EQ(m.groupSize, static_cast<int32_t>(expected.size()));
      EXPECT_TRUE(seen.insert(m.rank).second) << "rank " << m.rank << " twice in " << key.first;
    }
    EXPECT_EQ(seen, expected) << "group " << key.first << " seq " << key.second;
    seqsPerGroup[key.first].insert(key.second);
  }
  // Sequence numbers of a group count 0, 1, 2, ... without holes.
  for (const auto& [group, seqs] : seqsPerGroup) {
    EXPECT_EQ(*seqs.begin(), 0) << group;
    EXPECT_EQ(*seqs.rbegin(), static_cast<int64_t>(seqs.size()) - 1) << group;
  }
}

TEST_F(TracedRun, KernelClassesAreThoseOfClassifyKernel) {
  const auto& run = run_;
  std::set<std::pair<size_t, size_t>> withMeta;
  for (const CollectiveRecord& r : run->collectives())
    withMeta.insert({r.track, r.event});
  std::set<int> classes;
  for (size_t t = 0; t < run->tracks().size(); ++t) {
    const auto events = run->readAllKernels(t);
    const auto clocks = run->readTruthClock(t);
    ASSERT_EQ(clocks.size(), events.size());
    for (size_t i = 0; i < events.size(); ++i) {
      const KernelEvent& e = events[i];
      EXPECT_EQ(e.cls, classifyKernel(run->str(e.name), e.kind, withMeta.count({t, i}) > 0))
          << run->str(e.name);
      classes.insert(static_cast<int>(e.cls));
      EXPECT_GE(clocks[i], 345.f);
      EXPECT_LE(clocks[i], 1980.f);
    }
  }
  EXPECT_EQ(classes, (std::set<int>{0, 1, 2}));  // compute, communication, memory (memset)
}

}  // namespace
}  // namespace wl

namespace wl {
namespace {

TEST(SimulatedTruth, Mi250ReportsThePackagePowerOnItsFirstGcd) {
  // Ideal sensors at the physics rate: the first GCD of every OAM reports the power of both GCDs,
  // the second reports none, as amd-smi does; the package energy is still the sum of the truth.
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.platform = *sim::findProfile("mi250");
  c.durationS = 3;
  c.idealSensors = true;
  c.sampleHz = 200;
  const auto run = test::simulateAndOpen(c, dir / "mi250.h5");
  const std::vector<double> truth = run->truthEnergy();
  for (const GpuInfo& g : run->gpus()) {
    EXPECT_EQ(g.package, g.id / 2);
    EXPECT_FLOAT_EQ(g.power_limit_w, 500.f);  // the OAM's TDP
    const test::Series p = test::series(*run, g.id, "power_w");
    if (g.id % 2 == 1) {
      for (double v : p.v)
        EXPECT_TRUE(std::isnan(v));
      continue;
    }
    double sum = 0;
    for (double v : p.v)
      sum += v * 0.005;
    const double package = truth[static_cast<size_t>(g.id)] + truth[static_cast<size_t>(g.id) + 1];
    EXPECT_NEAR(sum, package, 1e-5 * package) << "OAM " << g.package;
  }
}

}  // namespace
}  // namespace wl
