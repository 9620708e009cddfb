// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Details of the kernel clicked on the timeline: full name, timing, class, stream, rank, device,
// correlation id, NCCL/RCCL collective metadata, and the simulator's ground-truth clock.

#include <QTextBrowser>

#include <map>
#include <memory>
#include <unordered_map>

#include "format/run_file.h"
#include "timeline/timeline_view.h"

namespace wl {

// The HTML shown for one kernel (exposed for tests).
QString kernelDetailsHtml(const RunFile& run, int track, long event, const KernelEvent& e,
                          const CollectiveInfo* collective, float truthClockMhz);

class KernelDetailsView : public QTextBrowser {
  Q_OBJECT
 public:
  explicit KernelDetailsView(QWidget* parent = nullptr);
  void setRuns(std::vector<std::shared_ptr<const RunFile>> runs);
  void showKernel(const KernelRef& k);

 private:
  const CollectiveInfo* collectiveOf(int run, int track, long event);
  std::vector<std::shared_ptr<const RunFile>> runs_;
  // Per run: (track << 32 | event) -> collective metadata, built on first use.
  std::map<int, std::unordered_map<uint64_t, CollectiveInfo>> collectives_;
};

}  // namespace wl
