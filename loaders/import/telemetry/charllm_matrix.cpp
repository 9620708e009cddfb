// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/telemetry/charllm_matrix.h"

#include <fmt/format.h>

#include <algorithm>

#include "loaders/import/telemetry/text_input.h"

namespace wl::import::charllm {
namespace {

// A text field, or "" when the matrix has no such column (a local matrix may lack 'model' or
// 'sweep'; only 'name' is required).
std::string textField(const MatrixRow& row, std::string_view key) {
  const auto it = row.find(key);
  return it == row.end() ? std::string{} : it->second;
}

std::optional<int> intField(const MatrixRow& row, std::string_view key) {
  const auto it = row.find(key);
  if (it == row.end()) return std::nullopt;
  const auto v = text::parseInt(it->second);
  if (!v || *v < 0 || *v > 1'000'000) return std::nullopt;
  return static_cast<int>(*v);
}

bool truthy(const MatrixRow& row, std::string_view key) {
  const auto it = row.find(key);
  return it != row.end() && text::lower(it->second) == "true";
}

ParallelConfig configOfRow(const MatrixRow& row) {
  ParallelConfig c;
  c.tp = intField(row, "tp");
  c.pp = intField(row, "pp");
  c.dp = intField(row, "dp");
  c.ep = intField(row, "ep");
  c.cp = intField(row, "cp");
  c.vpp = intField(row, "vpp");
  c.mbs = intField(row, "mbs");
  c.gbs = intField(row, "gbs");
  c.seq_len = intField(row, "seq");
  c.nodes = intField(row, "nodes");
  c.gpus_per_node = intField(row, "gpus_per_node");
  const auto ac = row.find("ac_gran");
  c.recompute = ac != row.end() && !ac->second.empty();
  c.overlap = truthy(row, "ogs") || truthy(row, "ops");
  return c;
}

// Keeps in `a` only the fields equal in `b`.
template <typename T>
void agree(std::optional<T>& a, const std::optional<T>& b) {
  if (a != b) a.reset();
}

}  // namespace

std::vector<MatrixRow> parseMatrix(std::string_view csv, const std::filesystem::path& source) {
  std::vector<MatrixRow> rows;
  std::vector<std::string> header;
  std::vector<std::string_view> fields;
  int64_t lineNo = 0;
  while (!csv.empty()) {
    const size_t nl = csv.find('\n');
    std::string_view line = csv.substr(0, nl);
    csv = nl == std::string_view::npos ? std::string_view{} : csv.substr(nl + 1);
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (text::trim(line).empty()) continue;
    text::splitCsv(line, fields);
    if (header.empty()) {
      for (std::string_view f : fields)
        header.push_back(text::lower(f));
      if (std::find(header.begin(), header.end(), "name") == header.end())
        text::fail(source, lineNo, "expected an experiment-matrix header with a 'name' column");
      continue;
    }
    if (fields.size() != header.size())
      text::fail(source, lineNo,
                 fmt::format("expected {} fields as in the header, found {}", header.size(),
                             fields.size()));
    MatrixRow row;
    for (size_t i = 0; i < fields.size(); ++i)
      row.emplace(header[i], std::string(fields[i]));
    rows.push_back(std::move(row));
  }
  return rows;
}

ParallelConfig configFromName(std::string_view run) {
  ParallelConfig c;
  const size_t us = run.rfind('_');
  if (us == std::string_view::npos) return c;
  const std::string_view last = run.substr(us + 1);
  if (last.size() > 3 && last.substr(0, 3) == "mbs") {
    if (const auto n = text::parseInt(last.substr(3)); n && *n > 0 && *n < 100000)
      c.mbs = static_cast<int>(*n);
  } else if (last.size() == 5 && std::all_of(last.begin(), last.end(),
                                             [](char ch) { return ch == '0' || ch == '1'; })) {
    c.overlap = last[0] == '1';
    c.recompute = last[1] == '1';
  }
  return c;
}

RunLookup lookupRun(const std::vector<MatrixRow>& rows, std::string_view run,
                    std::string_view model, std::string_view sweep) {
  RunLookup out;
  std::vector<const MatrixRow*> found;
  for (const MatrixRow& r : rows) {
    const auto it = r.find("name");
    if (it != r.end() && it->second == run) found.push_back(&r);
  }
  auto narrow = [&](std::string_view key, std::string_view want) {
    if (want.empty()) return;
    std::vector<const MatrixRow*> kept;
    for (const MatrixRow* r : found) {
      const auto it = r->find(key);
      if (it != r->end() && it->second == want) kept.push_back(r);
    }
    if (!kept.empty()) found = std::move(kept);
  };
  narrow("model", model);
  narrow("sweep", sweep);
  out.candidates = found.size();

  const ParallelConfig fromName = configFromName(run);
  if (found.empty()) {
    out.config = fromName;
    out.notes.push_back(
        {Severity::Info, "config_not_in_matrix", "run",
         fmt::format("run '{}' is not in the CharLLM-PPT experiment matrix; only the "
                     "configuration its name carries was used",
                     run)});
    return out;
  }
  out.config = configOfRow(*found.front());
  out.model = textField(*found.front(), "model");
  out.sweep = textField(*found.front(), "sweep");
  for (size_t i = 1; i < found.size(); ++i) {
    const ParallelConfig o = configOfRow(*found[i]);
    agree(out.config.tp, o.tp), agree(out.config.pp, o.pp), agree(out.config.dp, o.dp);
    agree(out.config.ep, o.ep), agree(out.config.cp, o.cp), agree(out.config.vpp, o.vpp);
    agree(out.config.mbs, o.mbs), agree(out.config.gbs, o.gbs);
    agree(out.config.seq_len, o.seq_len), agree(out.config.nodes, o.nodes);
    agree(out.config.gpus_per_node, o.gpus_per_node);
    agree(out.config.recompute, o.recompute), agree(out.config.overlap, o.overlap);
    if (textField(*found[i], "model") != out.model) out.model.clear();
    if (textField(*found[i], "sweep") != out.sweep) out.sweep.clear();
  }
  if (found.size() > 1) {
    std::string sweeps;
    for (const MatrixRow* r : found)
      sweeps += (sweeps.empty() ? "" : ", ") + (r->count("sweep") ? r->at("sweep") : "?");
    out.notes.push_back(
        {Severity::Warning, "config_ambiguous", "run",
         fmt::format("run '{}' appears {} times in the experiment matrix (sweeps {}); only the "
                     "fields they agree on were used (put the run folder under "
                     "<sweep>/<model>/ to pick one)",
                     run, found.size(), sweeps)});
  }
  if (fromName.mbs) out.config.mbs = fromName.mbs;
  if (fromName.overlap) out.config.overlap = fromName.overlap;
  if (fromName.recompute) out.config.recompute = fromName.recompute;
  return out;
}

}  // namespace wl::import::charllm
