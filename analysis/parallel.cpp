// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace wl {

namespace {
constexpr unsigned kMaxThreads = 64;
}

unsigned analysisThreads(int requested) {
  if (requested > 0) return std::min(static_cast<unsigned>(requested), kMaxThreads);
  if (const char* env = std::getenv("WATTLINE_THREADS")) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0)
      return std::min(static_cast<unsigned>(std::min<long>(v, kMaxThreads)), kMaxThreads);
  }
  return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
}

void parallelFor(size_t n, unsigned threads, const std::function<void(size_t)>& task,
                 const std::function<void(size_t)>& tick) {
  threads = static_cast<unsigned>(std::min<size_t>(std::max(threads, 1u), n));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) {
      task(i);
      if (tick) tick(i + 1);
    }
    return;
  }
  std::atomic<size_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  std::mutex errorMutex;
  size_t errorIndex = std::numeric_limits<size_t>::max();
  std::exception_ptr error;
  auto fail = [&](size_t index) {
    std::lock_guard lock(errorMutex);
    if (!error || index < errorIndex) {
      errorIndex = index;
      error = std::current_exception();
    }
    stop = true;
  };
  auto work = [&](bool caller) {
    while (!stop) {
      const size_t i = next++;
      if (i >= n) return;
      try {
        task(i);
      } catch (...) {
        fail(i);
        return;
      }
      const size_t finished = ++done;
      if (caller && tick) {
        try {
          tick(finished);
        } catch (...) {
          fail(std::numeric_limits<size_t>::max());
          return;
        }
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  try {
    for (unsigned t = 1; t < threads; ++t)
      pool.emplace_back(work, false);
  } catch (...) {
    // No thread could be started: the tasks still run, on the calling thread.
  }
  work(true);
  for (std::thread& t : pool)
    t.join();
  if (error) std::rethrow_exception(error);
}

void parallelBlocks(size_t n, size_t work, const std::function<void(size_t)>& each) {
  const size_t byWork = std::max<size_t>(1, work / kBlockWork);
  const size_t blocks = std::min({static_cast<size_t>(analysisThreads()), byWork, n});
  parallelFor(blocks, static_cast<unsigned>(blocks), [&](size_t b) {
    for (size_t i = n * b / blocks, end = n * (b + 1) / blocks; i < end; ++i)
      each(i);
  });
}

}  // namespace wl
