// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/json_stream.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "loaders/core/error.h"

namespace wl::import {
namespace {

constexpr size_t kInitialBuffer = size_t{4} << 20;  // 4 MiB
constexpr size_t kMaxBuffer = size_t{1} << 32;      // one JSON value may not exceed 4 GiB
constexpr size_t kGzipInput = size_t{256} << 10;
constexpr uint64_t kReportEvery = uint64_t{8} << 20;

// Exact decimal arithmetic needs more than 64 bits; __extension__ keeps -Wpedantic quiet about
// the GCC/Clang builtin type.
__extension__ typedef unsigned __int128 U128;

bool isSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The first '"' or '\\' in [p, e), or e. May read up to 15 bytes past e (inside the padding).
const char* findStringSpecial(const char* p, const char* e) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (p < e) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int m =
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (m) return std::min(e, p + __builtin_ctz(static_cast<unsigned>(m)));
    p += 16;
  }
  return e;
#else
  for (; p < e; ++p)
    if (*p == '"' || *p == '\\') return p;
  return e;
#endif
}

// The first '"', '{', '}', '[' or ']' in [p, e), or e. May read up to 15 bytes past e.
const char* findStructural(const char* p, const char* e) {
#if defined(__SSE2__)
  // '[' | 0x20 == '{' and ']' | 0x20 == '}'; no other byte maps onto those two.
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  const __m128i lower = _mm_set1_epi8(0x20);
  while (p < e) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i f = _mm_or_si128(v, lower);
    const __m128i hit = _mm_or_si128(
        _mm_cmpeq_epi8(v, quote), _mm_or_si128(_mm_cmpeq_epi8(f, open), _mm_cmpeq_epi8(f, close)));
    const int m = _mm_movemask_epi8(hit);
    if (m) return std::min(e, p + __builtin_ctz(static_cast<unsigned>(m)));
    p += 16;
  }
  return e;
#else
  for (; p < e; ++p)
    if (*p == '"' || *p == '{' || *p == '}' || *p == '[' || *p == ']') return p;
  return e;
#endif
}

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool hex4(std::string_view s, size_t at, uint32_t& v) {
  if (at + 4 > s.size()) return false;
  v = 0;
  for (size_t i = at; i < at + 4; ++i) {
    const char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= static_cast<uint32_t>(c - 'A' + 10);
    else
      return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ByteReader

struct ByteReader::Inflater {
  z_stream zs{};
  std::unique_ptr<unsigned char[]> in{new unsigned char[kGzipInput]};
  bool streamEnded = false;  // the last member ended cleanly
  uint64_t totalOut = 0;
};

ByteReader::ByteReader(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("{}: is a folder, expected a file", path.string()));
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    throw Error(fmt::format("{}: cannot be opened: {}", path.string(), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) == 0) fileSize_ = static_cast<uint64_t>(st.st_size);
#if defined(POSIX_FADV_SEQUENTIAL)
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  unsigned char magic[2] = {0, 0};
  const ssize_t n = ::pread(fd_, magic, 2, 0);
  if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    gzip_ = true;
    z_ = std::make_unique<Inflater>();
    if (inflateInit2(&z_->zs, 15 + 32) != Z_OK)
      throw Error(fmt::format("{}: cannot start gzip decompression", path.string()));
  }
}

ByteReader::~ByteReader() {
  if (z_) inflateEnd(&z_->zs);
  if (fd_ >= 0) ::close(fd_);
}

uint64_t ByteReader::fileOffset() const {
  if (z_) return fileRead_ - z_->zs.avail_in;
  return fileRead_;
}

size_t ByteReader::read(char* dst, size_t n) {
  if (eof_ || n == 0) return 0;
  if (!gzip_) {
    for (;;) {
      const ssize_t r = ::read(fd_, dst, n);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0)
        throw Error(fmt::format("{}: read error at byte {}: {}", path_.string(), fileRead_,
                                std::strerror(errno)));
      if (r == 0) eof_ = true;
      fileRead_ += static_cast<uint64_t>(r);
      return static_cast<size_t>(r);
    }
  }
  z_stream& zs = z_->zs;
  zs.next_out = reinterpret_cast<Bytef*>(dst);
  zs.avail_out = static_cast<uInt>(std::min<size_t>(n, std::numeric_limits<uInt>::max()));
  const uInt want = zs.avail_out;
  while (zs.avail_out == want) {
    if (zs.avail_in == 0) {
      ssize_t r;
      do {
        r = ::read(fd_, z_->in.get(), kGzipInput);
      } while (r < 0 && errno == EINTR);
      if (r < 0)
        throw Error(fmt::format("{}: read error at byte {}: {}", path_.string(), fileRead_,
                                std::strerror(errno)));
      fileRead_ += static_cast<uint64_t>(r);
      if (r == 0) {
        if (!z_->streamEnded)
          throw Error(fmt::format(
              "{}: truncated gzip data: the compressed stream ends at byte {} before its end "
              "marker (after {} bytes of uncompressed data)",
              path_.string(), fileRead_, z_->totalOut));
        eof_ = true;
        return 0;
      }
      zs.next_in = z_->in.get();
      zs.avail_in = static_cast<uInt>(r);
      if (z_->streamEnded) {
        // Another gzip member follows (concatenated .gz files), or trailing garbage.
        if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
          inflateReset(&zs);
          z_->streamEnded = false;
        } else {
          eof_ = true;  // trailing bytes after the last member are ignored, as gzip does
          return 0;
        }
      }
    }
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      z_->streamEnded = true;
      if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
        inflateReset(&zs);
        z_->streamEnded = false;
      } else if (zs.avail_in > 0) {
        zs.avail_in = 0;  // trailing garbage
      }
      if (zs.avail_out != want) break;
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) continue;  // needs more input
    if (rc != Z_OK)
      throw Error(fmt::format("{}: corrupt gzip data near compressed byte {}: {}", path_.string(),
                              fileOffset(), zs.msg ? zs.msg : "inflate failed"));
  }
  const size_t got = want - zs.avail_out;
  z_->totalOut += got;
  return got;
}

// ---------------------------------------------------------------------------------------------
// JsonStream

JsonStream::JsonStream(const std::filesystem::path& path, Progress progress)
    : reader_(path), progress_(std::move(progress)), fileName_(path.string()) {
  cap_ = kInitialBuffer;
  buf_.reset(new char[cap_ + kPadding]);
  std::memset(buf_.get(), 0, cap_ + kPadding);
  // A UTF-8 byte order mark (written by some Windows tools) is not part of the JSON text.
  while (end_ < 3 && fill()) {
  }
  if (end_ >= 3 && std::memcmp(buf_.get(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;
}

JsonStream::~JsonStream() = default;

std::string JsonStream::where() const {
  std::string p = path_.empty() ? std::string("the top level") : path_;
  if (index_ >= 0) p += fmt::format("[{}]", index_);
  return fmt::format("{} (byte {})", p, offset());
}

void JsonStream::fail(std::string_view what) const {
  throw Error(fmt::format("{}: at {}: {}", fileName_, where(), what));
}

void JsonStream::failTruncated() const {
  std::string p = path_.empty() ? std::string("the top level") : path_;
  if (index_ >= 0) p += fmt::format("[{}]", index_);
  throw Error(fmt::format("{}: truncated JSON: the data ends at byte {} inside {}", fileName_,
                          consumed_ + end_, p));
}

void JsonStream::reportProgress() {
  if (!progress_.active()) return;
  const uint64_t size = reader_.fileSize();
  const uint64_t at = reader_.fileOffset();
  progress_.report(size ? std::min(1.0, static_cast<double>(at) / static_cast<double>(size)) : 0.0,
                   "reading");
}

bool JsonStream::fill() {
  if (eof_) return false;
  if (pos_ > 0) {
    std::memmove(buf_.get(), buf_.get() + pos_, end_ - pos_);
    end_ -= pos_;
    consumed_ += pos_;
    pos_ = 0;
  }
  if (end_ == cap_) {
    if (cap_ >= kMaxBuffer) fail("a single JSON value is larger than 4 GiB");
    const size_t cap = cap_ * 2;
    std::unique_ptr<char[]> bigger(new char[cap + kPadding]);
    std::memcpy(bigger.get(), buf_.get(), end_);
    std::memset(bigger.get() + end_, 0, cap + kPadding - end_);
    buf_ = std::move(bigger);
    cap_ = cap;
  }
  const size_t n = reader_.read(buf_.get() + end_, cap_ - end_);
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  if (consumed_ + end_ - lastReport_ >= kReportEvery) {
    lastReport_ = consumed_ + end_;
    reportProgress();
  }
  return true;
}

char JsonStream::peek() {
  for (;;) {
    while (pos_ < end_ && isSpace(buf_[pos_]))
      ++pos_;
    if (pos_ < end_) return buf_[pos_];
    if (!fill()) return 0;
  }
}

bool JsonStream::atEnd() {
  return peek() == 0;
}

std::string_view JsonStream::lookahead(size_t n) {
  peek();
  while (end_ - pos_ < n && fill()) {
  }
  return std::string_view(buf_.get() + pos_, std::min(n, end_ - pos_));
}

void JsonStream::expect(char c) {
  const char got = peek();
  if (got == c) {
    ++pos_;
    return;
  }
  if (got == 0) failTruncated();
  fail(fmt::format("expected '{}', found {}", c,
                   describeBytes(std::string_view(buf_.get() + pos_, end_ - pos_), 16)));
}

bool JsonStream::nextMember(char close) {
  const char c = peek();
  if (c == ',') {
    ++pos_;
    return true;
  }
  if (c == close) {
    ++pos_;
    return false;
  }
  if (c == 0) failTruncated();
  fail(fmt::format("expected ',' or '{}', found {}", close,
                   describeBytes(std::string_view(buf_.get() + pos_, end_ - pos_), 16)));
}

size_t JsonStream::scan(ScanState& s) {
  const char* base = buf_.get() + pos_;
  const char* e = buf_.get() + end_;
  const char* p = base + s.at;
  if (!s.started) {
    if (p >= e) return std::string_view::npos;
    s.started = true;
    const char c = *p;
    if (c == '{' || c == '[') {
      s.depth = 1;
      ++p;
    } else if (c == '"') {
      s.inString = true;
      ++p;
    } else {
      s.scalar = true;
    }
  }
  if (s.scalar) {
    while (p < e) {
      const char c = *p;
      if (c == ',' || c == '}' || c == ']' || isSpace(c)) return static_cast<size_t>(p - base);
      ++p;
    }
    s.at = static_cast<size_t>(p - base);
    if (eof_) return static_cast<size_t>(p - base);
    return std::string_view::npos;
  }
  for (;;) {
    if (s.inString) {
      const char* q = findStringSpecial(p, e);
      if (q == e) {
        p = e;
        break;
      }
      if (*q == '\\') {
        if (q + 1 >= e) {
          p = q;
          break;
        }
        p = q + 2;
        continue;
      }
      s.inString = false;
      p = q + 1;
      if (s.depth == 0) return static_cast<size_t>(p - base);
      continue;
    }
    const char* q = findStructural(p, e);
    if (q == e) {
      p = e;
      break;
    }
    const char c = *q;
    p = q + 1;
    if (c == '"') {
      s.inString = true;
    } else if (c == '{' || c == '[') {
      ++s.depth;
    } else if (--s.depth == 0) {
      return static_cast<size_t>(p - base);
    }
  }
  s.at = static_cast<size_t>(p - base);
  return std::string_view::npos;
}

std::string_view JsonStream::rawValue() {
  if (peek() == 0) failTruncated();
  ScanState s;
  for (;;) {
    const size_t n = scan(s);
    if (n != std::string_view::npos) {
      const std::string_view v(buf_.get() + pos_, n);
      pos_ += n;
      return v;
    }
    if (!fill()) failTruncated();
  }
}

void JsonStream::skipValue() {
  if (peek() == 0) failTruncated();
  ScanState s;
  for (;;) {
    const size_t n = scan(s);
    if (n != std::string_view::npos) {
      pos_ += n;
      return;
    }
    // Drop what was scanned; keep a pending backslash escape.
    pos_ += s.at;
    s.at = 0;
    if (!fill()) failTruncated();
  }
}

std::string JsonStream::readKey() {
  const char c = peek();
  if (c != '"') {
    if (c == 0) failTruncated();
    fail(fmt::format("expected a key in quotes, found {}",
                     describeBytes(std::string_view(buf_.get() + pos_, end_ - pos_), 16)));
  }
  const std::string_view raw = rawValue();
  std::string key;
  if (raw.size() < 2 || !unescapeJsonString(raw.substr(1, raw.size() - 2), key))
    fail("a key has an invalid escape sequence");
  expect(':');
  return key;
}

// ---------------------------------------------------------------------------------------------
// Numbers and strings

std::optional<int64_t> parseDecimalScaled(std::string_view s, int scaleDigits) {
  while (!s.empty() && isSpace(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back()))
    s.remove_suffix(1);
  size_t i = 0;
  const size_t n = s.size();
  bool negative = false;
  if (i < n && s[i] == '-') {
    negative = true;
    ++i;
  }
  U128 mant = 0;
  int sig = 0;
  int exp10 = scaleDigits;
  constexpr int kMaxSig = 36;
  size_t digits = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; ++i, ++digits) {
    const unsigned d = static_cast<unsigned>(s[i] - '0');
    if (sig < kMaxSig) {
      mant = mant * 10 + d;
      if (mant != 0) ++sig;
    } else {
      ++exp10;
    }
  }
  if (digits == 0) return std::nullopt;
  if (i < n && s[i] == '.') {
    ++i;
    size_t frac = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; ++i, ++frac) {
      if (sig < kMaxSig) {
        mant = mant * 10 + static_cast<unsigned>(s[i] - '0');
        if (mant != 0) ++sig;
        --exp10;
      }
    }
    if (frac == 0) return std::nullopt;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool expNeg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) expNeg = s[i++] == '-';
    int e = 0;
    size_t ed = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; ++i, ++ed)
      if (e < 100000) e = e * 10 + (s[i] - '0');
    if (ed == 0) return std::nullopt;
    exp10 += expNeg ? -e : e;
  }
  if (i != n) return std::nullopt;
  constexpr U128 kLimit = U128{1} << 63;  // |INT64_MIN|
  if (mant == 0) return 0;
  if (exp10 >= 0) {
    for (int k = 0; k < exp10; ++k) {
      mant *= 10;
      if (mant > kLimit) return std::nullopt;
    }
  } else {
    if (exp10 < -38) return 0;
    U128 p = 1;
    for (int k = 0; k < -exp10; ++k)
      p *= 10;
    const U128 q = mant / p;
    const U128 r = mant % p;
    mant = q + (2 * r >= p ? 1 : 0);
  }
  if (mant > kLimit || (!negative && mant == kLimit)) return std::nullopt;
  if (negative)
    return mant == kLimit ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(mant);
  return static_cast<int64_t>(mant);
}

std::optional<int64_t> parseMicrosToNs(std::string_view token) {
  return parseDecimalScaled(token, 3);
}

bool unescapeJsonString(std::string_view raw, std::string& out) {
  out.clear();
  const size_t bs = raw.find('\\');
  if (bs == std::string_view::npos) {
    out.assign(raw);
    return true;
  }
  out.reserve(raw.size());
  out.append(raw.substr(0, bs));
  for (size_t i = bs; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= raw.size()) return false;
    switch (raw[i]) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(raw, i + 1, cp)) return false;
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo = 0;
          if (i + 2 < raw.size() && raw[i + 1] == '\\' && raw[i + 2] == 'u' &&
              hex4(raw, i + 3, lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

std::string describeBytes(std::string_view b, size_t max) {
  if (b.empty()) return "the end of the data";
  auto starts = [&](std::string_view magic) { return b.substr(0, magic.size()) == magic; };
  if (starts("\x89PNG")) return "a PNG image";
  if (starts(std::string_view("SQLite format 3\0", 16))) return "an SQLite database";
  if (starts("\x89HDF")) return "an HDF5 file";
  if (starts("%PDF")) return "a PDF document";
  if (starts("PK\x03\x04")) return "a ZIP archive";
  if (starts("\x1f\x8b")) return "gzip data";
  const std::string_view head = b.substr(0, max);
  size_t binary = 0;
  for (char c : head) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\r' && c != '\t') ++binary;
  }
  std::string out;
  if (binary > 0) {
    out = "binary data (";
    for (size_t i = 0; i < std::min<size_t>(head.size(), 8); ++i)
      out += fmt::format("{}{:02x}", i ? " " : "", static_cast<unsigned char>(head[i]));
    return out + ")";
  }
  out = "\"";
  for (char c : head) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  out += '"';
  if (b.size() > max) out += "...";
  return out;
}

}  // namespace wl::import
