// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/kernel_spool.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "loaders/core/error.h"

namespace wl {

KernelSpool::KernelSpool(const std::filesystem::path& target, size_t budgetBytes)
    : target_(target), budget_(budgetBytes) {}

KernelSpool::~KernelSpool() {
  if (fd_ >= 0) ::close(fd_);
  // temp_ removes the file.
}

uint64_t KernelSpool::append(const void* data, size_t bytes) {
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
  const uint64_t start = bytes_;
  const char* p = static_cast<const char*>(data);
  size_t left = bytes;
  auto at = static_cast<off_t>(bytes_);
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
  bytes_ += bytes;
  return start;
}

void KernelSpool::readAt(uint64_t at, void* out, size_t bytes) const {
  int fd = -1;
  std::filesystem::path path;
  {
    std::lock_guard lock(mutex_);
    if (at + bytes > bytes_)
      throw Error(fmt::format("internal error: spill read of bytes {}..{} past the {} written", at,
                              at + bytes, bytes_));
    fd = fd_;
    path = temp_ ? temp_->path() : std::filesystem::path{};
  }
  char* p = static_cast<char*>(out);
  size_t left = bytes;
  auto pos = static_cast<off_t>(at);
  while (left > 0) {
    const ssize_t n = ::pread(fd, p, left, pos);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(fmt::format("{}: cannot read the kernel spill file back ({})", path.string(),
                              n < 0 ? std::strerror(errno) : "it is shorter than written"));
    p += n, left -= static_cast<size_t>(n), pos += n;
  }
}

SpillRun KernelSpool::write(std::span<const SpillRecord> sorted) {
  std::lock_guard lock(mutex_);
  const SpillRun run{append(sorted.data(), sorted.size_bytes()), sorted.size()};
  ++runs_;
  return run;
}

void KernelSpool::read(uint64_t at, std::span<SpillRecord> out) const {
  readAt(at, out.data(), out.size_bytes());
}

uint64_t KernelSpool::writeCollectives(std::span<const CollectiveInfo> collectives) {
  static_assert(std::is_trivially_copyable_v<CollectiveInfo>);
  std::lock_guard lock(mutex_);
  return append(collectives.data(), collectives.size_bytes());
}

std::vector<CollectiveInfo> KernelSpool::readCollectives(uint64_t at, size_t count) const {
  std::vector<CollectiveInfo> out(count);
  readAt(at, out.data(), count * sizeof(CollectiveInfo));
  return out;
}

uint64_t KernelSpool::writeBytes(std::span<const std::span<const std::byte>> pieces) {
  std::lock_guard lock(mutex_);
  const uint64_t at = bytes_;
  for (const std::span<const std::byte> piece : pieces)
    append(piece.data(), piece.size());
  return at;
}

std::shared_ptr<SpilledTable> writeTable(const std::shared_ptr<KernelSpool>& spool,
                                         const TelemetryTable& table) {
  auto out = std::make_shared<SpilledTable>();
  out->spool = spool;
  out->rows = table.t_ns.size();
  out->throttle = !table.throttle_reasons.empty();
  const std::vector<int64_t>& t = table.t_ns;
  out->sorted = std::is_sorted(t.begin(), t.end());
  if (!t.empty()) {
    const auto [mn, mx] = std::minmax_element(t.begin(), t.end());
    out->minT = *mn, out->maxT = *mx;
  }
  // One record after another, written at once (other readers write to the same file): the times,
  // each column, the masks; offsets follow from `rows`.
  std::vector<std::span<const std::byte>> pieces{std::as_bytes(std::span(t))};
  for (const TelemetryColumn& c : table.columns) {
    if (c.values.size() != t.size())
      throw Error(fmt::format("internal error: spilled metric {} has {} values for {} times",
                              c.metric, c.values.size(), t.size()));
    out->metrics.push_back(c.metric);
    pieces.push_back(std::as_bytes(std::span(c.values)));
  }
  if (out->throttle) {
    if (table.throttle_reasons.size() != t.size())
      throw Error("internal error: spilled throttle masks do not match the times");
    pieces.push_back(std::as_bytes(std::span(table.throttle_reasons)));
  }
  out->at = spool->writeBytes(pieces);
  return out;
}

TelemetryTable readTable(const SpilledTable& s) {
  TelemetryTable table;
  const size_t n = s.rows;
  uint64_t at = s.at;
  table.t_ns.resize(n);
  s.spool->readBytes(at, table.t_ns.data(), n * sizeof(int64_t));
  at += n * sizeof(int64_t);
  for (int64_t& t : table.t_ns)
    t += s.shift_ns;
  table.columns.resize(s.metrics.size());
  for (size_t c = 0; c < s.metrics.size(); ++c) {
    table.columns[c].metric = s.metrics[c];
    table.columns[c].values.resize(n);
    s.spool->readBytes(at, table.columns[c].values.data(), n * sizeof(double));
    at += n * sizeof(double);
  }
  if (s.throttle) {
    table.throttle_reasons.resize(n);
    s.spool->readBytes(at, table.throttle_reasons.data(), n * sizeof(uint32_t));
  }
  return table;
}

size_t tableBytes(const TelemetryTable& table) {
  size_t bytes = table.t_ns.capacity() * sizeof(int64_t) +
                 table.throttle_reasons.capacity() * sizeof(uint32_t);
  for (const TelemetryColumn& c : table.columns)
    bytes += c.values.capacity() * sizeof(double) + sizeof(TelemetryColumn);
  return bytes;
}

std::filesystem::path KernelSpool::path() const {
  std::lock_guard lock(mutex_);
  return temp_ ? temp_->path() : std::filesystem::path{};
}

uint64_t KernelSpool::bytesWritten() const {
  std::lock_guard lock(mutex_);
  return bytes_;
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
