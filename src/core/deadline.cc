#include "core/deadline.h"

#include <deque>

namespace gpudoctor {
namespace {

std::atomic<int> g_abandoned{0};
std::atomic<int> g_started{0};

// Jobs handed to idle workers. Invariant (under mu): queue.size() <= idle, so every queued job
// has a waiting worker of its own and never waits behind another job.
struct WorkerPool {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  int idle = 0;
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
    if (pool.idle >= kMaxIdleWorkers) return;
    ++pool.idle;
    if (!pool.cv.wait_for(lock, kWorkerIdleTimeout, [&] { return !pool.queue.empty(); })) {
      --pool.idle;
      return;
    }
    job = std::move(pool.queue.front());
    pool.queue.pop_front();
    --pool.idle;
  }
}

}  // namespace

int AbandonedWorkerCount() { return g_abandoned.load(); }
void CountAbandonedWorker() { g_abandoned.fetch_add(1); }

bool RunOnWorker(std::function<void()> job) {
  WorkerPool& pool = Pool();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.idle > static_cast<int>(pool.queue.size())) {
      pool.queue.push_back(std::move(job));
      pool.cv.notify_one();
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
  return pool.idle - static_cast<int>(pool.queue.size());
}

}  // namespace gpudoctor
