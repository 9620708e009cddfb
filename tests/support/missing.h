// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A test that needs something the machine may lack (a program, a Python module, data) skips
// where it is missing on a developer's machine, and fails under CI (CI=true):
// scripts/setup-debian.sh installs everything the tests need, so a missing dependency there is a
// broken setup, not a pass. ctest reports the skips as skipped (gtest's "[  SKIPPED ]", QtTest's
// "SKIP   :"; tests/CMakeLists.txt), and .ci/run fails on any.

namespace wl::test {

// True when a missing dependency or missing data must fail the test: the environment variable CI
// is "true" (as in CI and GitHub-style runners).
bool missingIsFailure();

}  // namespace wl::test

// In a gtest test body or SetUp: skip, or fail under CI, with the reason.
#define WL_SKIP_OR_FAIL_MISSING(reason)                                                 \
  do {                                                                                  \
    if (::wl::test::missingIsFailure())                                                 \
      GTEST_FAIL() << "missing under CI=true (a skip would pass as green): " << reason; \
    else                                                                                \
      GTEST_SKIP() << reason;                                                           \
  } while (0)

// In a QtTest slot: the same with QFAIL/QSKIP (reason: a C string).
#define WL_QSKIP_OR_FAIL_MISSING(reason)                                    \
  do {                                                                      \
    if (::wl::test::missingIsFailure())                                     \
      QFAIL("missing under CI=true (a skip would pass as green): " reason); \
    else                                                                    \
      QSKIP(reason);                                                        \
  } while (0)
