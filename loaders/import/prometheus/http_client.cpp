// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/prometheus/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

namespace wl::import::http {
namespace {

// curl_global_init is not thread-safe: once per process, before any handle.
void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t onBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t onHeader(char* data, size_t size, size_t n, void* user) {
  const std::string_view line(data, size * n);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size()) {
    bool match = true;
    for (size_t i = 0; i < kName.size() && match; ++i)
      match = static_cast<char>(std::tolower(static_cast<unsigned char>(line[i]))) == kName[i];
    if (match) {
      const std::string value(line.substr(kName.size()));
      char* end = nullptr;
      const double s = std::strtod(value.c_str(), &end);
      if (end != value.c_str() && s >= 0) *static_cast<double*>(user) = s;
    }
  }
  return size * n;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancel = static_cast<const std::atomic<bool>*>(user);
  return cancel && cancel->load() ? 1 : 0;
}

HttpError transportError(CURLcode code, const char* detail, const std::string& url) {
  const std::string shown = displayUrl(url);
  const std::string why = detail && *detail ? detail : curl_easy_strerror(code);
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      return {HttpError::Kind::Connect,
              fmt::format("{}: the server cannot be reached ({}); is it running, and is the "
                          "address right?",
                          shown, why)};
    case CURLE_OPERATION_TIMEDOUT:
      return {HttpError::Kind::Timeout,
              fmt::format("{}: the server did not answer in time ({})", shown, why)};
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_USE_SSL_FAILED:
      return {
          HttpError::Kind::Tls,
          fmt::format("{}: TLS failure ({}); give the server's CA with --cacert FILE", shown, why)};
    default:
      return {HttpError::Kind::Other, fmt::format("{}: the request failed ({})", shown, why)};
  }
}

}  // namespace

struct Client::Impl {
  Access access;
  CURL* curl = nullptr;
};

Client::Client(Access access) : impl_(std::make_unique<Impl>()) {
  globalInit();
  impl_->access = std::move(access);
  impl_->curl = curl_easy_init();
  if (!impl_->curl) throw Error("libcurl: cannot create a handle");
}

Client::~Client() {
  if (impl_ && impl_->curl) curl_easy_cleanup(impl_->curl);
}

Response Client::post(const std::string& url, const Form& form, const std::atomic<bool>* cancel) {
  CURL* c = impl_->curl;
  const Access& a = impl_->access;
  curl_easy_reset(c);
  std::string body;
  for (const auto& [k, v] : form) {
    if (!body.empty()) body += '&';
    body += formEncode(k) + '=' + formEncode(v);
  }
  Response r;
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.retryAfterS);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);         // worker threads: no SIGALRM for timeouts
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // gzip if the server offers it
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(a.timeoutS * 1000));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(a.connectTimeoutS * 1000));
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_USERAGENT, "wattline");
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, onProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(cancel));
  if (!a.caCertFile.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, a.caCertFile.c_str());
  if (!a.bearerToken.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, a.bearerToken.c_str());
  } else if (!a.basicUser.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, a.basicUser.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, a.basicPassword.c_str());
  }
  const CURLcode code = curl_easy_perform(c);
  if (code == CURLE_ABORTED_BY_CALLBACK) throw Cancelled();
  if (code != CURLE_OK) throw transportError(code, error, url);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

std::string formEncode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '-' ||
        u == '_' || u == '.' || u == '~')
      out += ch;
    else
      out += fmt::format("%{:02X}", u);
  }
  return out;
}

std::string displayUrl(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const size_t hostStart = scheme + 3;
  const size_t pathStart = url.find('/', hostStart);
  const size_t at = url.rfind('@', pathStart == std::string_view::npos ? url.size() : pathStart);
  if (at == std::string_view::npos || at < hostStart) return std::string(url);
  return std::string(url.substr(0, hostStart)) + std::string(url.substr(at + 1));
}

}  // namespace wl::import::http
