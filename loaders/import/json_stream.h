// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A forward-only reader of one JSON text in a file (plain or gzip) that holds at most one value
// of it in memory at a time.
//
// Kernel traces reach several GB per rank, so they are never parsed into a DOM. JsonStream walks
// the structure (objects, keys, arrays) itself and hands out one complete value at a time as raw
// text (rawValue()), which the caller parses with a fast parser (simdjson on-demand, or
// nlohmann-json for small values). Values the caller does not want are skipped without being kept
// (skipValue()), so an unknown multi-GB member costs no memory.
//
// The buffer has kPadding readable bytes past the end of every value, as simdjson requires.
// Errors are wl::Error with one line: "FILE: at PATH (byte N): what was expected, what was found".
// The caller keeps the JSON path up to date cheaply with setPath()/setIndex().

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "loaders/core/progress.h"

namespace wl::import {

// Reads the bytes of a plain or gzip file. Truncated or corrupt gzip data throws wl::Error.
class ByteReader {
 public:
  explicit ByteReader(const std::filesystem::path& path);
  ~ByteReader();
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;

  // Reads up to n bytes; returns 0 at the end of the data.
  size_t read(char* dst, size_t n);
  bool gzip() const { return gzip_; }
  // Bytes of the file consumed so far (compressed bytes for gzip) and the file's size: progress.
  uint64_t fileOffset() const;
  uint64_t fileSize() const { return fileSize_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool gzip_ = false;
  bool eof_ = false;
  uint64_t fileSize_ = 0;
  uint64_t fileRead_ = 0;
  struct Inflater;
  std::unique_ptr<Inflater> z_;
};

class JsonStream {
 public:
  static constexpr size_t kPadding = 64;

  JsonStream(const std::filesystem::path& path, Progress progress);
  ~JsonStream();
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;

  // The next non-whitespace character without consuming it; 0 at the end of the data.
  char peek();
  // Consumes the next non-whitespace character, which must be c.
  void expect(char c);
  // Inside an object after '{' or a value: consumes ',' or '}'. Returns false at '}'.
  // Inside an array after '[' or an element: consumes ',' or ']'. Returns false at ']'.
  bool nextMember(char close);
  // Reads a key and its ':' (the cursor must be at the key's opening quote).
  std::string readKey();
  // The next complete value as raw JSON text; valid (with kPadding readable bytes after it)
  // until the next call on this stream.
  std::string_view rawValue();
  // Skips the next value without keeping it.
  void skipValue();
  // True when only whitespace is left.
  bool atEnd();
  // Up to n bytes from the cursor (after whitespace), for messages about what was found.
  std::string_view lookahead(size_t n);

  // The JSON path reported in errors: "traceEvents" + "[index]" when index >= 0.
  void setPath(std::string path, int64_t index = -1) {
    path_ = std::move(path);
    index_ = index;
  }
  void setIndex(int64_t index) { index_ = index; }
  std::string where() const;  // "traceEvents[12] (byte 4567)"
  uint64_t offset() const { return consumed_ + pos_; }
  const std::string& fileName() const { return fileName_; }

  // Throws wl::Error "FILE: at PATH (byte N): what".
  [[noreturn]] void fail(std::string_view what) const;

  // Reports progress (bytes of the file consumed) and lets the user cancel.
  void reportProgress();

 private:
  bool fill();  // reads more data; false at EOF. Keeps [pos_, end_) and moves it to the front.
  // Scans a value starting at pos_ + from; returns its length from pos_ or npos if it needs
  // more data. State carries across calls for the same value.
  struct ScanState {
    int depth = 0;
    bool inString = false;
    bool started = false;
    bool scalar = false;
    size_t at = 0;  // offset from pos_ where scanning resumes
  };
  size_t scan(ScanState& s);
  [[noreturn]] void failTruncated() const;

  ByteReader reader_;
  Progress progress_;
  std::string fileName_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;  // usable capacity (allocation is cap_ + kPadding)
  size_t pos_ = 0, end_ = 0;
  uint64_t consumed_ = 0;  // bytes before buf_[0]
  bool eof_ = false;
  std::string path_;
  int64_t index_ = -1;
  uint64_t lastReport_ = 0;
};

// Parses a JSON number token (or the text of a numeric string) that counts microseconds into
// integer nanoseconds, exactly: the digits are never converted through a double, so epoch
// microseconds with a fractional part keep every nanosecond. Rounds half away from zero below
// 1 ns. Returns nullopt for anything that is not a finite JSON number or overflows int64.
std::optional<int64_t> parseMicrosToNs(std::string_view token);
// The same for a number that already counts units (ns, elements): scale 10^0.
std::optional<int64_t> parseDecimalScaled(std::string_view token, int scaleDigits);
// Decodes the contents of a JSON string (without its quotes); returns false on a bad escape.
bool unescapeJsonString(std::string_view raw, std::string& out);
// A short printable excerpt of raw bytes for error messages: `"Index,KernelName"...` or a hex
// dump for binary data.
std::string describeBytes(std::string_view bytes, size_t max = 24);

}  // namespace wl::import
