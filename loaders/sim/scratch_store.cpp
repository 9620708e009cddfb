// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/scratch_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "loaders/core/error.h"

namespace wl::sim {

ScratchFile::ScratchFile(const std::filesystem::path& directory) : dir_(directory) {
  std::string templ = (directory / ".wattline-simulate-XXXXXX").string();
  fd_ = ::mkstemp(templ.data());
  if (fd_ < 0)
    throw Error(fmt::format("{}: cannot create a scratch file for the simulation ({})",
                            directory.string(), std::strerror(errno)));
  ::unlink(templ.c_str());
}

ScratchFile::~ScratchFile() {
  if (fd_ >= 0) ::close(fd_);
}

uint64_t ScratchFile::append(const void* data, size_t bytes) {
  const uint64_t at = size_;
  const char* p = static_cast<const char*>(data);
  size_t left = bytes;
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(size_));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: cannot write the simulation's scratch file ({})", dir_.string(),
                              std::strerror(errno)));
    }
    p += n;
    left -= static_cast<size_t>(n);
    size_ += static_cast<uint64_t>(n);
  }
  return at;
}

void ScratchFile::read(uint64_t offset, void* data, size_t bytes) const {
  char* p = static_cast<char*>(data);
  size_t left = bytes;
  while (left > 0) {
    const ssize_t n = ::pread(fd_, p, left, static_cast<off_t>(offset));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      throw Error(fmt::format("{}: cannot read the simulation's scratch file back", dir_.string()));
    }
    p += n;
    left -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

}  // namespace wl::sim
