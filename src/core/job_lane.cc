// JobLane (job_lane.h). Each job's `owner` says who may run it: a worker id (queued for that
// worker), or kRunning / kDone / kWithdrawn. A worker claims a job by swapping its own id for
// kRunning; the caller moves a queued job by swapping one worker id for another, or withdraws it.
// One compare-and-swap decides each race, so a job runs at most once.
#include "core/job_lane.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

namespace gpudoctor {
namespace {

constexpr int kRunning = -1;
constexpr int kDone = -2;
constexpr int kWithdrawn = -3;

int64_t Ns(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

TimePoint FromNs(int64_t ns) {
  return TimePoint(std::chrono::duration_cast<SteadyClock::duration>(std::chrono::nanoseconds(ns)));
}

}  // namespace

struct JobLane::Shared {
  explicit Shared(std::vector<std::function<void()>> j)
      : jobs(std::move(j)),
        max_workers(4 * jobs.size() + 1),
        owner(new std::atomic<int>[jobs.size()]),
        started_ns(new std::atomic<int64_t>[jobs.size()]),
        ran_ns(new std::atomic<int64_t>[jobs.size()]),
        progress_ns(new std::atomic<int64_t>[max_workers]) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      owner[i].store(0);
      started_ns[i].store(0);
      ran_ns[i].store(0);
    }
    for (size_t w = 0; w < max_workers; ++w) progress_ns[w].store(0);
  }

  std::vector<std::function<void()>> jobs;
  // Worker ids: the first ones plus up to two per move, each taking >= 1 job; capped.
  const size_t max_workers;
  std::unique_ptr<std::atomic<int>[]> owner;
  std::unique_ptr<std::atomic<int64_t>[]> started_ns;
  std::unique_ptr<std::atomic<int64_t>[]> ran_ns;
  // Per worker: when it was started.
  std::unique_ptr<std::atomic<int64_t>[]> progress_ns;
  std::mutex mu;
  std::condition_variable cv;
  int workers_done = 0;  // under mu: workers through their list
  // Workers started or being started (the caller counts one up before it starts it, down when
  // it could not): the worker that brings workers_done up to it wakes the caller, the others
  // finish without a wake-up (the caller's own timers cover stalls, timeouts and the deadline).
  std::atomic<int> launched{0};
  // Caller's thread only.
  int ids = 0;      // worker ids handed out
  int workers = 0;  // workers started
  bool started = false;

  void Work(int id) {
    progress_ns[id].store(Ns(SteadyClock::now()));
    for (size_t i = 0; i < jobs.size(); ++i) {
      int expect = id;
      if (!owner[i].compare_exchange_strong(expect, kRunning)) continue;
      int64_t begin = Ns(SteadyClock::now());
      started_ns[i].store(begin);
      jobs[i]();
      jobs[i] = nullptr;
      int64_t end = Ns(SteadyClock::now());
      ran_ns[i].store(std::max<int64_t>(1, end - begin));
      owner[i].store(kDone);
    }
    bool last;
    {
      std::lock_guard<std::mutex> lock(mu);
      last = ++workers_done == launched.load();
    }
    if (last) cv.notify_all();
  }

  // Jobs queued for worker `from` (kWithdrawn: every queued job) are withdrawn.
  void Withdraw(int from) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      int o = owner[i].load();
      if (o >= 0 && (from == kWithdrawn || o == from) &&
          owner[i].compare_exchange_strong(o, kWithdrawn)) {
        jobs[i] = nullptr;
      }
    }
  }

  // Moves the jobs queued for worker `from` to worker `to`, all of them or (`half`) the later
  // half. Returns how many moved.
  int Move(int from, int to, bool half = false) {
    std::vector<size_t> queued;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (owner[i].load() == from) queued.push_back(i);
    }
    size_t first = half ? queued.size() / 2 : 0;
    int moved = 0;
    for (size_t q = first; q < queued.size(); ++q) {
      int o = from;
      if (owner[queued[q]].compare_exchange_strong(o, to)) ++moved;
    }
    return moved;
  }

  // Starts worker `id` for the jobs queued for it. False when no thread could be started.
  bool Launch(const std::shared_ptr<Shared>& self, int id) {
    progress_ns[id].store(Ns(SteadyClock::now()));
    launched.fetch_add(1);
    if (!RunOnWorker([self, id] { self->Work(id); })) {
      launched.fetch_sub(1);
      return false;
    }
    ++workers;
    return true;
  }
};

JobLane::JobLane(std::vector<std::function<void()>> jobs)
    : s_(std::make_shared<Shared>(std::move(jobs))) {}

JobLane::~JobLane() = default;

size_t JobLane::size() const { return s_->jobs.size(); }

JobLane::JobState JobLane::state(size_t i) const {
  int o = s_->owner[i].load();
  if (o >= 0) return JobState::kQueued;
  if (o == kRunning) return JobState::kRunning;
  return o == kDone ? JobState::kDone : JobState::kWithdrawn;
}

TimePoint JobLane::started_at(size_t i) const {
  int64_t ns = s_->started_ns[i].load();
  return ns == 0 ? TimePoint{} : FromNs(ns);
}

SteadyClock::duration JobLane::ran(size_t i) const {
  return std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::nanoseconds(s_->ran_ns[i].load()));
}

int JobLane::workers() const { return s_->workers; }

void JobLane::Start(int threads) {
  Shared& s = *s_;
  if (s.started) return;
  s.started = true;
  const size_t n = s.jobs.size();
  if (n == 0) return;
  size_t k = std::clamp<size_t>(threads < 1 ? 1 : static_cast<size_t>(threads), 1, n);
  for (size_t i = 0; i < n; ++i) s.owner[i].store(static_cast<int>(i * k / n));  // in order
  s.ids = static_cast<int>(k);
  for (int id = 0; id < static_cast<int>(k); ++id) {
    if (!s.Launch(s_, id)) s.Withdraw(id);
  }
}

void JobLane::Run(TimePoint deadline, SteadyClock::duration stall,
                  SteadyClock::duration job_timeout) {
  Start();
  Shared& s = *s_;
  const size_t n = s.jobs.size();
  if (s.workers == 0) return;
  std::vector<bool> has_queued;
  std::unique_lock<std::mutex> lock(s.mu);
  for (;;) {
    int seen_done = s.workers_done;
    lock.unlock();
    TimePoint now = SteadyClock::now();
    has_queued.assign(static_cast<size_t>(s.ids), false);
    bool queued = false;
    bool waiting_on_running = false;
    TimePoint wake = deadline;
    for (size_t i = 0; i < n; ++i) {
      int o = s.owner[i].load();
      if (o >= 0) {
        queued = true;
        has_queued[static_cast<size_t>(o)] = true;
      }
      if (o != kRunning) continue;
      int64_t began = s.started_ns[i].load();  // 0: claimed a moment ago, not stamped yet
      TimePoint give_up = job_timeout == SteadyClock::duration::max()
                              ? TimePoint::max()
                              : (began == 0 ? now : FromNs(began)) + job_timeout;
      if (now < give_up) {
        waiting_on_running = true;
        wake = std::min(wake, give_up);
      }
    }
    if (!queued && !waiting_on_running) {
      for (size_t i = 0; i < n; ++i) {
        if (s.owner[i].load() == kRunning) CountAbandonedWorker();
      }
      return;
    }
    if (now >= deadline) {
      s.Withdraw(kWithdrawn);
      return;
    }
    // A worker that has been at its list for `stall` with jobs still queued: they move to two
    // fresh workers, half each (one when a single job is queued), so a long list of jobs that
    // are each quick enough still ends near the deadline, and a hung job holds none of them.
    bool moved = false;
    for (int w = 0; w < static_cast<int>(has_queued.size()); ++w) {
      if (!has_queued[static_cast<size_t>(w)]) continue;
      TimePoint stall_at = FromNs(s.progress_ns[w].load()) + stall;
      if (now < stall_at) {
        wake = std::min(wake, stall_at);
        continue;
      }
      for (bool half : {false, true}) {
        if (static_cast<size_t>(s.ids) >= s.max_workers) break;
        int from = half ? s.ids - 1 : w;  // the second worker takes half the first one's
        int to = s.ids;
        if (half && s.Move(from, to, true) == 0) break;
        if (!half && s.Move(from, to) == 0) break;
        ++s.ids;
        if (!s.Launch(s_, to)) {
          s.Move(to, from);  // no thread: the jobs wait for their worker after all
          break;
        }
        moved = true;
      }
    }
    lock.lock();
    if (moved) continue;
    // Woken by the last worker through its list, else by the first timer due.
    s.cv.wait_until(lock, wake, [&] {
      return s.workers_done != seen_done && s.workers_done == s.launched.load();
    });
  }
}

}  // namespace gpudoctor
