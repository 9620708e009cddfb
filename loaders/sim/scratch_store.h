// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Scratch storage that keeps the simulator's memory bounded.
//
// The simulator advances every GPU together in time, but RunWriter takes telemetry one GPU at a
// time and kernels one track at a time. Records are therefore buffered per entity and, when the
// buffers grow past a limit, appended to an unnamed scratch file beside the output (created and
// unlinked at once, so nothing is left behind, even after a crash). take() reads one entity's
// records back in the order they were pushed.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

namespace wl::sim {

class ScratchFile {
 public:
  explicit ScratchFile(const std::filesystem::path& directory);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  uint64_t append(const void* data, size_t bytes);
  void read(uint64_t offset, void* data, size_t bytes) const;
  uint64_t size() const { return size_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::filesystem::path dir_;
};

template <typename Record>
class RecordSpill {
 public:
  RecordSpill(ScratchFile& file, size_t entities, size_t flushBytes)
      : file_(file),
        buffers_(entities),
        chunks_(entities),
        counts_(entities, 0),
        flushRecords_(std::max<size_t>(1, flushBytes / sizeof(Record))) {}

  void push(size_t entity, const Record& r) {
    buffers_[entity].push_back(r);
    ++counts_[entity];
    if (++buffered_ >= flushRecords_) flush();
  }
  size_t count(size_t entity) const { return counts_[entity]; }
  size_t entities() const { return buffers_.size(); }

  // All records of an entity, in push order. Releases them.
  std::vector<Record> take(size_t entity) {
    std::vector<Record> out;
    out.reserve(counts_[entity]);
    for (const auto& [offset, n] : chunks_[entity]) {
      const size_t at = out.size();
      out.resize(at + n);
      file_.read(offset, out.data() + at, n * sizeof(Record));
    }
    out.insert(out.end(), buffers_[entity].begin(), buffers_[entity].end());
    buffered_ -= buffers_[entity].size();
    std::vector<Record>().swap(buffers_[entity]);
    chunks_[entity].clear();
    return out;
  }

  void flush() {
    for (size_t e = 0; e < buffers_.size(); ++e) {
      std::vector<Record>& b = buffers_[e];
      if (b.empty()) continue;
      const uint64_t offset = file_.append(b.data(), b.size() * sizeof(Record));
      chunks_[e].emplace_back(offset, b.size());
      b.clear();
    }
    buffered_ = 0;
  }

 private:
  ScratchFile& file_;
  std::vector<std::vector<Record>> buffers_;
  std::vector<std::vector<std::pair<uint64_t, size_t>>> chunks_;
  std::vector<size_t> counts_;
  size_t flushRecords_;
  size_t buffered_ = 0;
};

}  // namespace wl::sim
