// SPDX-License-Identifier: GPL-3.0-or-later
// Writes a synthetic multi-rank Kineto trace for the import memory benchmark (docs/performance.md
// "Import"): gen_kineto FOLDER RANKS EVENTS_PER_RANK writes FOLDER/rank-N.json.
//
// Model (the same as tests/importers/spill_test.cpp): per rank three streams; on each, events
// follow each other with gaps of 0..3 us and last 1..40 us (whole microseconds); every 7th event of
// a stream starts with the previous one; one event in 10 is an NCCL allreduce on stream 2 with
// collective metadata, one in 25 a memcpy, the rest compute kernels with one of 50 names; events
// are written shuffled within windows of 64. Almost every event is a GPU event (~230 B of JSON
// each), so the trace is dominated by what the import must keep.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace {

void writeRank(const std::filesystem::path& file, int rank, int ranks, size_t events) {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) throw std::runtime_error(fmt::format("{}: cannot write", file.string()));
  std::mt19937 rng(1000u + static_cast<uint32_t>(rank));
  fmt::print(f,
             "{{\n \"schemaVersion\": 1,\n \"distributedInfo\": {{\"backend\": \"nccl\", "
             "\"rank\": {}, \"world_size\": {}}},\n \"deviceProperties\": [{{\"id\": {}, "
             "\"name\": \"NVIDIA H100 80GB HBM3\"}}],\n \"baseTimeNanoseconds\": "
             "1700000000000000000,\n \"traceEvents\": [\n",
             rank, ranks, rank);
  std::array<int64_t, 3> clock{1000, 1000, 1000}, lastStart{};
  std::array<size_t, 3> made{};
  std::vector<std::string> window;
  bool first = true;
  auto flush = [&] {
    std::shuffle(window.begin(), window.end(), rng);
    for (const std::string& line : window) {
      std::fputs(first ? "  " : ",\n  ", f);
      std::fputs(line.c_str(), f);
      first = false;
    }
    window.clear();
  };
  for (size_t i = 0; i < events; ++i) {
    const int kind = i % 10 == 3 ? 2 : i % 25 == 7 ? 1 : 0;
    const size_t s = kind == 2 ? 2 : rng() % 2;
    int64_t ts = clock[s] + static_cast<int64_t>(rng() % 4);
    if (++made[s] % 7 == 0) ts = lastStart[s];
    const int64_t dur = 1 + static_cast<int64_t>(rng() % 40);
    lastStart[s] = ts;
    clock[s] = std::max(clock[s], ts + dur);
    std::string args =
        fmt::format(R"("device": {}, "stream": {}, "correlation": {})", rank, 7 + s, i + 1);
    std::string name, cat = "kernel";
    if (kind == 2) {
      name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
      args += fmt::format(
          R"(, "Collective name": "allreduce", "In msg nelems": {}, "Out msg nelems": {}, )"
          R"("Group size": {}, "dtype": "Float", "Process Group Name": "{}", )"
          R"("Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]")",
          1024 * (i % 5 + 1), 1024 * (i % 5 + 1), ranks, i % 20 == 3 ? 1 : 0);
    } else if (kind == 1) {
      name = "Memcpy HtoD (Pageable -> Device)";
      cat = "gpu_memcpy";
    } else {
      name = fmt::format("void gemm_kernel_{}<float>(Params)", rng() % 50);
    }
    window.push_back(fmt::format(
        R"({{"ph": "X", "cat": "{}", "name": "{}", "pid": {}, "tid": {}, "ts": {}, "dur": {}, )"
        R"("args": {{{}}}}})",
        cat, name, rank, 7 + s, ts, dur, args));
    if (window.size() == 64) flush();
  }
  flush();
  std::fputs("\n ]\n}\n", f);
  if (std::fclose(f) != 0) throw std::runtime_error(fmt::format("{}: write failed", file.string()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fputs("usage: gen_kineto FOLDER RANKS EVENTS_PER_RANK\n", stderr);
    return 2;
  }
  const std::filesystem::path folder = argv[1];
  const int ranks = std::stoi(argv[2]);
  const auto events = static_cast<size_t>(std::stoull(argv[3]));
  std::filesystem::create_directories(folder);
  for (int r = 0; r < ranks; ++r)
    writeRank(folder / fmt::format("rank-{}.json", r), r, ranks, events);
  return 0;
}
