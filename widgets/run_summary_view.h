// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A read-only page describing the open runs: metadata, configuration, GPUs, ranks, data quality.
// The same RunOverview feeds `wattline info`. Reads of run data that failed while viewing (tiles,
// overview, kernel details: TileStore::failures()) are listed with the run's data quality.

#include <QTextBrowser>
#include <QTimer>

#include <memory>
#include <vector>

#include "format/run_file.h"
#include "timeline/tile_store.h"

namespace wl {

class RunSummaryView : public QTextBrowser {
  Q_OBJECT
 public:
  explicit RunSummaryView(QWidget* parent = nullptr);
  void setRuns(const std::vector<std::shared_ptr<const RunFile>>& runs);
  // Every failed read so far (ReadFailure::key.run is the index in the runs given to setRuns);
  // the page is redrawn shortly after, once for a burst of failures.
  void setReadFailures(std::vector<ReadFailure> failures);

 private:
  void render();
  std::vector<std::shared_ptr<const RunFile>> runs_;
  std::vector<ReadFailure> failures_;
  QTimer* renderLater_;
};

// The HTML of the summary (exposed for tests); `readErrors` are listed as errors under data
// quality.
QString runSummaryHtml(const RunFile& run, const QStringList& readErrors = {});

}  // namespace wl
