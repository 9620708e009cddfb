// SPDX-License-Identifier: GPL-3.0-or-later
// The fuzz targets (targets.h): one per importer's parser, the CharLLM-PPT folder, the two
// experiment-matrix readers, the run-file reader (and the analyses over what it read), the
// command-line argument parser and the --range parser.
#include "targets.h"

#include <fmt/format.h>
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "app/cli/arg_parser.h"
#include "app/cli/range_args.h"
#include "fuzz_support.h"
#include "loaders/core/error.h"
#include "loaders/core/time_format.h"
#include "loaders/format/run_file.h"
#include "loaders/import/assemble.h"
#include "loaders/import/import_job.h"
#include "loaders/import/telemetry/charllm_matrix.h"
#include "loaders/sim/experiment_matrix.h"
#include "loaders/sim/sim_config.h"

namespace wl::fuzz {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz: broken invariant: %s\n", what.c_str());
  std::abort();
}

void importAs(std::string_view importer, Bytes data) {
  importBytes(importer, asText(data), optionsFor(asText(data)));
}

// ---- Importers, one file each.

void kineto(Bytes d) {
  importAs("kineto", d);
}
void rocprofv3(Bytes d) {
  importAs("rocprofv3", d);
}
void rocprofCsv(Bytes d) {
  importAs("rocprof-csv", d);
}
void nsys(Bytes d) {
  importAs("nsys-sqlite", d);
}
void nvidiaSmiCsv(Bytes d) {
  importAs("nvidia-smi-csv", d);
}
void nvidiaSmiDmon(Bytes d) {
  importAs("nvidia-smi-dmon", d);
}
// DCGM: the dmon text and the long CSV share the field table; one input goes through both.
void dcgm(Bytes d) {
  importAs("dcgm-dmon", d);
  importAs("dcgm-csv", d);
}
void amdSmi(Bytes d) {
  importAs("amd-smi-csv", d);
}
// Zeus: the power monitor CSV and the measurement-window CSV.
void zeus(Bytes d) {
  importAs("zeus-monitor", d);
  importAs("zeus-windows", d);
}

// ---- A whole import (`wattline import --format F IN -o OUT`): read, assemble (clock alignment,
// GPU and rank mapping) and write the run file with its pyramids, into the scratch folder. The
// first byte picks the format (0: detect it from the content); the rest is the file.

void importJob(Bytes d) {
  static const std::vector<std::string_view> formats = [] {
    std::vector<std::string_view> f{""};
    for (const auto& i : import::importers())
      if (i->name() != "charllm") f.push_back(i->name());
    return f;
  }();
  if (d.empty()) return;
  const std::string_view format = formats[d[0] % formats.size()];
  const std::string_view text = asText(d.subspan(1));
  MemFile file(text, "fuzz-import");
  const fs::path out = scratchDir() / "import" / "run.h5";
  fs::create_directories(out.parent_path());
  import::ImportRequest req;
  req.inputs.push_back({file.path(), std::string(format)});
  req.output = out;
  req.options = optionsFor(text);
  try {
    import::ImportJob job(std::move(req));
    (void)job.run();
  } catch (const Error& e) {
    noteError(e);
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out.parent_path(), ec))
    if (e.path().filename() != "run.h5")
      broken("a failed or finished import left " + e.path().filename().string());
  fs::remove(out, ec);
}

// ---- CharLLM-PPT: a results folder written from one input. Without a NUL byte the input is one
// file, gpu_power_0.csv; with NUL bytes it is several files, each "NAME\nCONTENT", NAME relative
// to the run folder ("gpu_util_1.csv", "system_cpu_usage_rank_0_id_3.csv",
// "123_kineto/rank-0.json", "experiment-matrix.csv").

std::string safeName(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 80)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.' || c == '/';
    if (ok) out += c;
  }
  while (!out.empty() && out.front() == '/')
    out.erase(out.begin());
  if (out.find("..") != std::string::npos) return {};
  return out;
}

void charllm(Bytes d) {
  const std::string_view text = asText(d);
  const fs::path results = scratchDir() / "charllm";
  const fs::path run = results / "inference" / "gpt3-175b" / "gpt3-175b_1_mbs1";
  fs::create_directories(run);
  clearDir(results / "inference" / "gpt3-175b");
  fs::create_directories(run);
  if (text.find('\0') == std::string_view::npos) {
    if (!writeFile(run / "gpu_power_0.csv", text))
      throw std::runtime_error("fuzz: cannot write " + (run / "gpu_power_0.csv").string());
  } else {
    size_t at = 0;
    for (int files = 0; files < 16 && at <= text.size(); ++files) {
      size_t end = text.find('\0', at);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view part = text.substr(at, end - at);
      at = end + 1;
      const size_t nl = part.find('\n');
      const std::string name = safeName(part.substr(0, nl));
      if (name.empty() || nl == std::string_view::npos) continue;
      // A part the folder cannot hold ("." or "a/" as a file, "a" after "a/b", "a/b" after "a")
      // is left out, as a real results folder could not hold it either.
      (void)writeFile(run / name, part.substr(nl + 1));
    }
  }
  const import::Importer* imp = import::findImporter("charllm");
  (void)import::detectImporter(probeOf(run));
  try {
    checkImported(imp->read(run, optionsFor(text), Progress{}));
  } catch (const Error& e) {
    noteError(e);
  }
}

// ---- The experiment matrix: the simulator's reader (`simulate --from-matrix`) with the lookup
// and validation a configuration goes through, and the importer's CharLLM-PPT table.

void experimentMatrix(Bytes d) {
  const std::string_view text = asText(d);
  {
    MemFile file(text);
    try {
      const std::vector<sim::MatrixEntry> rows = sim::readExperimentMatrix(file.path());
      for (size_t i = 0; i < rows.size() && i < 4; ++i) {
        try {
          const sim::MatrixEntry& e = sim::findMatrixEntry(rows, rows[i].name, rows[i].platformId,
                                                           rows[i].modelId, file.path());
          sim::SimConfig c;
          sim::applyMatrixEntry(e, c);
          sim::resolveDefaults(c);
          sim::validateConfig(c);
        } catch (const Error& e) {
          noteError(e);
        }
      }
    } catch (const Error& e) {
      noteError(e);
    }
  }
  try {
    const auto rows = import::charllm::parseMatrix(text, "fuzz.csv");
    if (!rows.empty()) {
      const auto& first = rows.front();
      const auto name = first.find("name");
      const auto model = first.find("model");
      const auto sweep = first.find("sweep");
      (void)import::charllm::lookupRun(rows, name != first.end() ? name->second : "",
                                       model != first.end() ? model->second : "",
                                       sweep != first.end() ? sweep->second : "");
    }
  } catch (const Error& e) {
    noteError(e);
  }
}

// ---- The run-file reader on mutated HDF5 files: open (validation), then every read the
// timeline, the CLI and the analyses make, bounded to a few entities per input, then the
// analyses themselves.

void readRun(const RunFile& f) {
  const RunInfo& info = f.info();
  for (SeriesKind kind : {SeriesKind::Gpu, SeriesKind::Node}) {
    if (kind == SeriesKind::Node && !f.hasNodeTelemetry()) continue;
    const SeriesGroupMeta& m = f.series(kind);
    for (size_t e = 0; e < m.entities && e < 3; ++e) {
      (void)f.readAllSamples(kind, e, "");
      for (size_t k = 0; k < m.metrics.size() && k < 3; ++k) {
        const std::string& id = m.metrics[k].id;
        (void)f.readAllSamples(kind, e, id);
        (void)f.readSamples(kind, e, id, info.start_ns, info.end_ns);
        (void)f.readSamples(kind, e, id, info.start_ns / 2 + info.end_ns / 2, info.end_ns, false);
      }
    }
    for (size_t k = 0; k < m.metrics.size() && k < 3; ++k) {
      const std::string& id = m.metrics[k].id;
      (void)f.validCounts(kind, id);
      for (size_t level = 0; level < m.grid.levels();
           level += std::max<size_t>(1, m.grid.levels() - 1)) {
        const size_t buckets = std::min<size_t>(m.grid.buckets[level], 64);
        (void)f.readLod(kind, id, level, 0, std::min<size_t>(m.entities, 3), 0, buckets);
      }
    }
    if (kind == SeriesKind::Gpu && m.hasThrottle) {
      for (size_t e = 0; e < m.entities && e < 3; ++e)
        (void)f.readThrottle(e, 0, std::min<size_t>(m.samples(e), 4096));
      if (m.hasThrottleLod && m.grid.levels() > 0)
        (void)f.readThrottleLod(m.grid.levels() - 1, 0, std::min<size_t>(m.entities, 3), 0,
                                std::min<size_t>(m.grid.buckets.back(), 64));
    }
  }
  for (size_t t = 0; t < f.tracks().size() && t < 4; ++t) {
    const auto events = f.readAllKernels(t);
    for (const KernelEvent& e : events)
      (void)f.str(e.name);
    (void)f.readKernels(t, info.start_ns, info.end_ns);
    (void)f.readKernels(t, info.start_ns, info.start_ns / 2 + info.end_ns / 2,
                        RunFile::kKernelName);
    const LodGrid& g = f.kernelGrid();
    if (g.levels() > 0)
      (void)f.readKernelLod(t, g.levels() - 1, 0, std::min<size_t>(g.buckets.back(), 64));
    (void)f.readTruthClock(t);
  }
  (void)f.collectives();
  (void)f.stringCount();
  if (f.hasGroundTruth()) {
    (void)f.truthThrottle();
    (void)f.truthEnergy();
  }
}

// The HDF5 files, groups, datasets, named datatypes and attributes still open; one the reader
// forgets to close on some path is a leak the target reports as a finding (LeakSanitizer is told
// to ignore what HDF5 itself keeps from a failed open: scripts/fuzz.sh). (H5Inmembers refuses
// the library's own id types, so dataspaces cannot be counted; the reader holds every id in
// h5::Id.)
ssize_t openHdf5Objects() {
  return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
}

void runFile(Bytes d) {
  // A real file: HDF5 refuses a memfd's /proc/self/fd/N path ("can't retrieve real path for
  // file") once it has read the superblock, so an in-memory file never got past it.
  const fs::path path = scratchDir() / "fuzz-run.h5";
  if (!writeFile(path, asText(d))) broken("cannot write " + path.string());
  std::shared_ptr<const RunFile> f;
  try {
    f = RunFile::open(path);
    readRun(*f);
  } catch (const Error& e) {
    noteError(e);
    return;
  }
  try {
    (void)analyzeRun(*f);
  } catch (const Error& e) {
    noteError(e);
  }
}

void runFileClosesWhatItOpens(Bytes d) {
  runFile(d);
  if (const ssize_t open = openHdf5Objects(); open != 0)
    broken(fmt::format("{} HDF5 objects left open after reading a run file", open));
}

// ---- The command line: arguments separated by NUL bytes, parsed with a parser that has the
// options of every subcommand, then each value through the parser the subcommand uses.

std::vector<std::string> splitArgs(std::string_view text) {
  std::vector<std::string> args;
  size_t at = 0;
  while (at <= text.size() && args.size() < 64) {
    size_t end = text.find('\0', at);
    if (end == std::string_view::npos) end = text.size();
    std::string a(text.substr(at, end - at));
    if (a != "--help" && a != "-h") args.push_back(std::move(a));  // --help prints the usage
    at = end + 1;
  }
  return args;
}

void cliArgs(Bytes d) {
  const std::vector<std::string> args = splitArgs(asText(d));
  cli::ArgParser p("fuzz", "every option of the subcommands");
  p.option("output", "RUN.h5", "")
      .option("format", "NAME", "")
      .flag("json", "")
      .flag("csv", "")
      .option("config", "K=V,...", "")
      .option("offset", "SOURCE=NS", "", true)
      .option("dcgm-interval-ms", "N", "")
      .option("range", "START:END", "")
      .option("gpus", "LIST", "")
      .option("ranks", "LIST", "")
      .option("metrics", "LIST", "")
      .option("filter", "K=V,...", "", true)
      .option("width", "PX", "")
      .option("dpi", "N", "")
      .positionals("INPUT", "", d.size() % 3 == 0 ? 1 : 0, d.size() % 5 == 0 ? 2 : -1);
  try {
    if (!p.parse(args)) return;
  } catch (const cli::UsageError& e) {
    noteError(e);
    return;
  }
  (void)p.usage();
  auto guard = [](auto&& f) {
    try {
      f();
    } catch (const cli::UsageError& e) {
      noteError(e);
    } catch (const Error& e) {
      noteError(e);
    }
  };
  guard([&] { (void)p.intValue("width"); });
  guard([&] { (void)p.intValue("dpi"); });
  guard([&] { (void)p.doubleValue("dcgm-interval-ms"); });
  guard([&] {
    if (auto c = p.value("config")) (void)import::parseConfig(*c);
  });
  for (const std::string& o : p.values("offset"))
    guard([&] { (void)import::parseOffset(o); });
  guard([&] {
    if (auto g = p.value("gpus")) (void)cli::parseIndexList("gpus", *g);
  });
  guard([&] {
    if (auto g = p.value("ranks")) (void)cli::parseIndexList("ranks", *g);
  });
  guard([&] {
    if (auto m = p.value("metrics")) (void)cli::parseNameList("metrics", *m);
  });
  for (const std::string& f : p.values("filter"))
    guard([&] { (void)cli::parseNameList("filter", f); });
  guard([&] {
    if (auto r = p.value("range")) (void)cli::parseRunRange(*r, 1'700'000'000'000'000'000);
  });
}

// ---- --range and the durations and times it parses and prints.

void rangeArgs(Bytes d) {
  const std::string text(asText(d));
  constexpr std::array<int64_t, 5> kStarts = {0, 1'700'000'000'000'000'000, -1,
                                              std::numeric_limits<int64_t>::max() - 1,
                                              std::numeric_limits<int64_t>::min() + 1};
  for (int64_t start : kStarts) {
    try {
      const TimeRange r = cli::parseRunRange(text, start);
      if (r.t1 <= r.t0) broken(fmt::format("parseRunRange('{}') gave an empty range", text));
      (void)formatUtc(r.t0, 9);
      (void)formatUtc(r.t1, 3);
      (void)formatDuration(r.t1 / 2 - r.t0 / 2);  // an open side is INT64_MIN / MAX
    } catch (const cli::UsageError& e) {
      noteError(e);
    }
  }
  if (const auto ns = parseDuration(text)) {
    (void)formatDuration(*ns);
    (void)formatUtc(*ns, static_cast<int>(d.size() % 12));
  }
  try {
    (void)cli::parseIndexList("gpus", text);
  } catch (const cli::UsageError& e) {
    noteError(e);
  }
  try {  // wattline import --start-time
    const int64_t t = import::parseStartTime(text);
    if (!import::inTimeRange(t)) broken(fmt::format("parseStartTime('{}') is out of range", text));
    (void)formatUtc(t, 9);
  } catch (const Error& e) {
    noteError(e);
  }
}

constexpr std::array kTargets = {
    Target{"kineto", "PyTorch profiler / Kineto JSON trace (JSON stream, gzip)", &kineto},
    Target{"rocprofv3", "rocprofv3 JSON (rocprofiler-sdk-tool)", &rocprofv3},
    Target{"rocprof_csv", "rocprof v1/v2 kernel trace CSV", &rocprofCsv},
    Target{"nsys", "Nsight Systems SQLite export", &nsys},
    Target{"nvidia_smi_csv", "nvidia-smi --query-gpu CSV", &nvidiaSmiCsv},
    Target{"nvidia_smi_dmon", "nvidia-smi dmon text", &nvidiaSmiDmon},
    Target{"dcgm", "DCGM dmon text and long CSV", &dcgm},
    Target{"amd_smi", "amd-smi metric CSV", &amdSmi},
    Target{"zeus", "Zeus power monitor and window CSVs", &zeus},
    Target{"import_job", "a whole import: read, assemble, write (first byte picks the format)",
           &importJob},
    Target{"charllm", "CharLLM-PPT results folder (files split at NUL bytes)", &charllm},
    Target{"experiment_matrix", "experiment matrix CSV (simulator and CharLLM-PPT readers)",
           &experimentMatrix},
    Target{"run_file", "run file (HDF5): open, reads, analyses; every HDF5 id closed after",
           &runFileClosesWhatItOpens},
    Target{"cli_args", "command-line arguments (split at NUL bytes) and option values", &cliArgs},
    Target{"range_args", "--range START:END, durations, --start-time, time formatting", &rangeArgs},
};

}  // namespace

std::span<const Target> targets() {
  return kTargets;
}

const Target* findTarget(std::string_view name) {
  for (const Target& t : kTargets)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace wl::fuzz
