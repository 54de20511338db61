// JobLane: a batch of jobs run one after another on ONE worker thread, where RunWithDeadline
// would start a worker each, keeping what a worker each guarantees: no job waits long behind a
// job that stalls, and the caller returns by its deadline whatever the jobs do.
//
// - Start() hands the jobs to one worker (deadline.h's pool), or to `threads` workers in
//   contiguous runs, each running its jobs in order; Run() waits without polling: the last
//   worker through its list wakes it (the others end without a wake-up), else its own timers
//   (a stall, a job's timeout, the deadline).
// - A worker that has been at its list for `stall` while jobs are still queued for it keeps
//   the job it runs; its queued jobs move to two fresh workers, half each (each job runs at most
//   once: a worker claims a job with one compare-and-swap, so a job moved away is never run by
//   the stalled worker). So a job that hangs costs the others at most `stall` of waiting, and a
//   long list of jobs that are each quick enough still spreads out before the deadline.
// - Run() returns when every job has finished, or every job still running has run for
//   `job_timeout` (it is abandoned: never waited for again, its worker counted by
//   CountAbandonedWorker), or at `deadline`. Jobs still queued then are withdrawn: they never
//   run. Jobs still running then go on, and their results (which the job closures publish
//   themselves) may arrive later.
// - A batch whose worker cannot be started withdraws its jobs (workers() is then 0).
//
// Jobs must follow deadline.h's rules: touch only what they own or share by shared_ptr (an
// abandoned job may finish long after Run returned). A job is destroyed on the worker after it
// ran, or with the batch when withdrawn.
// Thread-safety: one thread calls Run(); the accessors may be called from that thread at any
// time (a running job's state changes under it).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "core/deadline.h"

namespace gpudoctor {

class JobLane {
 public:
  enum class JobState { kQueued, kRunning, kDone, kWithdrawn };

  explicit JobLane(std::vector<std::function<void()>> jobs);
  ~JobLane();
  JobLane(const JobLane&) = delete;
  JobLane& operator=(const JobLane&) = delete;

  // Hands the jobs to `threads` workers (clamped to 1..size()) without waiting (the caller may
  // work meanwhile). Once; Run() calls Start(1) when it was not called.
  void Start(int threads = 1);
  // Start() unless done, then waits as described above. Once per batch. `job_timeout`: how long
  // a running job is waited for, from its own start.
  void Run(TimePoint deadline, SteadyClock::duration stall,
           SteadyClock::duration job_timeout = SteadyClock::duration::max());

  size_t size() const;
  JobState state(size_t i) const;
  // When job i started running; TimePoint{} when it has not.
  TimePoint started_at(size_t i) const;
  // How long job i ran; zero unless it is done.
  SteadyClock::duration ran(size_t i) const;
  // Workers the batch used: Start's count, plus one per stall (0 when none could be started).
  int workers() const;

 private:
  struct Shared;
  std::shared_ptr<Shared> s_;
};

}  // namespace gpudoctor
