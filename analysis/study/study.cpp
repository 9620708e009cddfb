// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/study/study.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "analysis/run_analysis.h"
#include "loaders/core/error.h"
#include "loaders/format/run_file.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

std::string listOf(const std::vector<std::string>& names, size_t most = 8) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < most; ++i)
    s += (i ? ", " : "") + names[i];
  if (names.size() > most) s += fmt::format(" and {} more", names.size() - most);
  return s;
}

}  // namespace

size_t Study::count(SummarySource s) const {
  return static_cast<size_t>(
      std::count_if(runs.begin(), runs.end(), [s](const StudyRun& r) { return r.source == s; }));
}

size_t Study::find(const std::string& key) const {
  // Tiers, most specific first; the first tier with a match decides.
  const std::vector<std::function<bool(const StudyRun&)>> tiers = {
      [&](const StudyRun& r) { return r.label == key; },
      [&](const StudyRun& r) {
        if (r.summary.path == key) return true;
        std::error_code ec;
        return fs::exists(key, ec) && fs::equivalent(r.summary.path, key, ec);
      },
      [&](const StudyRun& r) {
        const fs::path p(r.summary.path);
        return p.filename().string() == key || p.stem().string() == key;
      },
      [&](const StudyRun& r) { return r.summary.name == key; },
  };
  for (const auto& matches : tiers) {
    std::vector<size_t> hits;
    for (size_t i = 0; i < runs.size(); ++i)
      if (matches(runs[i])) hits.push_back(i);
    if (hits.size() == 1) return hits.front();
    if (hits.size() > 1) {
      std::vector<std::string> labels;
      for (size_t i : hits)
        labels.push_back("'" + runs[i].label + "'");
      throw Error(fmt::format("'{}' names {} runs of the study ({}); give one of their labels", key,
                              hits.size(), listOf(labels)));
    }
  }
  std::vector<std::string> labels;
  for (const StudyRun& r : runs)
    labels.push_back("'" + r.label + "'");
  throw Error(fmt::format("no run '{}' in the study of {} runs (labels: {})", key, runs.size(),
                          listOf(labels)));
}

std::vector<fs::path> expandRunPaths(const std::vector<fs::path>& inputs) {
  std::vector<fs::path> out;
  std::set<std::string> seen;
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(p, ec);
    if (ec) key = p;
    if (seen.insert(key.string()).second) out.push_back(p);
  };
  for (const fs::path& in : inputs) {
    std::error_code ec;
    const fs::file_status st = fs::status(in, ec);
    if (ec || !fs::exists(st)) throw Error(fmt::format("{}: no such file or folder", in.string()));
    if (!fs::is_directory(st)) {
      add(in);
      continue;
    }
    std::vector<fs::path> found;
    fs::recursive_directory_iterator it(in, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) throw Error(fmt::format("{}: cannot list the folder: {}", in.string(), ec.message()));
    for (; it != end; it.increment(ec)) {
      if (ec) throw Error(fmt::format("{}: cannot list the folder: {}", in.string(), ec.message()));
      std::error_code fe;
      if (it->path().extension() == ".h5" && it->is_regular_file(fe)) found.push_back(it->path());
    }
    std::sort(found.begin(), found.end());
    for (const fs::path& p : found)
      add(p);
  }
  return out;
}

StudyRun loadRunSummary(const fs::path& path, const StudyLoadOptions& options,
                        const Progress& progress) {
  StudyRun r;
  const std::optional<FileStamp> stamp = fileStamp(path);
  if (!stamp) {
    r.summary = unreadableRun(path.string(), "no such file, or it cannot be read");
    r.source = SummarySource::Unreadable;
    return r;
  }
  if (auto cached = readCachedSummary(path, *stamp, options.analysis, options.cache)) {
    r.summary = std::move(*cached);
    r.source = SummarySource::Cache;
    return r;
  }
  try {
    const auto run = RunFile::open(path);
    r.summary = summarizeAnalysis(analyzeRun(*run, {}, options.analysis, progress));
  } catch (const Cancelled&) {
    throw;
  } catch (const std::bad_alloc&) {
    r.summary = unreadableRun(path.string(), "out of memory while analysing it");
    r.source = SummarySource::Unreadable;
    return r;
  } catch (const std::exception& e) {
    // wl::Error messages already name the file.
    r.summary = unreadableRun(path.string(), e.what());
    r.source = SummarySource::Unreadable;
    return r;
  }
  r.summary.path = path.string();
  r.summary.file_size = stamp->size;
  r.summary.file_mtime_ns = stamp->mtime_ns;
  r.source = SummarySource::Analyzed;
  // The file may have changed while it was analysed: cache only what matches its stamp now.
  const std::optional<FileStamp> after = fileStamp(path);
  if (after && after->size == stamp->size && after->mtime_ns == stamp->mtime_ns)
    writeCachedSummary(path, *stamp, options.analysis, r.summary, options.cache, &r.cache_error);
  return r;
}

Study loadStudy(const std::vector<fs::path>& runs, const StudyLoadOptions& options,
                const Progress& progress) {
  Study study;
  study.runs.resize(runs.size());
  unsigned threads = options.threads;
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(runs.size())));
  // Runs loaded side by side already fill the cores: each run's analysis then takes one thread.
  StudyLoadOptions runOptions = options;
  if (threads > 1 && runOptions.analysis.threads == 0) runOptions.analysis.threads = 1;

  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards done, failure, onLoaded and progress
  size_t done = 0;
  std::exception_ptr failure;
  // Lets a long analysis stop between its stages when another thread saw the cancel.
  const Progress inner([&stop](double, std::string_view) { return !stop.load(); });

  auto work = [&] {
    while (!stop.load()) {
      const size_t i = next.fetch_add(1);
      if (i >= runs.size()) return;
      try {
        StudyRun r = loadRunSummary(runs[i], runOptions, inner);
        std::lock_guard lock(mutex);
        study.runs[i] = std::move(r);
        ++done;
        if (options.onLoaded) options.onLoaded(i, study.runs[i]);
        progress.report(static_cast<double>(done) / static_cast<double>(runs.size()),
                        runs[i].filename().string());
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        stop.store(true);
      }
    }
  };
  progress.report(0.0, "loading runs");
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back(work);
    for (std::thread& t : pool)
      t.join();
  }
  if (failure) std::rethrow_exception(failure);
  assignLabels(study.runs);
  return study;
}

namespace {

// One part of a configuration as it reads on an axis ("" when unknown).
using Part = std::string (*)(const RunSummary&);
template <typename T>
std::string optText(const std::optional<T>& v, const char* prefix) {
  return v ? fmt::format("{}{}", prefix, *v) : std::string();
}
std::string flagText(const std::optional<bool>& v, const char* name) {
  return v ? (*v ? std::string(name) : fmt::format("no-{}", name)) : std::string();
}
constexpr Part kParts[] = {
    [](const RunSummary& s) { return s.platform; },
    [](const RunSummary& s) { return s.model; },
    [](const RunSummary& s) { return s.gpu_count ? fmt::format("{} GPUs", s.gpu_count) : ""; },
    [](const RunSummary& s) { return optText(s.config.tp, "tp"); },
    [](const RunSummary& s) { return optText(s.config.pp, "pp"); },
    [](const RunSummary& s) { return optText(s.config.dp, "dp"); },
    [](const RunSummary& s) { return optText(s.config.ep, "ep"); },
    [](const RunSummary& s) { return optText(s.config.mbs, "mbs"); },
    [](const RunSummary& s) { return optText(s.config.gbs, "gbs"); },
    [](const RunSummary& s) { return optText(s.config.seq_len, "seq"); },
    [](const RunSummary& s) { return flagText(s.config.recompute, "rc"); },
    [](const RunSummary& s) { return flagText(s.config.overlap, "ov"); },
};

void assignShortLabels(std::vector<StudyRun>& runs) {
  std::vector<std::string> labels(runs.size());
  // A part is kept when it tells apart runs that the parts kept so far do not (a part the same
  // everywhere, or one that follows from the others, such as gbs from mbs, says nothing).
  auto groups = [&](const std::vector<std::string>& l) {
    return std::set<std::string>(l.begin(), l.end()).size();
  };
  for (Part part : kParts) {
    std::vector<std::string> keyed = labels;
    for (size_t i = 0; i < runs.size(); ++i)
      keyed[i] += '\x1f' + part(runs[i].summary);
    if (groups(keyed) == groups(labels)) continue;
    for (size_t i = 0; i < runs.size(); ++i) {
      const std::string v = part(runs[i].summary);
      if (v.empty()) continue;
      labels[i] += (labels[i].empty() ? "" : " ") + v;
    }
  }
  std::map<std::string, size_t> count;
  for (const std::string& l : labels)
    ++count[l];
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string l = labels[i];
    if (count[l] > 1 || l.empty()) {
      const std::string stem = fs::path(runs[i].summary.path).stem().string();
      l = l.empty() ? std::string() : l + " (" + stem + ")";
    }
    runs[i].short_label = l;
  }
}

}  // namespace

void assignLabels(std::vector<StudyRun>& runs) {
  auto countOf = [&](auto label) {
    std::map<std::string, size_t> n;
    for (const StudyRun& r : runs)
      ++n[label(r)];
    return n;
  };
  auto base = [](const StudyRun& r) {
    return r.summary.name.empty() ? fs::path(r.summary.path).stem().string() : r.summary.name;
  };
  auto withFile = [&](const StudyRun& r) {
    return fmt::format("{} ({})", base(r), fs::path(r.summary.path).filename().string());
  };
  const auto nBase = countOf(base);
  const auto nFile = countOf(withFile);
  for (StudyRun& r : runs) {
    if (nBase.at(base(r)) == 1)
      r.label = base(r);
    else if (nFile.at(withFile(r)) == 1)
      r.label = withFile(r);
    else
      r.label = r.summary.path;
  }
  assignShortLabels(runs);
}

}  // namespace wl
