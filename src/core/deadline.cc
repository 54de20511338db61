#include "core/deadline.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

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

void WorkerLoop(std::function<void()> job, uint64_t netns) {
  WorkerPool& pool = Pool();
  for (;;) {
    job();
    job = nullptr;  // release what the job captured before waiting
    std::unique_lock<std::mutex> lock(pool.mu);
    if (static_cast<int>(pool.idle.size()) >= kMaxIdleWorkers) return;
    IdleWorker me;
    me.netns = netns;
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
  uint64_t netns = ThreadNetns();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    for (auto it = pool.idle.rbegin(); it != pool.idle.rend(); ++it) {
      if ((*it)->netns != netns) continue;
      IdleWorker* w = *it;
      pool.idle.erase(std::next(it).base());
      w->job = std::move(job);
      w->has_job = true;
      w->cv.notify_one();
      return true;
    }
  }
  try {
    std::thread(WorkerLoop, std::move(job), netns).detach();
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
