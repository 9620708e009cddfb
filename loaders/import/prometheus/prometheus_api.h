// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The two calls of the Prometheus HTTP API that the importer needs, over http::Client:
// /api/v1/series (which series match a selector in a time range) and /api/v1/query with a
// range-vector selector (the raw samples of those series in a window ending at one evaluation
// time). Thanos, Cortex / Mimir and VictoriaMetrics serve the same API.
//
// Errors are one line and say what the user can do: 401/403 (credentials), 404 (not an API URL),
// the server's own message for a bad selector (400 bad_data), and a retryable kind for 429 / 5xx
// and timeouts, which the caller retries with backoff. A query over the server's sample limit
// (--query.max-samples) throws TooManySamples so the caller can split the window.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/import/prometheus/http_client.h"

namespace wl::import::prom {

using Labels = std::map<std::string, std::string>;

// One series of a matrix result: its labels and raw samples in the order the server sent them.
struct SeriesSamples {
  Labels labels;
  std::vector<int64_t> t_ns;
  std::vector<double> values;
};

// A failure worth retrying: 429, 5xx, a timeout, a dropped connection.
class Retryable : public Error {
 public:
  Retryable(const std::string& what, double retryAfterS, bool connect = false)
      : Error(what), retryAfterS_(retryAfterS), connect_(connect) {}
  double retryAfterS() const { return retryAfterS_; }
  bool connect() const { return connect_; }  // no connection to the server at all

 private:
  double retryAfterS_;
  bool connect_;
};

// The query would load more samples than the server allows.
class TooManySamples : public Error {
 public:
  using Error::Error;
};

class Api {
 public:
  // `baseUrl` like "http://host:9090" or "https://host/prometheus" (no trailing /api/v1).
  Api(std::string baseUrl, http::Access access);

  // The label sets of the series matching `selector` between start and end. Warnings of the
  // server (Thanos partial responses) are appended to `warnings`.
  std::vector<Labels> series(const std::string& selector, int64_t startNs, int64_t endNs,
                             std::vector<std::string>& warnings,
                             const std::atomic<bool>* cancel = nullptr);
  // The raw samples of `rangeSelector` (e.g. `{__name__="X"}[60000ms]`) evaluated at `timeNs`.
  std::vector<SeriesSamples> rangeQuery(const std::string& rangeSelector, int64_t timeNs,
                                        std::vector<std::string>& warnings,
                                        const std::atomic<bool>* cancel = nullptr);

  const std::string& shownUrl() const { return shown_; }

 private:
  std::string call(const std::string& endpoint, const http::Form& form,
                   const std::atomic<bool>* cancel);

  std::string base_, shown_;
  http::Client client_;
};

// A time in the API's form: Unix seconds with milliseconds, "1700000000.250".
std::string apiTime(int64_t ns);
// Parses a sample value as Prometheus writes it: "250.5", "NaN", "+Inf", "-Inf", "1e+06".
bool parseSampleValue(std::string_view text, double& out);

}  // namespace wl::import::prom
