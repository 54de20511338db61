#include "core/deadline.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include "core/thread_name.h"
#include "core/worker_pool.h"

namespace gpudoctor {
namespace {

std::atomic<int> g_abandoned{0};
std::atomic<int> g_started{0};

// Idle workers, the most recently idle last. A job goes to the most recently idle worker, so a
// daemon that needs fewer workers than it once did lets the surplus reach kWorkerIdleTimeout
// and leave (a shared queue woke them in turn and kept every one of them alive).
// The calling thread's network namespace, as the kernel's cookie for it (SO_NETNS_COOKIE, Linux
// 5.14; 0 where it cannot tell), read once per thread. A worker serves only jobs from threads of
// its own namespace: a thread that unshared its namespace (tests do) must not have its sockets
// opened by a worker of another.
uint64_t ThreadNetns() {
  thread_local uint64_t cookie = [] {
    uint64_t c = 0;
    int s = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) return c;
    socklen_t len = sizeof c;
#ifdef SO_NETNS_COOKIE
    if (::getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &c, &len) != 0) c = 0;
#endif
    ::close(s);
    return c;
  }();
  return cookie;
}

struct IdleWorker {
  uint64_t netns = 0;
  std::condition_variable cv;
  std::function<void()> job;
  bool has_job = false;
  bool leave = false;  // set by RenewWorkerPool: the worker ends instead of taking work
};

struct WorkerPool {
  std::mutex mu;
  // Each is its worker's for the worker's life; shared so that whoever hands it a job can wake
  // it after letting go of `mu` (the woken worker then does not block on `mu` at once).
  std::vector<std::shared_ptr<IdleWorker>> idle;
  bool retired = false;  // renewed: no work goes to it, its workers leave
};

// The pool new work goes to. Pools are never destroyed: idle workers wait on theirs until the
// process leaves (std::_Exit or not), and a retired pool is left to its leaving workers.
std::atomic<WorkerPool*>& CurrentPool() {
  static std::atomic<WorkerPool*> pool{new WorkerPool};
  return pool;
}

void WorkerLoop(WorkerPool* pool, std::function<void()> job, uint64_t netns) {
  NameThisThread("gd-worker");
  auto me = std::make_shared<IdleWorker>();
  me->netns = netns;
  for (;;) {
    job();
    job = nullptr;  // release what the job captured before waiting
    std::unique_lock<std::mutex> lock(pool->mu);
    if (pool->retired || static_cast<int>(pool->idle.size()) >= kMaxIdleWorkers) return;
    me->has_job = false;
    pool->idle.push_back(me);
    bool woken =
        me->cv.wait_for(lock, kWorkerIdleTimeout, [&] { return me->has_job || me->leave; });
    if (!woken) pool->idle.erase(std::find(pool->idle.begin(), pool->idle.end(), me));
    if (!me->has_job) return;  // timed out, or the pool was renewed (it emptied `idle`)
    job = std::move(me->job);
  }
}

}  // namespace

int AbandonedWorkerCount() { return g_abandoned.load(); }
void CountAbandonedWorker() { g_abandoned.fetch_add(1); }

bool RunOnWorker(std::function<void()> job) {
  WorkerPool* pool = CurrentPool().load();
  uint64_t netns = ThreadNetns();
  std::shared_ptr<IdleWorker> w;
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    for (auto it = pool->idle.rbegin(); it != pool->idle.rend(); ++it) {
      if ((*it)->netns != netns) continue;
      w = std::move(*it);
      pool->idle.erase(std::next(it).base());
      w->job = std::move(job);
      w->has_job = true;
      break;
    }
  }
  if (w != nullptr) {
    w->cv.notify_one();  // after letting go of the lock the worker wakes to take
    return true;
  }
  try {
    std::thread(WorkerLoop, pool, std::move(job), netns).detach();
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
  for (const std::shared_ptr<IdleWorker>& w : old->idle) {
    w->leave = true;
    w->cv.notify_one();
  }
  old->idle.clear();
}

int WorkerThreadsStarted() { return g_started.load(); }

int IdleWorkerCount() {
  WorkerPool* pool = CurrentPool().load();
  std::lock_guard<std::mutex> lock(pool->mu);
  return static_cast<int>(pool->idle.size());
}

}  // namespace gpudoctor
