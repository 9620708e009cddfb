// SPDX-License-Identifier: GPL-3.0-or-later
// The comparison table on hand-made runs: normalizations, deltas and ranks computed by hand,
// filters, sorting, baselines, labels and invalid runs.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/study/study_table.h"
#include "loaders/core/error.h"
#include "study_test_util.h"

namespace wl {
namespace {

size_t col(std::string_view id) {
  const auto cols = studyColumns();
  for (size_t c = 0; c < cols.size(); ++c)
    if (cols[c].id == id) return c;
  ADD_FAILURE() << "no column " << id;
  return 0;
}

// A: 2 GPUs, 1000 J, 100 tokens/s, 2 J/token, 70 C, 4 iterations.
// B: 4 GPUs, 1500 J, 150 tokens/s, 1.5 J/token, 80 C, 5 iterations.
// C: 2 GPUs, 1500 J, 80 tokens/s, 3 J/token, temperature unknown, 2 iterations.
// D: invalid (out of memory), 10 J.  All with gbs 8 and sequence length 10.
Study threeRuns(bool withInvalid = false) {
  Study s;
  auto make = [](const char* name, int gpus, double energy, double tps, double ept, double temp,
                 size_t iterations) {
    StudyRun r = test::handRun(name, "GPT3-175B", "H100", gpus);
    RunTotals& t = r.summary.totals;
    t.energy_j = energy, t.tokens_per_s = tps, t.energy_per_token_j = ept;
    t.iterations = iterations;
    r.summary.temp_max_c = temp;
    r.summary.config.gbs = 8;
    r.summary.config.seq_len = 10;
    return r;
  };
  s.runs.push_back(make("A", 2, 1000, 100, 2.0, 70, 4));
  s.runs.push_back(make("B", 4, 1500, 150, 1.5, 80, 5));
  s.runs.push_back(make("C", 2, 1500, 80, 3.0, kNaN, 2));
  if (withInvalid) {
    StudyRun d = make("D", 2, 10, 1000, 0.1, 50, 1);
    d.summary.valid = false;
    d.summary.invalid_reasons = {"gpu 1 has 4 power samples (fewer than 10)"};
    s.runs.push_back(d);
  }
  return s;
}

const StudyRow& rowOf(const Study& s, const StudyTable& t, const std::string& label) {
  for (const StudyRow& r : t.rows)
    if (s.runs[r.run].label == label) return r;
  throw std::runtime_error("no row " + label);
}

std::vector<std::string> order(const Study& s, const StudyTable& t) {
  std::vector<std::string> out;
  for (const StudyRow& r : t.rows)
    out.push_back(s.runs[r.run].label);
  return out;
}

TEST(StudyTable, DeltasAndRanksAsComputedByHand) {
  const Study s = threeRuns();
  StudyTableOptions o;
  o.baseline = "A";
  const StudyTable t = makeStudyTable(s, o);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.baseline, 0);
  const size_t e = col("energy_j"), tps = col("tokens_per_s"), ept = col("energy_per_token_j"),
               temp = col("temp_max_c"), its = col("iterations");
  const StudyRow &a = rowOf(s, t, "A"), &b = rowOf(s, t, "B"), &c = rowOf(s, t, "C");
  EXPECT_EQ(a.values[e], 1000);
  EXPECT_EQ(a.deltas[e].absolute, 0);
  EXPECT_EQ(a.deltas[e].relative, 0);
  EXPECT_EQ(b.deltas[e].absolute, 500);
  EXPECT_EQ(b.deltas[e].relative, 0.5);
  EXPECT_EQ(c.deltas[e].absolute, 500);
  // Lower energy is better; B and C tie for second ("1224" ranking).
  EXPECT_EQ(a.ranks[e], 1);
  EXPECT_EQ(b.ranks[e], 2);
  EXPECT_EQ(c.ranks[e], 2);
  // Higher throughput is better.
  EXPECT_EQ(b.deltas[tps].absolute, 50);
  EXPECT_EQ(b.deltas[tps].relative, 0.5);
  EXPECT_EQ(c.deltas[tps].absolute, -20);
  EXPECT_EQ(c.deltas[tps].relative, -0.2);
  EXPECT_EQ(b.ranks[tps], 1);
  EXPECT_EQ(a.ranks[tps], 2);
  EXPECT_EQ(c.ranks[tps], 3);
  EXPECT_EQ(b.deltas[ept].absolute, -0.5);
  EXPECT_EQ(b.deltas[ept].relative, -0.25);
  EXPECT_EQ(c.deltas[ept].relative, 0.5);
  EXPECT_EQ(b.ranks[ept], 1);
  EXPECT_EQ(c.ranks[ept], 3);
  // An unknown value has no delta and no rank; the others rank without it.
  EXPECT_TRUE(std::isnan(c.values[temp]));
  EXPECT_TRUE(std::isnan(c.deltas[temp].absolute));
  EXPECT_EQ(c.ranks[temp], 0);
  EXPECT_EQ(b.deltas[temp].absolute, 10);
  EXPECT_DOUBLE_EQ(b.deltas[temp].relative, 10.0 / 70.0);
  EXPECT_EQ(a.ranks[temp], 1);
  EXPECT_EQ(b.ranks[temp], 2);
  // A column without a direction is not ranked.
  EXPECT_EQ(a.ranks[its], 0);
  EXPECT_EQ(b.ranks[its], 0);
}

TEST(StudyTable, NormalizationsDivideWhatScales) {
  const Study s = threeRuns();
  const size_t e = col("energy_j"), tps = col("tokens_per_s"), ept = col("energy_per_token_j"),
               temp = col("temp_max_c");
  StudyTableOptions o;
  o.baseline = "A";
  o.normalization = Normalization::PerGpu;
  StudyTable t = makeStudyTable(s, o);
  // Energy per GPU: 500, 375, 750; ranks follow the normalized values.
  EXPECT_EQ(rowOf(s, t, "A").values[e], 500);
  EXPECT_EQ(rowOf(s, t, "B").values[e], 375);
  EXPECT_EQ(rowOf(s, t, "C").values[e], 750);
  EXPECT_EQ(rowOf(s, t, "B").deltas[e].absolute, -125);
  EXPECT_EQ(rowOf(s, t, "B").deltas[e].relative, -0.25);
  EXPECT_EQ(rowOf(s, t, "C").deltas[e].relative, 0.5);
  EXPECT_EQ(rowOf(s, t, "B").ranks[e], 1);
  EXPECT_EQ(rowOf(s, t, "C").ranks[e], 3);
  // Throughput per GPU: 50, 37.5, 40: A is now the best.
  EXPECT_EQ(rowOf(s, t, "B").values[tps], 37.5);
  EXPECT_EQ(rowOf(s, t, "A").ranks[tps], 1);
  EXPECT_EQ(rowOf(s, t, "C").ranks[tps], 2);
  EXPECT_EQ(rowOf(s, t, "B").ranks[tps], 3);
  EXPECT_EQ(rowOf(s, t, "B").values[ept], 1.5 / 4);
  // Intensive numbers are never divided.
  EXPECT_EQ(rowOf(s, t, "B").values[temp], 80);

  // Per token: energy / (iterations x gbs x seq_len) = 1000/320, 1500/400, 1500/160.
  o.normalization = Normalization::PerToken;
  t = makeStudyTable(s, o);
  EXPECT_EQ(rowOf(s, t, "A").values[e], 1000.0 / 320);
  EXPECT_EQ(rowOf(s, t, "B").values[e], 1500.0 / 400);
  EXPECT_EQ(rowOf(s, t, "C").values[e], 1500.0 / 160);
  EXPECT_EQ(rowOf(s, t, "B").values[tps], 150);  // a rate: not divided by the work
  EXPECT_EQ(rowOf(s, t, "B").values[ept], 1.5);
  // Per iteration: 250, 300, 750.
  o.normalization = Normalization::PerIteration;
  t = makeStudyTable(s, o);
  EXPECT_EQ(rowOf(s, t, "A").values[e], 250);
  EXPECT_EQ(rowOf(s, t, "B").values[e], 300);
  EXPECT_EQ(rowOf(s, t, "C").values[e], 750);

  // Units say what was divided.
  const StudyColumn* energy = findStudyColumn("energy_j");
  ASSERT_NE(energy, nullptr);
  EXPECT_EQ(normalizedUnit(*energy, Normalization::PerGpu), "J/GPU");
  EXPECT_EQ(normalizedUnit(*energy, Normalization::PerToken), "J/token");
  EXPECT_EQ(normalizedUnit(*findStudyColumn("temp_max_c"), Normalization::PerGpu), "C");
  // No iterations: the per-iteration and per-token divisors are unknown, never 0.
  StudyRun none = test::handRun("none");
  none.summary.totals.energy_j = 5;
  EXPECT_TRUE(std::isnan(normalizedValue(none.summary, *energy, Normalization::PerIteration)));
  EXPECT_TRUE(std::isnan(normalizedValue(none.summary, *energy, Normalization::PerToken)));
  EXPECT_EQ(normalizedValue(none.summary, *energy, Normalization::PerGpu), 5.0 / 8);
}

TEST(StudyTable, InvalidRunsHaveNoRankNoDeltaAndSortLast) {
  const Study s = threeRuns(true);
  StudyTableOptions o;
  o.baseline = "A";
  o.sort = "energy_j";
  const StudyTable t = makeStudyTable(s, o);
  ASSERT_EQ(t.rows.size(), 4u);
  const size_t e = col("energy_j");
  const StudyRow& d = rowOf(s, t, "D");
  EXPECT_EQ(d.values[e], 10);  // shown as measured...
  EXPECT_EQ(d.ranks[e], 0);    // ...but not ranked against valid runs
  EXPECT_TRUE(std::isnan(d.deltas[e].absolute));
  EXPECT_EQ(rowOf(s, t, "A").ranks[e], 1);
  EXPECT_EQ(order(s, t), (std::vector<std::string>{"A", "B", "C", "D"}));
  // An invalid baseline gives no deltas at all.
  o.baseline = "D";
  const StudyTable u = makeStudyTable(s, o);
  for (const StudyRow& r : u.rows)
    EXPECT_TRUE(std::isnan(r.deltas[e].absolute));
}

TEST(StudyTable, SortsByColumnsAndConfigurationKeys) {
  Study s = threeRuns(true);
  s.runs[0].summary.config.mbs = 16;
  s.runs[1].summary.config.mbs = 4;
  s.runs[2].summary.config.mbs = 1;
  StudyTableOptions o;
  o.sort = "-tokens_per_s";
  EXPECT_EQ(order(s, makeStudyTable(s, o)), (std::vector<std::string>{"B", "A", "C", "D"}));
  o.sort = "tokens_per_s:desc";
  EXPECT_EQ(order(s, makeStudyTable(s, o)), (std::vector<std::string>{"B", "A", "C", "D"}));
  // Unknown values last in both directions.
  o.sort = "temp_max_c";
  EXPECT_EQ(order(s, makeStudyTable(s, o)), (std::vector<std::string>{"A", "B", "C", "D"}));
  o.sort = "-temp_max_c";
  EXPECT_EQ(order(s, makeStudyTable(s, o)), (std::vector<std::string>{"B", "A", "C", "D"}));
  // Numbers sort as numbers (1, 4, 16), not as text (1, 16, 4).
  o.sort = "mbs";
  EXPECT_EQ(order(s, makeStudyTable(s, o)), (std::vector<std::string>{"C", "B", "A", "D"}));
  o.sort = "-label";
  EXPECT_EQ(order(s, makeStudyTable(s, o)), (std::vector<std::string>{"C", "B", "A", "D"}));
  o.sort = "no_such_column";
  EXPECT_THROW(makeStudyTable(s, o), Error);
}

TEST(StudyTable, FiltersByConfiguration) {
  Study s = threeRuns(true);
  ParallelConfig& a = s.runs[0].summary.config;
  ParallelConfig& b = s.runs[1].summary.config;
  ParallelConfig& c = s.runs[2].summary.config;
  a.tp = 2, a.pp = 8, a.recompute = true, a.overlap = false, a.mbs = 1;
  b.tp = 4, b.pp = 8, b.recompute = false, b.overlap = true, b.mbs = 2;
  c.tp = 2, c.pp = 4, c.mbs = 1;  // recompute and overlap unknown
  s.runs[1].summary.model = "gpt3-175b";
  s.runs[1].summary.platform = "H200";
  s.runs[2].summary.model = "Llama3-70B";
  auto filtered = [&](const std::string& f) {
    StudyTableOptions o;
    o.filter = f;
    return order(s, makeStudyTable(s, o));
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(filtered("model=GPT3-175b"), (V{"A", "B", "D"}));  // names ignore case
  EXPECT_EQ(filtered("tp=2"), (V{"A", "C"}));
  EXPECT_EQ(filtered("tp=2,tp=4"), (V{"A", "B", "C"}));       // one key twice: either value
  EXPECT_EQ(filtered("tp=2, platform=h100"), (V{"A", "C"}));  // different keys: both
  EXPECT_EQ(filtered("pp=8,mbs=1"), (V{"A"}));
  EXPECT_EQ(filtered("overlap=on"), (V{"B"}));
  EXPECT_EQ(filtered("overlap=false"), (V{"A"}));  // unknown is neither true nor false
  EXPECT_EQ(filtered("recompute=yes"), (V{"A"}));
  EXPECT_EQ(filtered("valid=false"), (V{"D"}));
  EXPECT_EQ(filtered(""), (V{"A", "B", "C", "D"}));
  EXPECT_THROW(filtered("colour=red"), Error);
  EXPECT_THROW(filtered("tp"), Error);
  EXPECT_THROW(filtered("tp="), Error);
  EXPECT_THROW(filtered("recompute=maybe"), Error);
  // Ranks are among the rows shown.
  StudyTableOptions o;
  o.filter = "tp=2";
  const StudyTable t = makeStudyTable(s, o);
  EXPECT_EQ(rowOf(s, t, "C").ranks[col("energy_j")], 2);
  EXPECT_EQ(rowOf(s, t, "A").ranks[col("tokens_per_s")], 1);
}

TEST(StudyTable, BaselineByLabelNamePathOrFile) {
  Study s = threeRuns();
  EXPECT_EQ(s.find("B"), 1u);
  EXPECT_EQ(s.find("/study/C.h5"), 2u);
  EXPECT_EQ(s.find("C.h5"), 2u);
  try {
    s.find("Z");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no run 'Z'"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  // Two runs with one name: the name is ambiguous, their labels are not.
  StudyRun x = test::handRun("dup"), y = test::handRun("dup");
  x.summary.path = "/a/x.h5";
  y.summary.path = "/a/y.h5";
  s.runs.push_back(x);
  s.runs.push_back(y);
  assignLabels(s.runs);
  EXPECT_EQ(s.runs[3].label, "dup (x.h5)");
  EXPECT_EQ(s.runs[4].label, "dup (y.h5)");
  EXPECT_THROW(s.find("dup"), Error);
  EXPECT_EQ(s.find("dup (y.h5)"), 4u);
  StudyTableOptions o;
  o.baseline = "dup";
  EXPECT_THROW(makeStudyTable(s, o), Error);
}

TEST(StudyTable, LabelsAreUnique) {
  std::vector<StudyRun> runs = {test::handRun("a"), test::handRun("a"), test::handRun(""),
                                test::handRun("b"), test::handRun("b")};
  runs[0].summary.path = "/x/1.h5";
  runs[1].summary.path = "/x/2.h5";
  runs[2].summary.path = "/x/3.h5";
  runs[3].summary.path = "/p/run.h5";
  runs[4].summary.path = "/q/run.h5";
  assignLabels(runs);
  EXPECT_EQ(runs[0].label, "a (1.h5)");
  EXPECT_EQ(runs[1].label, "a (2.h5)");
  EXPECT_EQ(runs[2].label, "3");          // no name: the file stem
  EXPECT_EQ(runs[3].label, "/p/run.h5");  // same name and file name: the path
  EXPECT_EQ(runs[4].label, "/q/run.h5");
}

TEST(StudyTable, RanksAndDeltasOfPlainNumbers) {
  const std::vector<double> v = {3, 1, 1, kNaN, 2};
  const std::vector<bool> all(5, true);
  EXPECT_EQ(rankValues(v, all, Better::Lower), (std::vector<int>{4, 1, 1, 0, 3}));
  EXPECT_EQ(rankValues(v, all, Better::Higher), (std::vector<int>{1, 3, 3, 0, 2}));
  EXPECT_EQ(rankValues(v, all, Better::None), (std::vector<int>(5, 0)));
  EXPECT_EQ(rankValues(v, {false, true, true, true, true}, Better::Higher),
            (std::vector<int>{0, 2, 2, 0, 1}));
  EXPECT_EQ(deltaOf(5, 0).absolute, 5);
  EXPECT_TRUE(std::isnan(deltaOf(5, 0).relative));
  EXPECT_EQ(deltaOf(-3, -2).absolute, -1);
  EXPECT_EQ(deltaOf(-3, -2).relative, -0.5);
  EXPECT_TRUE(std::isnan(deltaOf(kNaN, 2).absolute));
  EXPECT_EQ(parseNormalization("per-token"), Normalization::PerToken);
  EXPECT_EQ(parseNormalization("GPU"), Normalization::PerGpu);
  EXPECT_THROW(parseNormalization("per-watt"), Error);
}

}  // namespace
}  // namespace wl
