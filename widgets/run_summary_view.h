// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A read-only page describing the open runs: metadata, configuration, GPUs, ranks, data quality.
// The same RunOverview feeds `wattline info`.

#include <QTextBrowser>

#include <memory>
#include <vector>

#include "format/run_file.h"

namespace wl {

class RunSummaryView : public QTextBrowser {
  Q_OBJECT
 public:
  explicit RunSummaryView(QWidget* parent = nullptr);
  void setRuns(const std::vector<std::shared_ptr<const RunFile>>& runs);
};

// The HTML of the summary (exposed for tests).
QString runSummaryHtml(const RunFile& run);

}  // namespace wl
