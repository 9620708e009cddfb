// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/import_job.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "import/json_stream.h"

namespace wl::import {
namespace {

const Importer* importerNamed(const std::string& name) {
  if (name.empty()) return nullptr;
  const Importer* i = findImporter(name);
  if (!i)
    throw Error(
        fmt::format("unknown format \"{}\" (`wattline import --format list` shows the "
                    "formats)",
                    name));
  return i;
}

// Why no importer reads a file, in one line.
std::string unreadable(const InputProbe& p) {
  const std::string file = p.path.string();
  if (p.head.empty()) return fmt::format("{}: the file is empty", file);
  if (p.head.size() > 262 && p.head.compare(257, 5, "ustar") == 0)
    return fmt::format("{}: a tar archive: extract it and import the folder", file);
  return fmt::format(
      "{}: not a format Wattline reads (it starts with {}; "
      "`wattline import --format list` shows the formats)",
      file, describeBytes(p.head, 24));
}

bool hidden(const std::filesystem::path& rel) {
  for (const auto& part : rel)
    if (!part.empty() && part.string().front() == '.') return true;
  return false;
}

}  // namespace

ImportJob::ImportJob(ImportRequest request) : request_(std::move(request)) {}

std::vector<PlannedInput> ImportJob::plan() const {
  std::vector<PlannedInput> out;
  const Importer* globalFormat = importerNamed(request_.format);
  for (const ImportInput& in : request_.inputs) {
    const Importer* forced = in.format.empty() ? globalFormat : importerNamed(in.format);
    const InputProbe probe = probeInput(in.path);
    if (probe.isDirectory) {
      const Importer* whole =
          forced ? (forced->detect(probe) > 0 ? forced : nullptr) : detectImporter(probe);
      if (whole) {
        out.push_back({in.path, in.path, whole, forced != nullptr, {}});
        continue;
      }
      size_t files = 0;
      for (const std::filesystem::path& rel : probe.entries) {
        if (hidden(rel)) continue;
        ++files;
        const std::filesystem::path file = in.path / rel;
        PlannedInput p{file, in.path, nullptr, forced != nullptr, {}};
        try {
          const InputProbe fp = probeInput(file);
          p.importer = forced ? forced : detectImporter(fp);
          if (!p.importer) p.problem = unreadable(fp);
        } catch (const Error& e) {
          p.problem = e.what();
        }
        out.push_back(std::move(p));
      }
      if (files == 0)
        out.push_back({in.path, in.path, nullptr, false,
                       fmt::format("{}: the folder holds no files", in.path.string())});
      continue;
    }
    PlannedInput p{in.path, in.path, forced, forced != nullptr, {}};
    if (!p.importer) p.importer = detectImporter(probe);
    if (!p.importer) p.problem = unreadable(probe);
    out.push_back(std::move(p));
  }
  return out;
}

ImportSummary ImportJob::run(const Progress& progress) {
  if (request_.inputs.empty()) throw Error("nothing to import: no input given");
  if (request_.output.empty()) throw Error("no output file given");
  if (cancel_) throw Cancelled();
  const std::vector<PlannedInput> planned = plan();
  if (cancel_) throw Cancelled();

  // Never write over an input.
  for (const ImportInput& in : request_.inputs) {
    std::error_code ec;
    if (std::filesystem::exists(request_.output, ec) &&
        std::filesystem::equivalent(in.path, request_.output, ec))
      throw Error(fmt::format("{}: the output would overwrite an input", request_.output.string()));
  }

  // Inputs given as files must be readable; a folder's unreadable files are skipped (noted).
  std::vector<const PlannedInput*> readable;
  std::map<std::filesystem::path, std::vector<std::string>> skipped;
  std::map<std::filesystem::path, size_t> readableIn;
  for (const PlannedInput& p : planned) {
    const bool fromFolder = p.path != p.given;
    if (p.importer) {
      readable.push_back(&p);
      ++readableIn[p.given];
    } else if (!fromFolder) {
      throw Error(p.problem);
    } else {
      skipped[p.given].push_back(p.path.lexically_relative(p.given).string());
    }
  }
  for (const ImportInput& in : request_.inputs)
    if (readableIn[in.path] == 0)
      throw Error(
          fmt::format("{}: no file in the folder is a format Wattline reads ({} files "
                      "looked at)",
                      in.path.string(), skipped[in.path].size()));

  // Progress: reading takes 80% (by file size), assembling and writing the rest.
  const Progress total([this, &progress](double f, std::string_view stage) {
    if (cancel_) return false;
    progress.report(f, stage);
    return true;
  });
  std::vector<double> weight;
  double sum = 0;
  for (const PlannedInput* p : readable) {
    std::error_code ec;
    const double size = std::filesystem::is_regular_file(p->path, ec)
                            ? static_cast<double>(std::filesystem::file_size(p->path, ec))
                            : 1.0;
    weight.push_back(std::max(size, 1.0));
    sum += weight.back();
  }
  std::vector<ImportedData> data;
  double done = 0;
  for (size_t k = 0; k < readable.size(); ++k) {
    const PlannedInput& p = *readable[k];
    const double from = 0.8 * done / sum;
    const double to = 0.8 * (done + weight[k]) / sum;
    const std::string label = fmt::format("reading {} ({}/{}, {})", p.path.filename().string(),
                                          k + 1, readable.size(), p.importer->name());
    const Progress sub([&](double f, std::string_view) {
      total.report(from + (to - from) * f, label);
      return true;
    });
    total.report(from, label);
    try {
      data.push_back(p.importer->read(p.path, request_.options, sub));
    } catch (const Error&) {
      throw;
    } catch (const Cancelled&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(fmt::format("{}: cannot be read as {}: {}", p.path.string(), p.importer->name(),
                              e.what()));
    }
    ImportedData& d = data.back();
    if (d.format.empty()) d.format = std::string(p.importer->name());
    d.path = p.path;
    done += weight[k];
  }
  for (const auto& [folder, files] : skipped) {
    std::string list;
    for (size_t i = 0; i < files.size() && i < 5; ++i)
      list += (i ? ", " : "") + files[i];
    if (files.size() > 5) list += fmt::format(" and {} more", files.size() - 5);
    data.front().notes.push_back(
        {Severity::Info, "skipped_files", folder.filename().string(),
         fmt::format("{} files in the folder are not a format Wattline reads and were skipped: "
                     "{}",
                     files.size(), list)});
  }

  AssembleOptions assemble = request_.assemble;
  if (assemble.parametersJson.empty()) {
    nlohmann::json j;
    nlohmann::json inputs = nlohmann::json::array();
    for (const PlannedInput* p : readable)
      inputs.push_back({{"path", p->path.string()},
                        {"format", p->importer->name()},
                        {"detected", !p->overridden}});
    j["import"]["inputs"] = inputs;
    for (const SourceOffset& o : assemble.offsets)
      j["import"]["offsets"][o.source] = o.offset_ns;
    if (request_.options.dcgm_interval_ms)
      j["import"]["dcgm_interval_ms"] = *request_.options.dcgm_interval_ms;
    assemble.parametersJson = j.dump();
  }
  return assembleRun(std::move(data), assemble, request_.output, total.sub(0.8, 1.0));
}

std::string formatList() {
  std::string out;
  for (bool telemetry : {false, true}) {
    out += telemetry ? "telemetry:\n" : "kernel traces:\n";
    size_t n = 0;
    for (const auto& i : importers())
      if (i->telemetry() == telemetry) {
        out += fmt::format("  {:<16} {}\n", i->name(), i->description());
        ++n;
      }
    if (n == 0) out += "  (none)\n";
  }
  return out;
}

}  // namespace wl::import
