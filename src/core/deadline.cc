#include "core/deadline.h"

#include <deque>

#include "core/worker_pool.h"

namespace gpudoctor {
namespace {

std::atomic<int> g_abandoned{0};
std::atomic<int> g_started{0};

// Jobs handed to idle workers. Invariant (under mu): queue.size() <= idle, so every queued job
// has a waiting worker of its own and never waits behind another job. A renewed pool is retired:
// its workers take the jobs already queued, then leave; no job is queued to it any more.
struct WorkerPool {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  int idle = 0;
  bool retired = false;
};

// The pool new work goes to. Pools are never destroyed: idle workers wait on theirs until the
// process leaves (std::_Exit or not), and a retired pool is left to its leaving workers.
std::atomic<WorkerPool*>& CurrentPool() {
  static std::atomic<WorkerPool*> pool{new WorkerPool};
  return pool;
}

void WorkerLoop(WorkerPool* pool, std::function<void()> job) {
  for (;;) {
    job();
    job = nullptr;  // release what the job captured before waiting
    std::unique_lock<std::mutex> lock(pool->mu);
    if (pool->retired || pool->idle >= kMaxIdleWorkers) return;
    ++pool->idle;
    bool woken = pool->cv.wait_for(lock, kWorkerIdleTimeout,
                                   [&] { return !pool->queue.empty() || pool->retired; });
    if (!woken || pool->queue.empty()) {
      --pool->idle;
      return;
    }
    job = std::move(pool->queue.front());
    pool->queue.pop_front();
    --pool->idle;
  }
}

}  // namespace

int AbandonedWorkerCount() { return g_abandoned.load(); }
void CountAbandonedWorker() { g_abandoned.fetch_add(1); }

bool RunOnWorker(std::function<void()> job) {
  WorkerPool* pool = CurrentPool().load();
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    if (!pool->retired && pool->idle > static_cast<int>(pool->queue.size())) {
      pool->queue.push_back(std::move(job));
      pool->cv.notify_one();
      return true;
    }
  }
  try {
    std::thread(WorkerLoop, pool, std::move(job)).detach();
  } catch (const std::system_error&) {
    return false;
  }
  g_started.fetch_add(1);
  return true;
}

void RenewWorkerPool() {
  WorkerPool* old = CurrentPool().exchange(new WorkerPool);
  std::lock_guard<std::mutex> lock(old->mu);
  old->retired = true;
  old->cv.notify_all();
}

int WorkerThreadsStarted() { return g_started.load(); }

int IdleWorkerCount() {
  WorkerPool* pool = CurrentPool().load();
  std::lock_guard<std::mutex> lock(pool->mu);
  return pool->idle - static_cast<int>(pool->queue.size());
}

}  // namespace gpudoctor
