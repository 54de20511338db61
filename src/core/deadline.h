// Deadline runner: run work on a detached worker thread and wait for it only until a deadline.
// Each piece of work starts at once on a worker of its own: an idle pooled worker when one is
// waiting, else a new thread. A worker that finished goes back to the pool (at most
// kMaxIdleWorkers idle, each leaving after kWorkerIdleTimeout without work), so a daemon that
// runs the same probes every tick does not create, map and unmap ~20 thread stacks a tick.
// Work that overruns (a read that never returns, an NVML call stuck in the driver) is abandoned:
// its thread is never joined, its result is discarded when it eventually arrives, and the caller
// goes on; a worker stuck that way is simply never idle again, so no later work waits on it.
// Work must leave its thread as it found it (CPU affinity, signal mask): the thread is reused.
// Because abandoned threads may still be running, the process must leave with std::_Exit after
// flushing output (see cli/main_dispatch.cc), never by running static destructors.
//
// Work functions must only touch data they own or that outlives the process (captured by value
// or shared_ptr): an abandoned worker may wake up long after the caller has returned.
// Thread-safety: all functions are safe to call concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

namespace gpudoctor {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

// Number of workers started and abandoned so far in this process (for diagnostics and tests).
int AbandonedWorkerCount();
void CountAbandonedWorker();

inline constexpr int kMaxIdleWorkers = 32;
inline constexpr std::chrono::seconds kWorkerIdleTimeout{90};

// Starts job() at once on an idle pooled worker or a new detached thread. False if no thread
// could be started (job is then not run). The job object is destroyed on the worker after it ran.
bool RunOnWorker(std::function<void()> job);

// Worker threads started so far in this process, and how many are idle now (for tests).
int WorkerThreadsStarted();
int IdleWorkerCount();

template <typename T>
class PendingResult {
 public:
  // Waits until the work finished or `deadline` passed. True when a value is available.
  bool WaitUntil(TimePoint deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_until(lock, deadline, [&] { return value_.has_value(); });
  }
  bool Done() {
    std::lock_guard<std::mutex> lock(mu_);
    return value_.has_value();
  }
  // Only after WaitUntil returned true.
  T Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(*value_);
  }
  void Set(T v) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      value_.emplace(std::move(v));
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<T> value_;
};

// Starts fn() on a new detached thread. Returns nullptr if no thread could be started.
template <typename F>
auto StartDetached(F fn) -> std::shared_ptr<PendingResult<std::invoke_result_t<F>>> {
  using T = std::invoke_result_t<F>;
  auto pending = std::make_shared<PendingResult<T>>();
  // std::function needs a copyable callable; fn may be move-only.
  auto work = std::make_shared<F>(std::move(fn));
  if (!RunOnWorker([pending, work] { pending->Set((*work)()); })) return nullptr;
  return pending;
}

// Runs fn() with a deadline. std::nullopt when it did not finish in time (or no thread could be
// started); the overrunning worker is abandoned and counted.
template <typename F>
auto RunWithDeadline(F fn, TimePoint deadline) -> std::optional<std::invoke_result_t<F>> {
  auto pending = StartDetached(std::move(fn));
  if (pending == nullptr) return std::nullopt;
  if (!pending->WaitUntil(deadline)) {
    CountAbandonedWorker();
    return std::nullopt;
  }
  return pending->Take();
}

}  // namespace gpudoctor
