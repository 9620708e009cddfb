// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A read-only page describing the open runs: metadata, configuration, GPUs, ranks, data quality.
// The same RunOverview feeds `wattline info`; it is read off the UI thread. Reads of run data that
// failed while viewing (tiles, overview, kernel details: TileStore::failures()) are listed with the
// run's data quality.

#include <QTextBrowser>
#include <QTimer>

#include <memory>
#include <vector>

#include "analysis/run_overview.h"
#include "loaders/format/run_file.h"
#include "widgets/background_job.h"
#include "widgets/timeline/model/tile_store.h"

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
  struct Overview {
    RunOverview overview;
    std::string error;  // why the overview could not be read ("" if it was)
  };
  void render();
  std::vector<std::shared_ptr<const RunFile>> runs_;
  std::vector<Overview> overviews_;  // per run, once read
  std::vector<ReadFailure> failures_;
  QTimer* renderLater_;
  BackgroundJob* job_;
};

// The HTML of the summary (exposed for tests); `readErrors` are listed as errors under data
// quality.
QString runSummaryHtml(const RunFile& run, const QStringList& readErrors = {});
QString runSummaryHtml(const RunFile& run, const RunOverview& overview,
                       const QStringList& readErrors);

}  // namespace wl
