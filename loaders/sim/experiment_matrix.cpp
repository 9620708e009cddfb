// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/experiment_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>

#include "loaders/core/error.h"

namespace wl::sim {
namespace {

std::vector<std::string> splitCsvLine(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cur += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

std::vector<MatrixEntry> readExperimentMatrix(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the experiment matrix", file));
  std::string line;
  if (!std::getline(in, line))
    throw Error(fmt::format("{}: empty file, expected the experiment matrix CSV header", file));
  const std::vector<std::string> header = splitCsvLine(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i)
    col[header[i]] = i;
  for (const char* need :
       {"sweep",  "model", "name",  "nodes", "gpus_per_node", "tp",   "pp",      "cp",
        "ep",     "dp",    "vpp",   "sp",    "mbs",           "gbs",  "seq",     "layers",
        "hidden", "ffn",   "heads", "qg",    "experts",       "topk", "ac_gran", "ac_layers",
        "ogs",    "ops",   "ub",    "fsdp",  "optim"})
    if (!col.count(need))
      throw Error(
          fmt::format("{}: line 1: missing column '{}' (not an experiment matrix?)", file, need));
  std::vector<MatrixEntry> rows;
  int lineNo = 1;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> f = splitCsvLine(line);
    if (f.size() != header.size())
      throw Error(fmt::format("{}: line {}: {} fields, expected {}", file, lineNo, f.size(),
                              header.size()));
    auto text = [&](const char* name) -> const std::string& { return f[col.at(name)]; };
    auto integer = [&](const char* name, int fallback) {
      const std::string& v = text(name);
      if (v.empty()) return fallback;
      int out = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
      if (ec != std::errc() || p != v.data() + v.size() || out < 0 || out > 10000000)
        throw Error(fmt::format("{}: line {}, column {}: expected a whole number, found '{}'", file,
                                lineNo, name, v));
      return out;
    };
    auto flag = [&](const char* name) { return lower(text(name)) == "true"; };
    MatrixEntry e;
    e.line = lineNo;
    e.sweep = text("sweep");
    e.name = text("name");
    e.modelId = text("model");
    const ModelShape* base = findModel(e.modelId);
    if (!base)
      throw Error(fmt::format("{}: line {}, column model: unknown model '{}' (known: {})", file,
                              lineNo, e.modelId, modelNames()));
    e.model = *base;
    e.model.layers = integer("layers", base->layers);
    e.model.hidden = integer("hidden", base->hidden);
    e.model.ffn = integer("ffn", base->ffn);
    e.model.heads = integer("heads", base->heads);
    e.model.query_groups = integer("qg", e.model.heads);
    e.model.experts = integer("experts", 0);
    e.model.topk = integer("topk", 0);
    e.nodes = integer("nodes", 0);
    e.gpusPerNode = integer("gpus_per_node", 0);
    e.tp = integer("tp", 1);
    e.pp = integer("pp", 1);
    e.ep = integer("ep", 1);
    e.dp = integer("dp", 1);
    e.mbs = integer("mbs", 1);
    e.gbs = integer("gbs", 0);
    e.seq = integer("seq", 0);
    if (integer("cp", 1) != 1 || !text("vpp").empty())
      throw Error(
          fmt::format("{}: line {}: context parallelism and virtual pipeline stages are "
                      "not simulated",
                      file, lineNo));
    e.sequenceParallel = flag("sp");
    e.recompute = lower(text("ac_gran")) == "full";
    e.recomputeLayers = e.recompute ? integer("ac_layers", -1) : -1;
    e.overlap = flag("ogs") || flag("ops") || flag("ub");
    e.fsdp = flag("fsdp");
    const std::string optim = lower(text("optim"));
    e.distributedOptimizer = optim.find("distributed") != std::string::npos;
    if (lower(e.sweep) == "inference")
      e.workload = Workload::Inference;
    else if (col.count("peft") && lower(text("peft")) == "lora")
      e.workload = Workload::Lora;
    const std::string sweep = lower(e.sweep);
    if (sweep.find("h100") != std::string::npos) e.platformId = "h100";
    if (sweep.find("h200") != std::string::npos) e.platformId = "h200";
    rows.push_back(std::move(e));
  }
  return rows;
}

const MatrixEntry& findMatrixEntry(const std::vector<MatrixEntry>& rows, std::string_view config,
                                   std::string_view platformId, std::string_view modelName,
                                   const std::filesystem::path& path) {
  std::string sweep, name(config);
  // NAME@LINE picks the row on that line of the file (names repeat in some sweeps).
  std::optional<long> line;
  if (const size_t at = name.rfind('@'); at != std::string::npos) {
    char* end = nullptr;
    const long l = std::strtol(name.c_str() + at + 1, &end, 10);
    if (end && *end == '\0' && at + 1 < name.size()) {
      line = l;
      name.resize(at);
    }
  }
  if (const size_t slash = name.find('/'); slash != std::string::npos) {
    sweep = name.substr(0, slash);
    name = name.substr(slash + 1);
  }
  std::vector<const MatrixEntry*> hits;
  for (const MatrixEntry& e : rows)
    if (e.name == name && (sweep.empty() || e.sweep == sweep) &&
        (!line || static_cast<long>(e.line) == *line))
      hits.push_back(&e);
  if (hits.empty())
    throw Error(
        fmt::format("{}: no configuration named '{}' (the name column holds names such "
                    "as {}; SWEEP/NAME picks one sweep)",
                    path.string(), config, rows.empty() ? "?" : rows.front().name));
  auto narrow = [&](auto keep) {
    std::vector<const MatrixEntry*> kept;
    for (const MatrixEntry* e : hits)
      if (keep(*e)) kept.push_back(e);
    if (!kept.empty()) hits = std::move(kept);
  };
  if (hits.size() > 1 && !platformId.empty())
    narrow([&](const MatrixEntry& e) { return e.platformId == lower(platformId); });
  if (hits.size() > 1 && !modelName.empty())
    narrow([&](const MatrixEntry& e) { return lower(e.modelId) == lower(modelName); });
  if (hits.size() > 1) {
    std::string where;
    for (const MatrixEntry* e : hits)
      where +=
          fmt::format("{}{}/{} (line {})", where.empty() ? "" : ", ", e->sweep, e->name, e->line);
    throw Error(fmt::format("{}: '{}' names {} configurations: {}; give SWEEP/NAME or NAME@LINE",
                            path.string(), config, hits.size(), where));
  }
  return *hits.front();
}

void applyMatrixEntry(const MatrixEntry& e, SimConfig& c) {
  c.model = e.model;
  c.nodes = e.nodes;
  c.gpusPerNode = e.gpusPerNode;
  c.tp = e.tp;
  c.pp = e.pp;
  c.dp = e.dp;
  c.ep = e.ep;
  c.mbs = e.mbs;
  c.gbs = e.gbs;
  c.seqLen = e.seq;
  c.sequenceParallel = e.sequenceParallel;
  c.recompute = e.recompute;
  c.recomputeLayers = e.recompute && e.recomputeLayers > 0
                          ? std::min(e.recomputeLayers, e.model.layers / std::max(1, e.pp))
                          : -1;
  c.overlap = e.overlap;
  c.fsdp = e.fsdp;
  c.distributedOptimizer = e.distributedOptimizer && !e.fsdp;
  c.workload = e.workload;
  c.sourceDetail = fmt::format("experiment matrix {}/{}", e.sweep, e.name);
}

}  // namespace wl::sim
