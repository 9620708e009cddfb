// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/prometheus/prometheus_api.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace wl::import::prom {
namespace {

namespace dom = simdjson::dom;

// The parser is reused across calls of one thread: it keeps its buffers.
dom::parser& threadParser() {
  thread_local dom::parser parser;
  return parser;
}

std::string excerpt(std::string_view s, size_t n = 200) {
  std::string out;
  for (char c : s.substr(0, n))
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (s.size() > n) out += "...";
  return out;
}

// The error object of an API reply ({"status":"error","errorType":...,"error":...}), if any.
std::string apiErrorText(std::string_view body) {
  dom::element doc;
  std::string padded(body);
  if (threadParser().parse(padded).get(doc)) return {};
  std::string_view type, error;
  if (doc["errorType"].get(type)) type = {};
  if (doc["error"].get(error)) error = {};
  if (error.empty()) return {};
  return type.empty() ? std::string(error) : fmt::format("{}: {}", type, error);
}

void collectWarnings(const dom::element& doc, std::vector<std::string>& warnings) {
  dom::array list;
  if (doc["warnings"].get(list)) return;
  for (dom::element w : list) {
    std::string_view s;
    if (!w.get(s)) warnings.emplace_back(s);
  }
}

// A JSON number as a double, whether the server wrote it as an integer or with a fraction.
bool numberOf(dom::element e, double& out) {
  if (e.is_double()) return !e.get(out);
  int64_t i = 0;
  if (e.get(i)) return false;
  out = static_cast<double>(i);
  return true;
}

Labels readLabels(dom::object obj) {
  Labels labels;
  for (dom::key_value_pair kv : obj) {
    std::string_view v;
    if (!kv.value.get(v)) labels.emplace(std::string(kv.key), std::string(v));
  }
  return labels;
}

}  // namespace

std::string apiTime(int64_t ns) {
  // Floor to milliseconds (Prometheus' resolution), also for times before 1970.
  int64_t ms = ns / 1'000'000;
  if (ns % 1'000'000 < 0) --ms;
  const int64_t s = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  return fmt::format("{}.{:03}", s, ms - s * 1000);
}

bool parseSampleValue(std::string_view text, double& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text == "Inf" || text == "inf") {
    out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (text == "-Inf" || text == "-inf") {
    out = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (text == "NaN" || text == "nan") {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

Api::Api(std::string baseUrl, http::Access access)
    : base_(std::move(baseUrl)), shown_(http::displayUrl(base_)), client_(std::move(access)) {
  while (!base_.empty() && base_.back() == '/')
    base_.pop_back();
  while (!shown_.empty() && shown_.back() == '/')
    shown_.pop_back();
}

std::string Api::call(const std::string& endpoint, const http::Form& form,
                      const std::atomic<bool>* cancel) {
  http::Response r;
  try {
    r = client_.post(base_ + endpoint, form, cancel);
  } catch (const http::HttpError& e) {
    // A timeout or a dropped connection mid-import is worth another try; a refused connection
    // at the first call is reported at once by the caller (it does not retry discovery).
    if (e.kind() == http::HttpError::Kind::Timeout || e.kind() == http::HttpError::Kind::Connect)
      throw Retryable(e.what(), -1.0, e.kind() == http::HttpError::Kind::Connect);
    throw;
  }
  const std::string where = shown_ + endpoint;
  if (r.status == 200) return std::move(r.body);
  const std::string server = apiErrorText(r.body);
  const std::string said = server.empty() ? excerpt(r.body) : server;
  if (r.status == 401 || r.status == 403)
    throw Error(
        fmt::format("{}: {} {}: the server refused the credentials; give them with "
                    "--bearer-token-file or --basic-auth-file (or the environment)",
                    where, r.status, r.status == 401 ? "Unauthorized" : "Forbidden"));
  if (r.status == 404)
    throw Error(
        fmt::format("{}: 404 Not Found: not a Prometheus API; give the URL the API is "
                    "under (e.g. http://host:9090, or with the /prometheus prefix of "
                    "Mimir)",
                    where));
  if (r.status == 429 || r.status >= 500) {
    if (said.find("too many samples") != std::string::npos)
      throw TooManySamples(fmt::format("{}: {}", where, said));
    throw Retryable(fmt::format("{}: HTTP {}: {}", where, r.status, said), r.retryAfterS);
  }
  if (said.find("too many samples") != std::string::npos)
    throw TooManySamples(fmt::format("{}: {}", where, said));
  throw Error(fmt::format("{}: HTTP {}: the server says: {}", where, r.status, said));
}

std::vector<Labels> Api::series(const std::string& selector, int64_t startNs, int64_t endNs,
                                std::vector<std::string>& warnings,
                                const std::atomic<bool>* cancel) {
  std::string body =
      call("/api/v1/series",
           {{"match[]", selector}, {"start", apiTime(startNs)}, {"end", apiTime(endNs)}}, cancel);
  const size_t size = body.size();
  body.resize(size + simdjson::SIMDJSON_PADDING);
  dom::element doc;
  dom::array data;
  if (threadParser().parse(body.data(), size, false).get(doc) || doc["data"].get(data))
    throw Error(fmt::format("{}/api/v1/series: expected a JSON reply with a data list, found '{}'",
                            shown_, excerpt(std::string_view(body.data(), size))));
  collectWarnings(doc, warnings);
  std::vector<Labels> out;
  for (dom::element e : data) {
    dom::object obj;
    if (e.get(obj))
      throw Error(fmt::format("{}/api/v1/series: at data[{}]: expected an object of labels", shown_,
                              out.size()));
    out.push_back(readLabels(obj));
  }
  return out;
}

std::vector<SeriesSamples> Api::rangeQuery(const std::string& rangeSelector, int64_t timeNs,
                                           std::vector<std::string>& warnings,
                                           const std::atomic<bool>* cancel) {
  std::string body =
      call("/api/v1/query", {{"query", rangeSelector}, {"time", apiTime(timeNs)}}, cancel);
  const size_t size = body.size();
  body.resize(size + simdjson::SIMDJSON_PADDING);
  const std::string where = shown_ + "/api/v1/query";
  auto bad = [&](const std::string& path, std::string_view expected) {
    return Error(fmt::format("{} ({}): at {}: expected {}", where, rangeSelector, path, expected));
  };
  dom::element doc;
  if (threadParser().parse(body.data(), size, false).get(doc))
    throw Error(fmt::format("{}: expected a JSON reply, found '{}'", where,
                            excerpt(std::string_view(body.data(), size))));
  collectWarnings(doc, warnings);
  std::string_view type;
  if (doc["data"]["resultType"].get(type)) throw bad("data.resultType", "a result type");
  if (type != "matrix") throw bad("data.resultType", "\"matrix\" (a range-vector selector)");
  dom::array result;
  if (doc["data"]["result"].get(result)) throw bad("data.result", "a list");
  std::vector<SeriesSamples> out;
  for (dom::element e : result) {
    const size_t k = out.size();
    dom::object metric;
    dom::array values;
    if (e["metric"].get(metric)) throw bad(fmt::format("data.result[{}].metric", k), "labels");
    if (e["values"].get(values)) throw bad(fmt::format("data.result[{}].values", k), "a list");
    SeriesSamples s;
    s.labels = readLabels(metric);
    const size_t n = values.size();
    s.t_ns.reserve(n);
    s.values.reserve(n);
    for (dom::element pair : values) {
      dom::array tv;
      double t = 0;
      std::string_view text;
      double v = 0;
      if (pair.get(tv) || tv.size() != 2 || !numberOf(tv.at(0).value_unsafe(), t) ||
          tv.at(1).value_unsafe().get(text) || !parseSampleValue(text, v))
        throw bad(fmt::format("data.result[{}].values[{}]", k, s.t_ns.size()), "[time, \"value\"]");
      // The API gives milliseconds as a decimal fraction of seconds.
      s.t_ns.push_back(std::llround(t * 1000.0) * 1'000'000);
      s.values.push_back(v);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace wl::import::prom
