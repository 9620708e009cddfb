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

// Under a SpecCapture, --help hands over the option table (for the man pages and completion)
// instead of printing usage; choices() attaches a value list to an option.
TEST(ArgParser, SpecCaptureTakesTheTableOnHelp) {
  ArgParser p = parser();
  p.choices("out", {"a.h5", "b.h5"});
  SpecCapture capture;
  testing::internal::CaptureStdout();
  EXPECT_FALSE(p.parse({"--help"}));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  ASSERT_TRUE(capture.spec.has_value());
  const ArgSpec& s = *capture.spec;
  EXPECT_EQ(s.command, "test");
  ASSERT_EQ(s.options.size(), 3u);
  EXPECT_EQ(s.options[0].name, "json");
  EXPECT_FALSE(s.options[0].takesValue);
  EXPECT_EQ(s.options[1].metavar, "FILE");
  EXPECT_EQ(s.options[1].choices, (std::vector<std::string>{"a.h5", "b.h5"}));
  EXPECT_TRUE(s.options[2].repeatable);
  EXPECT_EQ(s.posMetavar, "INPUT");
  EXPECT_EQ(s.posMin, 1);
  EXPECT_EQ(s.posMax, -1);
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
