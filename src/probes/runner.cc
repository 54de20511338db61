#include "probes/runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/hostname.h"
#include "core/job_lane.h"
#include "core/strings.h"
#include "probes/shared_samples.h"

namespace gpudoctor {
namespace {

double MsSince(TimePoint start, TimePoint end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

struct TimedOutput {
  ProbeOutput output;
  double ms = 0;
};

// Probes that read once and return (no sampling window, no sleep): `check` runs them one after
// another on one worker (a JobLane) instead of a thread each. Threads are not free on a small VM
// (about 0.3 ms of CPU each to create, fault in and tear down: ~18 started at once were several
// ms of a check's CPU, docs/cost.md); these together take well under 0.1 s, far inside the
// window the sampling probes wait for anyway. The lane keeps each probe's guarantees: one that
// stalls for kLaneStall has the probes queued behind it moved to fresh workers, and each is
// still recorded as a timeout when it has not finished by the deadline. Cheapest first.
// `processes` comes last: it reads the check's shared /proc walk and returns, and waits out a
// window of its own only while tasks are in D (then nothing is queued behind it on the lane).
constexpr std::string_view kLaneProbes[] = {"pressure", "pci_gpu", "job",  "backup",  "inference",
                                            "kmsg",     "boot",    "disk", "thermal", "processes"};
constexpr auto kLaneStall = std::chrono::milliseconds(100);

// Probes that sample through SharedSamples across the check's one window (the TCP table and the
// /proc walk at both ends): one worker runs them in turn. The first takes the samples (waiting
// out the window); the next finds them taken and only computes, so running it after the first
// costs it no time, while a worker of its own waited on the same samples (SharedSamples'
// call_once) for a thread's cost. Their facts are the same either way.
constexpr std::string_view kWindowChain[] = {"sockets", "suspicious"};

// The position of `name` in `list`; -1 when absent.
template <size_t N>
int RankIn(const std::string_view (&list)[N], std::string_view name) {
  const auto* it = std::find(std::begin(list), std::end(list), name);
  return it == std::end(list) ? -1 : static_cast<int>(it - std::begin(list));
}

int LaneRank(std::string_view name) { return RankIn(kLaneProbes, name); }
int ChainRank(std::string_view name) { return RankIn(kWindowChain, name); }

// Rate probes whose window `check` splits into two steps, as `watch` runs them (probe.h: a run
// with `continuous` takes one sample and carries it; a run given that carry diffs against it
// without sleeping). Each used to sleep through the window on a worker of its own (a thread and
// a wake-up each); now one worker (RunSplitProbes) runs their first steps in turn on a lane,
// waits out the window and runs their second steps in turn on a lane. The same facts: each
// probe's window runs from its own first sample and is never shorter than the sample window; a
// probe whose first step left no carry (it failed, or never started) runs whole in its second
// step, as before; one whose first step is still running is waited for, never run twice at once.
constexpr std::string_view kSplitProbes[] = {"cpu", "memory", "nic", "infiniband"};

bool IsSplit(std::string_view name) { return RankIn(kSplitProbes, name) >= 0; }

// What a split probe's first step hands its second.
struct FirstStep {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::shared_ptr<ProbeCarry> carry;
  double ms = 0;
  TimePoint done_at{};
};

struct SplitProbe {
  ProbeFn fn;
  std::shared_ptr<PendingResult<TimedOutput>> into;
};

// The split probes' two steps, on the calling worker (the window's wait is its own, so the
// caller goes on supervising the lane of quick probes: a probe that stalls on either lane holds
// up only those behind it, until the lane moves them). Every `into` is set, unless a step is
// still running at the deadline (the caller records that as a timeout).
void RunSplitProbes(const ProbeContext& ctx, const std::vector<SplitProbe>& probes) {
  const auto window = ctx.sample_window();
  std::vector<std::shared_ptr<FirstStep>> steps;
  std::vector<std::function<void()>> firsts;
  for (const SplitProbe& p : probes) {
    auto step = std::make_shared<FirstStep>();
    steps.push_back(step);
    firsts.push_back([ctx, fn = p.fn, step] {
      ProbeContext first = ctx;
      first.continuous = true;
      TimePoint t0 = SteadyClock::now();
      ProbeOutput out = fn(first);
      TimePoint t1 = SteadyClock::now();
      {
        std::lock_guard<std::mutex> lock(step->mu);
        step->carry = std::move(out.next);
        step->ms = MsSince(t0, t1);
        step->done_at = t1;
        step->done = true;
      }
      step->cv.notify_all();
    });
  }
  // First steps take a sample each (a few ms in all): one that stalls for kFirstStepStall has
  // those behind it moved to fresh workers well inside the window. First steps still queued when
  // the window has passed are withdrawn: their probes run whole.
  constexpr auto kFirstStepStall = std::chrono::milliseconds(25);
  JobLane first_lane(std::move(firsts));
  first_lane.Run(std::min(ctx.window_start + window, ctx.deadline), kFirstStepStall);
  TimePoint window_end = ctx.window_start + window;
  for (const auto& step : steps) {
    std::lock_guard<std::mutex> lock(step->mu);
    if (step->done) window_end = std::max(window_end, step->done_at + window);
  }
  std::this_thread::sleep_until(std::min(window_end, ctx.deadline));

  std::vector<std::function<void()>> seconds;
  for (size_t k = 0; k < probes.size(); ++k) {
    // Past Run, a first step that has not been withdrawn has started (it ran or runs).
    const bool started =
        first_lane.workers() > 0 && first_lane.state(k) != JobLane::JobState::kWithdrawn;
    seconds.push_back(
        [ctx, fn = probes[k].fn, step = steps[k], into = probes[k].into, window, started] {
          ProbeContext second = ctx;
          double first_ms = 0;
          {
            std::unique_lock<std::mutex> lock(step->mu);
            if (started && !step->done &&
                !step->cv.wait_until(lock, ctx.deadline, [&] { return step->done; })) {
              return;  // the first step is stuck: the probe times out
            }
            if (step->done && step->carry != nullptr) {
              second.previous = step->carry;
              first_ms = step->ms;
            }
          }
          // A first step that ended late still gets its whole window.
          if (second.previous != nullptr) {
            std::this_thread::sleep_until(std::min(step->done_at + window, ctx.deadline));
          }
          TimePoint t0 = SteadyClock::now();
          ProbeOutput out = fn(second);
          out.next = nullptr;
          into->Set(TimedOutput{std::move(out), first_ms + MsSince(t0, SteadyClock::now())});
        });
  }
  JobLane second_lane(std::move(seconds));
  second_lane.Run(ctx.deadline, kLaneStall);
  for (size_t k = 0; k < probes.size(); ++k) {
    ProbeOutput out;
    if (second_lane.workers() == 0) {
      out = ProbeFailed("could not start a worker thread");
    } else if (second_lane.state(k) == JobLane::JobState::kWithdrawn) {
      out = {ProbeState::kTimeout,
             "did not start within the deadline (queued behind a stalled probe)"};
    } else {
      continue;
    }
    probes[k].into->Set(TimedOutput{std::move(out), 0});
  }
}

}  // namespace

namespace {
std::atomic<uint64_t> g_host_identity_reads{0};  // HostIdentityReads
}  // namespace

uint64_t HostIdentityReads() { return g_host_identity_reads.load(); }

HostIdentity ReadHostIdentity(const Settings& settings, KeptFile* boot_id) {
  g_host_identity_reads.fetch_add(1);
  HostIdentity id;
  id.hostname = LocalHostname();
  if (boot_id != nullptr) {
    std::string text;
    if (boot_id->Read(&text, 128).ok()) id.boot_id = Sanitize(Trim(text), 64);
  } else if (auto text = settings.fs.ReadProc("sys/kernel/random/boot_id", 128); text.ok()) {
    id.boot_id = Sanitize(Trim(*text), 64);
  }
  return id;
}

Snapshot NewSnapshot(const HostIdentity& id) {
  Snapshot snap;
  snap.hostname = id.hostname;
  snap.boot_id = id.boot_id;
  snap.time = std::chrono::system_clock::now();
  return snap;
}

Snapshot NewSnapshot(const Settings& settings) { return NewSnapshot(ReadHostIdentity(settings)); }

Snapshot RunProbes(const std::vector<const ProbeSpec*>& probes,
                   std::shared_ptr<const Settings> settings, TimePoint deadline) {
  Snapshot snap = NewSnapshot(*settings);
  ProbeContext ctx{settings, deadline};
  ctx.window_start = SteadyClock::now();
  ctx.shared =
      std::make_shared<SharedSamples>(settings->fs, deadline - std::chrono::milliseconds(200));

  TimePoint start = SteadyClock::now();
  std::vector<std::shared_ptr<PendingResult<TimedOutput>>> pending(probes.size());
  auto timed = [ctx](ProbeFn fn, std::shared_ptr<PendingResult<TimedOutput>> into) {
    TimePoint t0 = SteadyClock::now();
    ProbeOutput out = fn(ctx);
    into->Set(TimedOutput{std::move(out), MsSince(t0, SteadyClock::now())});
  };
  // The sampling probes first (each on a worker of its own: they wait for the window; those of
  // kWindowChain on one worker in turn), then the split probes (one worker for their two steps),
  // then the lane of the others, in kLaneProbes order.
  std::vector<size_t> lane_order, split, chain;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (LaneRank(probes[i]->name) >= 0) {
      lane_order.push_back(i);
      continue;
    }
    if (IsSplit(probes[i]->name)) {
      split.push_back(i);
      continue;
    }
    if (ChainRank(probes[i]->name) >= 0) {
      chain.push_back(i);
      continue;
    }
    ProbeFn fn = probes[i]->run;
    pending[i] = StartDetached([fn, ctx] {
      TimePoint t0 = SteadyClock::now();
      ProbeOutput out = fn(ctx);
      return TimedOutput{std::move(out), MsSince(t0, SteadyClock::now())};
    });
  }
  std::sort(lane_order.begin(), lane_order.end(), [&](size_t a, size_t b) {
    return LaneRank(probes[a]->name) < LaneRank(probes[b]->name);
  });
  // Whether each probe of the chain (in chain order) was started; read for the record.
  auto chain_started = std::make_shared<std::vector<std::atomic<bool>>>(chain.size());
  if (!chain.empty()) {
    std::sort(chain.begin(), chain.end(), [&](size_t a, size_t b) {
      return ChainRank(probes[a]->name) < ChainRank(probes[b]->name);
    });
    std::vector<std::pair<ProbeFn, std::shared_ptr<PendingResult<TimedOutput>>>> in_turn;
    for (size_t i : chain) {
      pending[i] = std::make_shared<PendingResult<TimedOutput>>();
      in_turn.emplace_back(probes[i]->run, pending[i]);
    }
    // None is started at or after the deadline: one queued behind a probe that overran is
    // recorded as never started (below), and the worker is counted abandoned once.
    if (!RunOnWorker([timed, in_turn, chain_started, deadline] {
          for (size_t k = 0; k < in_turn.size(); ++k) {
            if (SteadyClock::now() >= deadline) return;
            (*chain_started)[k].store(true);
            timed(in_turn[k].first, in_turn[k].second);
          }
        })) {
      for (size_t i : chain) pending[i] = nullptr;
    }
  }
  if (!split.empty()) {
    std::vector<SplitProbe> split_probes;
    for (size_t i : split) {
      pending[i] = std::make_shared<PendingResult<TimedOutput>>();
      split_probes.push_back({probes[i]->run, pending[i]});
    }
    if (!RunOnWorker([ctx, split_probes] { RunSplitProbes(ctx, split_probes); })) {
      for (size_t i : split) pending[i] = nullptr;
    }
  }
  std::vector<std::function<void()>> jobs;
  for (size_t i : lane_order) {
    pending[i] = std::make_shared<PendingResult<TimedOutput>>();
    jobs.push_back([timed, fn = probes[i]->run, into = pending[i]] { timed(fn, into); });
  }
  std::vector<bool> never_ran(probes.size(), false);
  if (!jobs.empty()) {
    JobLane lane(std::move(jobs));
    lane.Run(deadline, kLaneStall);
    for (size_t k = 0; k < lane_order.size(); ++k) {
      const size_t i = lane_order[k];
      if (lane.workers() == 0) {
        pending[i] = nullptr;  // no worker could be started: "could not start a worker thread"
      } else if (lane.state(k) == JobLane::JobState::kWithdrawn) {
        never_ran[i] = true;
      }
    }
  }

  for (size_t i = 0; i < probes.size(); ++i) {
    ProbeRecord rec;
    rec.name = std::string(probes[i]->name);
    rec.layer = probes[i]->layer;
    if (pending[i] == nullptr) {
      rec.state = ProbeState::kFailed;
      rec.reason = "could not start a worker thread";
    } else if (never_ran[i]) {
      rec.state = ProbeState::kTimeout;
      rec.ms = MsSince(start, SteadyClock::now());
      rec.reason = "did not start within the deadline (queued behind a stalled probe)";
    } else if (!pending[i]->WaitUntil(deadline)) {
      rec.state = ProbeState::kTimeout;
      rec.ms = MsSince(start, SteadyClock::now());
      auto in_chain = std::find(chain.begin(), chain.end(), i);
      if (in_chain != chain.end() &&
          !(*chain_started)[static_cast<size_t>(in_chain - chain.begin())].load()) {
        // Never started: its worker is still on the probe before it (counted there), or came
        // to it after the deadline.
        rec.reason = "did not start within the deadline";
        if (in_chain != chain.begin()) {
          rec.reason += " (queued behind " + std::string(probes[*std::prev(in_chain)]->name) +
                        " on its worker)";
        }
      } else {
        CountAbandonedWorker();
        rec.reason = "did not finish within the deadline; abandoned";
      }
    } else {
      TimedOutput done = pending[i]->Take();
      rec.state = done.output.state;
      rec.reason = std::move(done.output.reason);
      rec.ms = done.ms;
      if (done.output.apply) done.output.apply(snap);
    }
    snap.probes.push_back(std::move(rec));
  }
  return snap;
}

}  // namespace gpudoctor
