#include "core/deadline.h"

#include <algorithm>
#include <vector>

namespace gpudoctor {
namespace {

std::atomic<int> g_abandoned{0};
std::atomic<int> g_started{0};

// Idle workers, the most recently idle last. A job goes to the most recently idle worker, so a
// daemon that needs fewer workers than it once did lets the surplus reach kWorkerIdleTimeout
// and leave (a shared queue woke them in turn and kept every one of them alive).
struct IdleWorker {
  std::condition_variable cv;
  std::function<void()> job;
  bool has_job = false;
};

struct WorkerPool {
  std::mutex mu;
  std::vector<IdleWorker*> idle;  // each lives on its worker's stack while it waits
};

// Never destroyed: idle workers wait on it until the process leaves (std::_Exit or not).
WorkerPool& Pool() {
  static WorkerPool* pool = new WorkerPool;
  return *pool;
}

void WorkerLoop(std::function<void()> job) {
  WorkerPool& pool = Pool();
  for (;;) {
    job();
    job = nullptr;  // release what the job captured before waiting
    std::unique_lock<std::mutex> lock(pool.mu);
    if (static_cast<int>(pool.idle.size()) >= kMaxIdleWorkers) return;
    IdleWorker me;
    pool.idle.push_back(&me);
    if (!me.cv.wait_for(lock, kWorkerIdleTimeout, [&] { return me.has_job; })) {
      pool.idle.erase(std::find(pool.idle.begin(), pool.idle.end(), &me));
      return;
    }
    job = std::move(me.job);
  }
}

}  // namespace

int AbandonedWorkerCount() { return g_abandoned.load(); }
void CountAbandonedWorker() { g_abandoned.fetch_add(1); }

bool RunOnWorker(std::function<void()> job) {
  WorkerPool& pool = Pool();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    if (!pool.idle.empty()) {
      IdleWorker* w = pool.idle.back();
      pool.idle.pop_back();
      w->job = std::move(job);
      w->has_job = true;
      w->cv.notify_one();
      return true;
    }
  }
  try {
    std::thread(WorkerLoop, std::move(job)).detach();
  } catch (const std::system_error&) {
    return false;
  }
  g_started.fetch_add(1);
  return true;
}

int WorkerThreadsStarted() { return g_started.load(); }

int IdleWorkerCount() {
  WorkerPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  return static_cast<int>(pool.idle.size());
}

}  // namespace gpudoctor
