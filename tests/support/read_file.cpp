// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/read_file.h"

#include <zlib.h>

#include <stdexcept>

namespace wl::test {

std::string readFile(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path.string());
  std::string out;
  char buf[65536];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

}  // namespace wl::test
