// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The fuzz targets, one per parser (fuzz/README.md lists them with their input layout). Each
// takes one input and returns normally when the code under test handled it: read it, or refused
// it with a one-line wl::Error. Anything else (a crash, a sanitizer report, another exception, a
// broken invariant of what was read) is a finding. The libFuzzer executables (fuzzer_main.cpp)
// and the regression test over tests/data/fuzz/ (tests/fuzz/) call the same functions.

#include <cstdint>
#include <span>
#include <string_view>

namespace wl::fuzz {

struct Target {
  std::string_view name;     // "kineto": fuzz_kineto, tests/data/fuzz/kineto/
  std::string_view summary;  // one line for fuzz.sh --list
  void (*run)(std::span<const uint8_t> data);
};

std::span<const Target> targets();
const Target* findTarget(std::string_view name);

}  // namespace wl::fuzz
