// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A small HTTP client over libcurl for the Prometheus importer (the loaders stay free of Qt).
//
// One HttpClient holds one curl handle (and its kept-alive connection); it is used by one thread
// at a time, so concurrent fetches give each worker its own client. Credentials (a bearer token,
// basic-auth user and password) are handed to curl and never appear in a message: errors name
// the URL without its user-info part. Transport failures (unreachable server, TLS) throw
// HttpError with one line; HTTP statuses are returned for the caller to judge.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loaders/core/error.h"

namespace wl::import::http {

// How to reach a server. Everything here is secret or local; nothing of it is printed.
struct Access {
  std::string bearerToken;               // "Authorization: Bearer ..." when not empty
  std::string basicUser, basicPassword;  // basic auth when basicUser is not empty
  std::string caCertFile;                // a PEM bundle to verify the server with (--cacert)
  double timeoutS = 120.0;               // whole request
  double connectTimeoutS = 10.0;
};

// A transport failure (no HTTP status): connection refused, DNS, TLS, timeout.
class HttpError : public Error {
 public:
  enum class Kind { Connect, Tls, Timeout, Other };
  HttpError(Kind kind, const std::string& what) : Error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct Response {
  long status = 0;
  std::string body;
  double retryAfterS = -1.0;  // the Retry-After header in seconds; -1 if absent
};

using Form = std::vector<std::pair<std::string, std::string>>;

class Client {
 public:
  explicit Client(Access access);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // POSTs `form` (application/x-www-form-urlencoded) to `url`. Throws HttpError on a transport
  // failure and wl::Cancelled when `cancel` becomes true during the transfer.
  Response post(const std::string& url, const Form& form,
                const std::atomic<bool>* cancel = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "%XX" escapes for a form value.
std::string formEncode(std::string_view text);
// The URL without "user:password@": what messages may show.
std::string displayUrl(std::string_view url);

}  // namespace wl::import::http
