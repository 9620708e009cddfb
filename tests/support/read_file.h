// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reads a whole fixture into memory; gzip-compressed files are decompressed (zlib reads plain
// files unchanged), so fixtures can be stored compressed.

#include <filesystem>
#include <string>

namespace wl::test {

std::string readFile(const std::filesystem::path& path);

}  // namespace wl::test
