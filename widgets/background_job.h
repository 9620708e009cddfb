// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// BackgroundJob: the one way a widget runs work off the UI thread (reads of a run file,
// analyses), instead of each widget wiring QtConcurrent and QFutureWatcher by hand.
//
// A job object belongs to a widget and runs one piece of work at a time. start() bumps a
// generation counter: the result of older work is dropped, so a widget that starts again (a new
// selection, other runs) never shows a stale answer. The work gets a Context to ask whether it was
// superseded (and stop early) and to report progress. What it returns comes back on the UI thread
// to the `done` callback; an exception comes back as failed(message), which widgets show (never an
// empty result that looks like no data). Destroying the job cancels it without waiting: the work
// must capture by value what it reads (a shared_ptr to the run), never the widget.

#include <QFuture>
#include <QObject>
#include <QString>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace wl {

class BackgroundJob : public QObject {
  Q_OBJECT
 public:
  explicit BackgroundJob(QObject* parent = nullptr);
  ~BackgroundJob() override;

  // Shared between the job and its running work; only `owner` is UI-thread-only.
  struct State {
    std::atomic<uint64_t> generation{0};
    BackgroundJob* owner = nullptr;  // null once the job is gone (read on the UI thread)
  };

  class Context {
   public:
    Context(std::shared_ptr<State> state, uint64_t generation)
        : state_(std::move(state)), generation_(generation) {}
    // True once newer work was started or the job was cancelled or destroyed.
    bool cancelled() const { return state_->generation.load() != generation_; }
    // Fraction done in [0, 1] and what is being done; reaches the UI thread as progressChanged
    // when the permille or the stage changed. Call it from the work's own thread.
    void progress(double fraction, std::string_view stage = {}) const;

   private:
    std::shared_ptr<State> state_;
    uint64_t generation_;
    mutable int lastPermille_ = -1;
    mutable std::string lastStage_;
  };

  // Runs work(const Context&) on the thread pool; its result goes to done(result) on the UI
  // thread unless newer work started meanwhile. An exception emits failed(what()).
  template <class Work, class Done>
  void start(Work work, Done done);
  // Drops the result of the running work (it may still finish in the background).
  void cancel();
  bool busy() const { return busy_; }
  uint64_t generation() const { return state_->generation.load(); }
  // Blocks until the last started work has finished (tests, shutdown); results still arrive
  // through the event loop.
  void waitForFinished();

 signals:
  void progressChanged(double fraction, const QString& stage);
  void failed(const QString& message);
  void busyChanged(bool busy);

 private:
  uint64_t begin();
  // On the UI thread: true if `generation` is still the newest work of a live job (then the job
  // is no longer busy).
  static bool finish(const std::shared_ptr<State>& state, uint64_t generation);
  static void post(std::function<void()> f);
  void setBusy(bool busy);

  std::shared_ptr<State> state_ = std::make_shared<State>();
  QFuture<void> future_;
  bool busy_ = false;
};

template <class Work, class Done>
void BackgroundJob::start(Work work, Done done) {
  using T = std::invoke_result_t<Work&, const Context&>;
  const uint64_t gen = begin();
  auto state = state_;
  future_ =
      QtConcurrent::run([state, gen, work = std::move(work), done = std::move(done)]() mutable {
        const Context ctx(state, gen);
        if (ctx.cancelled()) return;
        try {
          if constexpr (std::is_void_v<T>) {
            work(ctx);
            post([state, gen, done]() mutable {
              if (finish(state, gen)) done();
            });
          } else {
            auto result = std::make_shared<T>(work(ctx));
            post([state, gen, done, result]() mutable {
              if (finish(state, gen)) done(std::move(*result));
            });
          }
        } catch (const std::exception& e) {
          const QString message = QString::fromStdString(e.what());
          post([state, gen, message] {
            if (finish(state, gen)) emit state->owner->failed(message);
          });
        }
      });
}

}  // namespace wl
