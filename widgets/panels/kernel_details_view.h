// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Details of the kernel clicked on the timeline: full name, timing, class, stream, rank, device,
// correlation id, NCCL/RCCL collective metadata, and the simulator's ground-truth clock.
// What the timeline drew shows at once; the full event, its collective and the truth clock are
// read off the UI thread (BackgroundJob). A read that fails says so in the view and is reported to
// the tile store (hatched on the timeline, listed with the run's data quality).

#include <QTextBrowser>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "loaders/format/run_file.h"
#include "widgets/background_job.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/view/timeline_view.h"

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
  // Where failed reads are reported (the timeline's store); optional.
  void setTileStore(TileStore* store) { store_ = store; }
  BackgroundJob* job() const { return job_; }

 signals:
  void readFailed(const QString& message);

 private:
  // Per run: (track << 32 | event) -> collective metadata, built on first use by the reads.
  using CollectiveMap = std::unordered_map<uint64_t, CollectiveInfo>;
  struct CollectiveCache {
    std::mutex mutex;
    std::map<int, std::shared_ptr<const CollectiveMap>> byRun;
  };
  struct Details {
    KernelEvent event;
    std::optional<CollectiveInfo> collective;
    float clock = kNaNf;
  };
  void showReadFailure(const QString& what);
  static Details readDetails(const RunFile& run, const KernelRef& k, CollectiveCache& cache);
  std::vector<std::shared_ptr<const RunFile>> runs_;
  std::shared_ptr<CollectiveCache> collectives_ = std::make_shared<CollectiveCache>();
  BackgroundJob* job_;
  TileStore* store_ = nullptr;
  KernelRef current_;  // the kernel shown
};

}  // namespace wl
