// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// GPU telemetry from a Prometheus server (or Thanos, Cortex / Mimir, VictoriaMetrics: the same
// HTTP API), as scraped from NVIDIA's dcgm-exporter or AMD's device-metrics-exporter.
//
// discover() finds the GPU series of the selectors in the time range (/api/v1/series); fetch()
// reads their raw samples with range-vector queries `{__name__="M",...}[W]` evaluated at
// successive times, so every scraped sample arrives once with its own timestamp (query_range
// with a step would resample). Windows W are sized from the series count to stay under the
// server's sample limit (and split in two when the server still says too many), fetched by a
// bounded number of threads, retried with backoff on 429 / 5xx / timeouts. Labels become the GPU's
// identity (Hostname or instance -> host, gpu -> local index, UUID, modelName -> device name);
// metric names map through the DCGM field table (dcgm_fields.h) and a table of AMD names.
// A decrease of the energy counter (a driver reload restarts it) is read as Prometheus reads a
// counter reset: the counter restarted from zero; energy_j is kept continuous and a note says so.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/core/progress.h"
#include "loaders/import/import_job.h"
#include "loaders/import/importer.h"
#include "loaders/import/prometheus/http_client.h"
#include "loaders/import/prometheus/prometheus_api.h"

namespace wl::import::prom {

struct Source {
  std::string url;  // "http://host:9090"; "prometheus:" in front is accepted
  int64_t start_ns = 0, end_ns = 0;
  // PromQL series selectors ({job="dcgm",Hostname=~"node0[0-7]"} or NAME{...}); empty: every
  // series of a known GPU exporter (kDefaultSelector).
  std::vector<std::string> selectors;
  http::Access access;
  int concurrency = 4;                 // queries in flight
  size_t maxSamplesPerQuery = 500000;  // window sizing (the server's own limit is higher)
  double assumedRateHz = 1.0;          // samples per second per series assumed when sizing
  int retries = 4;                     // further attempts of a failed window
  double backoffS = 0.25;              // first wait; doubles per attempt
};

inline constexpr std::string_view kDefaultSelector =
    R"({__name__=~"DCGM_FI_.+|gpu_power_usage|gpu_package_power|gpu_energy_consumed|gpu_edge_temperature|gpu_junction_temperature|gpu_memory_temperature|gpu_gfx_activity|gpu_umc_activity|gpu_clock"})";

// "prometheus:http://h:9090" -> "http://h:9090"; nullopt if `input` does not start with
// "prometheus:".
std::optional<std::string> urlOfInput(std::string_view input);
// RFC 3339 ("2026-11-26T00:00:00Z", "...+02:00", fractions) or Unix seconds ("1700000000.5") to
// ns since the epoch. Throws wl::Error naming `what` (the option) and the text.
int64_t parseTime(std::string_view text, std::string_view what);

// The GPU metric a series becomes, from its name and labels.
struct Mapping {
  std::string metric;  // a Wattline metric id ("power_w"), an extra id, or "" to skip
  double scale = 1.0;
  bool throttleMask = false;  // DCGM clock event reasons: the throttle bitmask
  bool known = false;         // the name is one of the tables' (else kept as an extra metric)
};
Mapping mapSeries(const Labels& labels);

// Where a series' GPU is: host and local index, UUID, PCI bus id, device name.
struct GpuIdentity {
  std::string host;
  int index = -1;
  std::string uuid, busId, deviceName;
  std::string key() const;  // "host/index" (or "host/uuid" without an index)
};
// nullopt if the labels name no GPU (no gpu, gpu_id, UUID or pci_bus_id label).
std::optional<GpuIdentity> identityOf(const Labels& labels);

struct Discovery {
  std::vector<Labels> series;          // the GPU series, each once
  std::vector<size_t> selectorOf;      // per series: the first selector that matched it
  size_t gpus = 0;                     // distinct GPUs among them
  std::vector<std::string> unmatched;  // selectors that matched nothing
  std::vector<std::string> warnings;   // the server's warnings
  std::vector<std::string> skipped;    // metric names found but not GPU telemetry
};
// Throws wl::Error (unreachable, TLS, 401/403, a bad selector with the server's message, no
// series at all naming the selectors) or wl::Cancelled.
Discovery discover(const Source& source, const std::atomic<bool>* cancel = nullptr);

struct FetchStats {
  size_t series = 0, samples = 0, queries = 0, retries = 0, splits = 0, missingWindows = 0;
};

// Discovers and fetches; the result is one ImportedData as an importer gives it (format
// "prometheus", path = the URL without credentials). Throws wl::Error or wl::Cancelled.
ImportedData fetch(const Source& source, const Progress& progress = {},
                   FetchStats* stats = nullptr);

// The ImportJob input that fetches `source`, labelled "prometheus:URL" (without credentials).
RemoteInput remoteInput(Source source);

}  // namespace wl::import::prom
