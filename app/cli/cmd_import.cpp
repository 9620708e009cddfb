// SPDX-License-Identifier: GPL-3.0-or-later
// wattline import INPUT... -o RUN.h5 [--format NAME] [--name TEXT] [--platform NAME]
//                 [--config tp=4,pp=8,...] [--offset SOURCE=NS] [--align auto|wall]
//                 [--dcgm-interval-ms N]
//                 [--start-time TIME]
//                 [--utc-offset [SOURCE=]+HH:MM] [--gpus N] [--memory-budget SIZE]
//                 [--threads N] [--json]
// An INPUT "prometheus:http://HOST:PORT" reads GPU telemetry from a Prometheus server between
// --start and --end ([--match SELECTOR]... [--bearer-token-file F] [--basic-auth-file F]
// [--cacert F] [--concurrency N]).
#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "loaders/core/error.h"
#include "loaders/core/kernel_spool.h"
#include "loaders/core/time_format.h"
#include "loaders/import/import_job.h"
#include "loaders/import/importer.h"
#include "loaders/import/prometheus/prometheus_import.h"

namespace wl::cli {
namespace {

// The parser knows long options only; "-o FILE" and "-oFILE" become "--output FILE".
Args expandShortOutput(const Args& args) {
  Args out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o") {
      out.push_back("--output");
    } else if (args[i].size() > 2 && args[i].rfind("-o", 0) == 0) {
      out.push_back("--output");
      out.push_back(args[i].substr(2));
    } else {
      out.push_back(args[i]);
    }
  }
  return out;
}

// Progress on stderr: one updating line on a terminal, else a line the first time each stage is
// reported (files read at once alternate their stages: a line per update would fill a log).
class StderrProgress {
 public:
  StderrProgress() : tty_(::isatty(STDERR_FILENO) == 1) {}
  ~StderrProgress() {
    if (tty_ && drawn_) std::fputs("\r\033[K", stderr);
  }
  bool operator()(double f, std::string_view stage) {
    const int pct = static_cast<int>(std::floor(f * 100.0));
    if (tty_) {
      if (pct == lastPct_ && stage == lastStage_) return true;
      std::fprintf(stderr, "\r\033[K%3d%% %.*s", pct, static_cast<int>(stage.size()), stage.data());
      std::fflush(stderr);
      drawn_ = true;
    } else if (stage != lastStage_ && printed_.insert(std::string(stage)).second) {
      std::fprintf(stderr, "wattline import: %3d%% %.*s\n", pct, static_cast<int>(stage.size()),
                   stage.data());
    }
    lastPct_ = pct;
    lastStage_ = std::string(stage);
    return true;
  }

 private:
  bool tty_;
  bool drawn_ = false;
  int lastPct_ = -1;
  std::string lastStage_;
  std::set<std::string> printed_;
};

// A secret from a file (its first line, without trailing whitespace); the content is never echoed.
std::string readSecret(const std::string& file, const std::string& option) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError(fmt::format("--{} {}: the file cannot be read", option, file));
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
    line.pop_back();
  if (line.empty()) throw UsageError(fmt::format("--{} {}: the file is empty", option, file));
  return line;
}

void setBasicAuth(import::http::Access& a, const std::string& userColonPassword,
                  const std::string& from) {
  const size_t colon = userColonPassword.find(':');
  if (colon == std::string::npos || colon == 0)
    throw UsageError(fmt::format("{}: expected USER:PASSWORD", from));
  a.basicUser = userColonPassword.substr(0, colon);
  a.basicPassword = userColonPassword.substr(colon + 1);
}

// Turns "prometheus:URL" positionals into remote inputs; the other positionals stay files.
void addPrometheusInputs(const ArgParser& p, import::ImportRequest& req) {
  std::vector<std::string> urls;
  for (const std::string& in : p.positional()) {
    if (auto url = import::prom::urlOfInput(in))
      urls.push_back(*url);
    else
      req.inputs.push_back({in, {}});
  }
  const bool window = p.value("start") || p.value("end") || !p.values("match").empty();
  if (urls.empty()) {
    if (window)
      throw UsageError("--start, --end and --match need a prometheus:http://HOST:PORT input");
    return;
  }
  if (!p.value("start") || !p.value("end"))
    throw UsageError("a prometheus: input needs --start T and --end T (RFC 3339 or Unix seconds)");
  import::prom::Source base;
  try {
    base.start_ns = import::prom::parseTime(*p.value("start"), "--start");
    base.end_ns = import::prom::parseTime(*p.value("end"), "--end");
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (base.end_ns <= base.start_ns) throw UsageError("--end must be after --start");
  base.selectors = p.values("match");
  if (auto n = p.intValue("concurrency")) {
    if (*n < 1 || *n > 64) throw UsageError("option --concurrency: expected 1 to 64");
    base.concurrency = *n;
  }
  import::http::Access& a = base.access;
  if (auto f = p.value("bearer-token-file"))
    a.bearerToken = readSecret(*f, "bearer-token-file");
  else if (const char* env = std::getenv("WATTLINE_PROMETHEUS_TOKEN"); env && *env)
    a.bearerToken = env;
  if (auto f = p.value("basic-auth-file"))
    setBasicAuth(a, readSecret(*f, "basic-auth-file"), "--basic-auth-file " + *f);
  else if (const char* env = std::getenv("WATTLINE_PROMETHEUS_BASIC_AUTH"); env && *env)
    setBasicAuth(a, env, "WATTLINE_PROMETHEUS_BASIC_AUTH");
  if (auto f = p.value("cacert")) a.caCertFile = *f;
  for (const std::string& url : urls) {
    import::prom::Source src = base;
    src.url = url;
    req.remote.push_back(import::prom::remoteInput(std::move(src)));
  }
}

nlohmann::json summaryJson(const import::ImportSummary& s) {
  const RunInfo& i = s.info;
  nlohmann::json j;
  j["output"] = s.output.string();
  j["name"] = i.name;
  j["platform"] = i.platform;
  j["start_ns"] = i.start_ns;
  j["end_ns"] = i.end_ns;
  j["duration_s"] = static_cast<double>(i.end_ns - i.start_ns) * 1e-9;
  j["gpus"] = s.gpus.size();
  j["ranks"] = s.ranks.size();
  j["kernels"] = s.kernels;
  j["telemetry_samples"] = s.telemetrySamples;
  j["spilled_bytes"] = s.spillBytes;  // kernel events written to disk to stay within the budget
  nlohmann::json sources = nlohmann::json::array();
  for (const SourceInfo& src : i.sources)
    sources.push_back({{"path", src.path},
                       {"format", src.format},
                       {"offset_ns", src.offset_ns},
                       {"detail", src.detail}});
  j["sources"] = sources;
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankInfo& r : s.ranks)
    ranks.push_back({{"rank", r.rank}, {"gpu", r.gpu}, {"source", r.source}});
  j["rank_map"] = ranks;
  nlohmann::json notes = nlohmann::json::array();
  for (const QualityNote& n : s.notes)
    notes.push_back({{"severity", n.severity == Severity::Warning ? "warning" : "info"},
                     {"code", n.code},
                     {"subject", n.subject},
                     {"message", n.message}});
  j["data_quality"] = notes;
  return j;
}

// --memory-budget: 0 (no limit) or at least 16 MiB, below which the spill runs get so short that
// merging them costs more than it saves.
uint64_t parseMemoryBudget(const std::string& text) {
  constexpr uint64_t kMin = uint64_t{16} << 20;
  const auto v = parseByteSize(text);
  if (!v)
    throw UsageError(fmt::format(
        "option --memory-budget: expected a size such as 512M, 2G or a number of bytes, found "
        "\"{}\"",
        text));
  if (*v != 0 && *v < kMin)
    throw UsageError(fmt::format(
        "option --memory-budget: {} is below the smallest budget, 16M (0: no limit)", text));
  return *v;
}

}  // namespace

int cmdImport(const Args& rawArgs) {
  ArgParser p("import",
              "Import telemetry and kernel traces into one run: files or folders (a folder of "
              "per-rank traces becomes one multi-rank run). Formats are detected from the "
              "content; --format overrides. See docs/import.md.");
  p.option("output", "RUN.h5", "the run file to write (also -o RUN.h5)")
      .option("format", "NAME", "read every input as this format; 'list' shows the formats")
      .flag("list-formats", "print the formats and exit")
      .option("name", "TEXT", "the run's name (default: from the inputs or the output file)")
      .option("platform", "NAME", "the GPU platform, e.g. H100 (default: from the device names)")
      .option("config", "K=V,...",
              "parallelism and batch: tp, pp, dp, ep, cp, vpp, mbs, gbs, seq, nodes, "
              "gpus_per_node, recompute, overlap")
      .option("offset", "SOURCE=NS",
              "shift a source's timestamps by NS nanoseconds (or a duration such as -1.5ms); "
              "SOURCE is a file name or a format name; repeatable",
              true)
      .option("align", "auto|wall",
              "auto (default): shift each telemetry source onto the traces' clock when its "
              "utilization or power matches the traced kernels with confidence; wall: keep the "
              "wall clocks")
      .option("dcgm-interval-ms", "N", "row interval of DCGM dmon text (it has no timestamps)")
      .option("start-time", "TIME",
              "when telemetry with relative times starts (dcgmi dmon, nvidia-smi dmon without "
              "-o D, ZeusMonitor windows on the monotonic clock): ISO 8601 with a zone, e.g. "
              "2026-11-27T17:44:13.6Z or 2026-11-27T18:44:13+01:00")
      .option("utc-offset", "[SOURCE=]+HH:MM",
              "UTC offset of logs written in local time without a zone (nvidia-smi timestamps, "
              "Zeus, dmon -o DT); SOURCE (a file or format name) limits it to one input; "
              "repeatable",
              true)
      .option("gpus", "N",
              "number of GPUs taking turns in an nvidia-smi CSV without an index column "
              "(default: found from the rows)")
      .option("memory-budget", "SIZE",
              "memory the traces' kernel events and the GPU telemetry may take (512M, 2G or bytes; "
              "default 512M, at least 16M; 0: no limit); past it they are spilled to a temporary "
              "file beside the output (telemetry past a quarter of it, as each file is read)")
      .option("threads", "N",
              "files read at the same time, one thread each (default: the cores); fewer when "
              "the memory budget has no room (each reader past the first counts 16M)")
      .option("start", "T", "prometheus: start of the time range (RFC 3339 or Unix seconds)")
      .option("end", "T", "prometheus: end of the time range (RFC 3339 or Unix seconds)")
      .option("match", "SELECTOR",
              "prometheus: a series selector such as {job=\"dcgm\",Hostname=~\"node0[0-7]\"} "
              "(default: every dcgm-exporter and AMD exporter GPU series); repeatable",
              true)
      .option("bearer-token-file", "FILE",
              "prometheus: bearer token (else $WATTLINE_PROMETHEUS_TOKEN)")
      .option("basic-auth-file", "FILE",
              "prometheus: USER:PASSWORD for basic auth (else $WATTLINE_PROMETHEUS_BASIC_AUTH)")
      .option("cacert", "FILE", "prometheus: CA certificates (PEM) to verify an https server")
      .option("concurrency", "N", "prometheus: queries in flight (default 4)")
      .flag("json", "print a JSON summary of the run written")
      .positionals("INPUT", "telemetry or trace files, folders, or prometheus:http://HOST:PORT", 0,
                   -1);
  std::vector<std::string> formats;
  for (const auto& importer : import::importers())
    formats.emplace_back(importer->name());
  formats.emplace_back("list");
  p.choices("format", std::move(formats));
  if (!p.parse(expandShortOutput(rawArgs))) return 0;
  if (p.has("list-formats") || p.value("format") == "list") {
    std::fputs(import::formatList().c_str(), stdout);
    return 0;
  }
  if (p.positional().empty()) throw UsageError("missing INPUT");
  if (!p.value("output")) throw UsageError("missing -o RUN.h5");

  import::ImportRequest req;
  addPrometheusInputs(p, req);
  req.output = *p.value("output");
  if (auto f = p.value("format")) {
    if (!import::findImporter(*f))
      throw UsageError(fmt::format("unknown format '{}' (see --format list)", *f));
    req.format = *f;
  }
  try {
    if (auto c = p.value("config")) req.assemble.config = import::parseConfig(*c);
    for (const std::string& o : p.values("offset"))
      req.assemble.offsets.push_back(import::parseOffset(o));
    if (auto a = p.value("align")) req.assemble.align = import::parseAlignMode(*a);
    for (const std::string& u : p.values("utc-offset"))
      req.utcOffsets.push_back(import::parseUtcOffset(u));
    if (auto t = p.value("start-time")) req.options.start_ns = import::parseStartTime(*t);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (auto d = p.doubleValue("dcgm-interval-ms")) {
    if (!(*d > 0)) throw UsageError("option --dcgm-interval-ms must be positive");
    req.options.dcgm_interval_ms = *d;
  }
  if (p.value("gpus")) {
    const auto n = p.intValue("gpus");
    if (!n || *n < 1 || *n > 4096)
      throw UsageError(
          fmt::format("option --gpus: expected a number of GPUs from 1 to 4096, found "
                      "\"{}\"",
                      *p.value("gpus")));
    req.options.gpus = *n;
  }
  if (auto m = p.value("memory-budget")) req.memoryBudget = parseMemoryBudget(*m);
  if (p.value("threads")) {
    const auto n = p.intValue("threads");
    if (!n || *n < 1 || *n > 1024)
      throw UsageError(
          fmt::format("option --threads: expected a number of threads from 1 to 1024, found \"{}\"",
                      *p.value("threads")));
    req.threads = static_cast<unsigned>(*n);
  }
  req.assemble.name = p.value("name").value_or("");
  req.assemble.platform = p.value("platform").value_or("");

  import::ImportJob job(std::move(req));
  import::ImportSummary s;
  {
    StderrProgress bar;
    s = job.run(Progress([&bar](double f, std::string_view stage) { return bar(f, stage); }));
  }
  for (const QualityNote& n : s.notes)
    if (n.severity == Severity::Warning)
      std::fprintf(stderr, "warning: %s: %s\n", n.subject.c_str(), n.message.c_str());
  if (p.has("json")) {
    std::fputs((summaryJson(s).dump(2) + "\n").c_str(), stdout);
    return 0;
  }
  std::string text = fmt::format(
      "wrote {}: {} rank{}, {} GPU{}, {} GPU events, {} telemetry samples, {} .. {} ({})\n",
      s.output.string(), s.ranks.size(), s.ranks.size() == 1 ? "" : "s", s.gpus.size(),
      s.gpus.size() == 1 ? "" : "s", s.kernels, s.telemetrySamples, formatUtc(s.info.start_ns),
      formatUtc(s.info.end_ns), formatDuration(s.info.end_ns - s.info.start_ns));
  for (const SourceInfo& src : s.info.sources)
    text += fmt::format("  {} ({}{}{})\n", src.path, src.format,
                        src.detail.empty() ? "" : ", " + src.detail,
                        src.offset_ns ? fmt::format(", offset {} ns", src.offset_ns) : "");
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace wl::cli
