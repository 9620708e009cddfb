// SPDX-License-Identifier: GPL-3.0-or-later
// Kineto JSON import throughput (docs/performance.md, "Kineto import").
//
// The input is made at start from a real rank trace (tests/data/kineto/hta-a100-nccl-metadata-
// rank0.json.gz: A100, NCCL metadata, 40k events, 9.8 MB) by repeating its events, each copy
// shifted in time by the trace's length, until the file passes 1 GiB. It is written to
// /tmp/wattline-bench-kineto-1g.json (reused by later runs when present) and never into the repo.
//
//   BM_KinetoParse        stream-parse the 1 GiB file into ImportedData (one thread)
//   BM_KinetoImport       the whole `wattline import`: parse, assemble, write the run
//   BM_KinetoParseGzip    the same events gzip-compressed (the first ~100 MB of copies)
//
// Peak memory is measured outside (see docs/performance.md): /usr/bin/time -v wattline import.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "loaders/import/import_job.h"
#include "loaders/import/json_stream.h"
#include "loaders/import/kineto_importer.h"

namespace {

constexpr uint64_t kTargetBytes = uint64_t{1} << 30;
const std::filesystem::path kBig = "/tmp/wattline-bench-kineto-1g.json";
const std::filesystem::path kGz = "/tmp/wattline-bench-kineto-100m.json.gz";

std::string gunzip(const std::filesystem::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// The raw text of every event of the source trace, plus the text before and after the array.
struct SourceTrace {
  std::string head, tail;
  std::vector<std::string> events;
  int64_t spanNs = 0;
};

SourceTrace loadSource() {
  const std::filesystem::path src = std::filesystem::path(WATTLINE_SOURCE_DIR) /
                                    "tests/data/kineto/hta-a100-nccl-metadata-rank0.json.gz";
  const std::string text = gunzip(src);
  const std::filesystem::path plain = "/tmp/wattline-bench-source.json";
  std::ofstream(plain, std::ios::binary)
      .write(text.data(), static_cast<std::streamsize>(text.size()));
  SourceTrace s;
  wl::import::JsonStream js(plain, {});
  js.expect('{');
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (;;) {
    const std::string key = js.readKey();
    if (key == "traceEvents") {
      js.expect('[');
      s.head = text.substr(0, js.offset());
      do {
        std::string ev(js.rawValue());
        const size_t at = ev.find("\"ts\": ");
        if (at != std::string::npos) {
          const size_t end = ev.find_first_of(",}", at + 6);
          if (auto ts = wl::import::parseMicrosToNs(ev.substr(at + 6, end - at - 6))) {
            lo = std::min(lo, *ts);
            hi = std::max(hi, *ts);
          }
        }
        s.events.push_back(std::move(ev));
      } while (js.nextMember(']'));
      s.tail = "]" + text.substr(js.offset());
      break;
    }
    js.skipValue();
    js.nextMember('}');
  }
  std::filesystem::remove(plain);
  s.spanNs = hi - lo + 1'000'000;
  return s;
}

// Writes copies of the events, copy k shifted by k x span, until `target` bytes.
void writeReplicated(const SourceTrace& s, uint64_t target, std::FILE* out, gzFile gz = nullptr) {
  auto put = [&](const std::string& t) {
    if (gz)
      gzwrite(gz, t.data(), static_cast<unsigned>(t.size()));
    else
      std::fwrite(t.data(), 1, t.size(), out);
  };
  put(s.head);
  uint64_t written = s.head.size();
  bool first = true;
  for (int64_t copy = 0; written < target; ++copy) {
    for (const std::string& ev : s.events) {
      std::string e = ev;
      const size_t at = e.find("\"ts\": ");
      if (at != std::string::npos) {
        const size_t end = e.find_first_of(",}", at + 6);
        if (auto ts = wl::import::parseMicrosToNs(e.substr(at + 6, end - at - 6))) {
          const int64_t ns = *ts + copy * s.spanNs;
          e.replace(at + 6, end - at - 6, fmt::format("{}.{:03}", ns / 1000, ns % 1000));
        }
      }
      if (!first) put(",\n  ");
      first = false;
      put(e);
      written += e.size() + 4;
    }
  }
  put(s.tail);
}

void prepareInputs() {
  static bool done = false;
  if (done) return;
  done = true;
  std::error_code ec;
  if (std::filesystem::exists(kBig, ec) && std::filesystem::file_size(kBig, ec) >= kTargetBytes &&
      std::filesystem::exists(kGz, ec))
    return;
  std::fprintf(stderr, "bench_import: writing %s and %s (once)...\n", kBig.c_str(), kGz.c_str());
  const SourceTrace s = loadSource();
  std::FILE* f = std::fopen(kBig.c_str(), "wb");
  writeReplicated(s, kTargetBytes, f);
  std::fclose(f);
  gzFile gz = gzopen(kGz.c_str(), "wb6");
  writeReplicated(s, 100u << 20, nullptr, gz);
  gzclose(gz);
}

uint64_t uncompressedSize(const std::filesystem::path& p) {
  if (p.extension() != ".gz") return std::filesystem::file_size(p);
  return gunzip(p).size();
}

void BM_KinetoParse(benchmark::State& state) {
  prepareInputs();
  const uint64_t bytes = std::filesystem::file_size(kBig);
  size_t events = 0;
  for (auto _ : state) {
    const wl::import::ImportedData d = wl::import::readKinetoTrace(kBig);
    events = 0;
    for (const auto& t : d.ranks[0].tracks)
      events += t.events.size();
    benchmark::DoNotOptimize(events);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["gpu_events"] = static_cast<double>(events);
  state.counters["input_MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_KinetoParse)->Unit(benchmark::kSecond)->Iterations(3)->UseRealTime();

void BM_KinetoImport(benchmark::State& state) {
  prepareInputs();
  const uint64_t bytes = std::filesystem::file_size(kBig);
  const std::filesystem::path out = "/tmp/wattline-bench-kineto-1g.h5";
  for (auto _ : state) {
    wl::import::ImportRequest req;
    req.inputs = {{kBig, {}}};
    req.output = out;
    wl::import::ImportJob job(req);
    benchmark::DoNotOptimize(job.run());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["output_MB"] = static_cast<double>(std::filesystem::file_size(out)) / 1e6;
}
BENCHMARK(BM_KinetoImport)->Unit(benchmark::kSecond)->Iterations(2)->UseRealTime();

void BM_KinetoParseGzip(benchmark::State& state) {
  prepareInputs();
  const uint64_t bytes = uncompressedSize(kGz);
  for (auto _ : state)
    benchmark::DoNotOptimize(wl::import::readKinetoTrace(kGz));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["gz_MB"] = static_cast<double>(std::filesystem::file_size(kGz)) / 1e6;
}
BENCHMARK(BM_KinetoParseGzip)->Unit(benchmark::kSecond)->Iterations(3)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
