// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include "app/cli/arg_parser.h"
#include "app/cli/range_args.h"

namespace wl::cli {
namespace {

ArgParser parser() {
  ArgParser p("test", "A test command.");
  p.flag("json", "json output")
      .option("out", "FILE", "output")
      .option("offset", "SRC=NS", "offsets", true)
      .positionals("INPUT", "inputs", 1, -1);
  return p;
}

TEST(ArgParser, ParsesFlagsOptionsAndPositionals) {
  ArgParser p = parser();
  ASSERT_TRUE(p.parse({"a", "--json", "--out", "x.h5", "b", "--offset=k=5", "--offset", "t=-3"}));
  EXPECT_TRUE(p.has("json"));
  EXPECT_EQ(p.value("out"), "x.h5");
  EXPECT_EQ(p.values("offset"), (std::vector<std::string>{"k=5", "t=-3"}));
  EXPECT_EQ(p.positional(), (std::vector<std::string>{"a", "b"}));
}

TEST(ArgParser, RejectsMistakesWithNamedMessages) {
  auto msg = [](std::vector<std::string> args) {
    ArgParser p = parser();
    try {
      p.parse(args);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(msg({}), "missing INPUT");
  EXPECT_EQ(msg({"a", "--bogus"}), "unknown option --bogus");
  EXPECT_EQ(msg({"a", "--out"}), "option --out needs a value (FILE)");
  EXPECT_EQ(msg({"a", "--out", "x", "--out", "y"}), "option --out given twice");
  EXPECT_EQ(msg({"a", "--json=1"}), "option --json takes no value");
  EXPECT_EQ(msg({"a", "-x"}), "unknown option -x");
}

TEST(ArgParser, TypedValues) {
  ArgParser p("t", "");
  p.option("n", "N", "").option("x", "X", "").option("bad", "B", "");
  ASSERT_TRUE(p.parse({"--n", "42", "--x", "2.5", "--bad", "4x"}));
  EXPECT_EQ(p.intValue("n"), 42);
  EXPECT_EQ(p.doubleValue("x"), 2.5);
  EXPECT_THROW(p.intValue("bad"), UsageError);
  EXPECT_FALSE(p.intValue("missing").has_value());
}

// --range takes compound durations (docs/export.md: "--range 12m:12m10s"): 12 min and 12 min 10 s
// after the run start.
TEST(RangeArgs, AcceptsCompoundDurations) {
  constexpr int64_t kStart = 1'700'000'000'000'000'000;
  const TimeRange r = parseRunRange("12m:12m10s", kStart);
  EXPECT_EQ(r.t0, kStart + 720'000'000'000);
  EXPECT_EQ(r.t1, kStart + 730'000'000'000);
  const TimeRange h = parseRunRange("1h2m3.5s:1h2m4s", 0);
  EXPECT_EQ(h.t0, 3'723'500'000'000);
  EXPECT_EQ(h.t1, 3'724'000'000'000);
  EXPECT_THROW(parseRunRange("12m10:13m", kStart), UsageError);
}

}  // namespace
}  // namespace wl::cli
