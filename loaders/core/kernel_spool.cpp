// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/kernel_spool.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "loaders/core/error.h"

namespace wl {

KernelSpool::KernelSpool(const std::filesystem::path& target, size_t budgetBytes)
    : target_(target), budget_(budgetBytes) {}

KernelSpool::~KernelSpool() {
  if (fd_ >= 0) ::close(fd_);
  // temp_ removes the file.
}

SpillRun KernelSpool::write(std::span<const SpillRecord> sorted) {
  std::lock_guard lock(mutex_);
  if (!temp_) {
    std::filesystem::path beside = target_;
    beside += ".spill";
    temp_.emplace(beside);
    fd_ = ::open(temp_->path().c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ < 0)
      throw Error(fmt::format("{}: cannot create the kernel spill file: {}", temp_->path().string(),
                              std::strerror(errno)));
    temp_->lock();
  }
  const SpillRun run{records_, sorted.size()};
  const char* p = reinterpret_cast<const char*>(sorted.data());
  size_t left = sorted.size_bytes();
  auto at = static_cast<off_t>(records_ * sizeof(SpillRecord));
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(
          fmt::format("{}: cannot write the kernel spill file ({}); free space beside the "
                      "output or give --memory-budget a larger size",
                      temp_->path().string(), n < 0 ? std::strerror(errno) : "no progress"));
    p += n, left -= static_cast<size_t>(n), at += n;
  }
  records_ += sorted.size();
  ++runs_;
  return run;
}

void KernelSpool::read(uint64_t first, std::span<SpillRecord> out) const {
  int fd = -1;
  std::filesystem::path path;
  {
    std::lock_guard lock(mutex_);
    if (first + out.size() > records_)
      throw Error(fmt::format("internal error: spill read of records {}..{} past the {} written",
                              first, first + out.size(), records_));
    fd = fd_;
    path = temp_ ? temp_->path() : std::filesystem::path{};
  }
  char* p = reinterpret_cast<char*>(out.data());
  size_t left = out.size_bytes();
  auto at = static_cast<off_t>(first * sizeof(SpillRecord));
  while (left > 0) {
    const ssize_t n = ::pread(fd, p, left, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(fmt::format("{}: cannot read the kernel spill file back ({})", path.string(),
                              n < 0 ? std::strerror(errno) : "it is shorter than written"));
    p += n, left -= static_cast<size_t>(n), at += n;
  }
}

std::filesystem::path KernelSpool::path() const {
  std::lock_guard lock(mutex_);
  return temp_ ? temp_->path() : std::filesystem::path{};
}

uint64_t KernelSpool::bytesWritten() const {
  std::lock_guard lock(mutex_);
  return records_ * sizeof(SpillRecord);
}

std::optional<uint64_t> parseByteSize(std::string_view text) {
  std::string_view num = text;
  size_t unitAt = 0;
  while (unitAt < num.size() &&
         (std::isdigit(static_cast<unsigned char>(num[unitAt])) || num[unitAt] == '.'))
    ++unitAt;
  std::string unit(num.substr(unitAt));
  num = num.substr(0, unitAt);
  if (num.empty() || num.front() == '.' || num.back() == '.') return std::nullopt;
  for (char& c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!unit.empty()) {
    static constexpr std::string_view kUnits = "KMGT";
    const size_t u = kUnits.find(unit[0]);
    if (u == std::string_view::npos) return std::nullopt;
    shift = 10 * static_cast<int>(u + 1);
    const std::string_view rest = std::string_view(unit).substr(1);
    if (!rest.empty() && rest != "B" && rest != "IB") return std::nullopt;
  } else if (num.find('.') != std::string_view::npos) {
    return std::nullopt;  // a fraction of a byte
  }
  if (num.find('.') == std::string_view::npos) {
    uint64_t v = 0;
    const auto r = std::from_chars(num.data(), num.data() + num.size(), v);
    if (r.ec != std::errc() || r.ptr != num.data() + num.size()) return std::nullopt;
    if (shift > 0 && v > (UINT64_MAX >> shift)) return std::nullopt;
    return v << shift;
  }
  double v = 0;
  const auto r = std::from_chars(num.data(), num.data() + num.size(), v);
  if (r.ec != std::errc() || r.ptr != num.data() + num.size()) return std::nullopt;
  const double bytes = std::ldexp(v, shift);
  if (!(bytes < 1.8e19)) return std::nullopt;
  return static_cast<uint64_t>(std::round(bytes));
}

}  // namespace wl
