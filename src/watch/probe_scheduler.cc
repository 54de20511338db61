#include "watch/probe_scheduler.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "core/job_lane.h"
#include "core/strings.h"
#include "probes/runner.h"

namespace gpudoctor {

CadencePlan::CadencePlan(double interval_s, double slow_interval_s)
    : interval_s_(interval_s), slow_interval_s_(std::max(slow_interval_s, interval_s)) {}

bool CadencePlan::SlowDue(double now_s) {
  // A small tolerance keeps a 30 s cadence on 1 s ticks from slipping to 31 s by jitter.
  if (!last_slow_s_ || now_s - *last_slow_s_ >= slow_interval_s_ - interval_s_ * 0.25) {
    last_slow_s_ = now_s;
    return true;
  }
  return false;
}

double CadencePlan::SleepUntilNext(double tick_started_s, double now_s) const {
  double next = tick_started_s + interval_s_;
  return std::max(0.0, next - now_s);
}

namespace {

struct RunResult {
  ProbeOutput output;
  double ms = 0;
};

// A probe that runs this long has the probes queued behind it moved to another worker.
constexpr auto kLaneStall = std::chrono::milliseconds(100);

double MsBetween(TimePoint a, TimePoint b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// A procfs tree other than the running kernel's (--path.procfs): its boot id may change under a
// running watch, so its identity is read every tick (see the header).
bool IsOtherHostsProcfs(const Settings& settings) {
  return settings.fs.procfs() != RootFs().procfs();
}

}  // namespace

struct ProbeScheduler::Slot {
  const ProbeSpec* spec = nullptr;
  std::shared_ptr<ProbeCarry> carry;
  std::shared_ptr<PendingResult<RunResult>> pending;
  uint64_t started_tick = 0;
  TimePoint started_at{};
  std::function<void(Snapshot&)> last_apply;  // re-applied while a slow probe is not due
  ProbeRecord last_record;
  bool ever_ran = false;
};

ProbeScheduler::ProbeScheduler(std::vector<const ProbeSpec*> probes,
                               std::shared_ptr<const Settings> settings)
    : settings_(std::move(settings)),
      boot_id_(settings_->fs.ProcPath("sys/kernel/random/boot_id")),
      identity_every_tick_(IsOtherHostsProcfs(*settings_)) {
  for (const ProbeSpec* p : probes) {
    auto slot = std::make_unique<Slot>();
    slot->spec = p;
    slot->last_record.name = std::string(p->name);
    slot->last_record.layer = p->layer;
    slots_.push_back(std::move(slot));
  }
}

ProbeScheduler::~ProbeScheduler() = default;

void ProbeScheduler::UpdateSettings(std::shared_ptr<const Settings> settings) {
  settings_ = std::move(settings);
  std::string boot_id_path = settings_->fs.ProcPath("sys/kernel/random/boot_id");
  if (boot_id_path != boot_id_.path()) boot_id_ = KeptFile(std::move(boot_id_path));
  identity_.reset();
  identity_every_tick_ = IsOtherHostsProcfs(*settings_);
}

Snapshot ProbeScheduler::Tick(uint64_t tick, bool run_slow, TimePoint deadline) {
  if (run_slow || !identity_ || identity_every_tick_) {
    identity_ = ReadHostIdentity(*settings_, &boot_id_);
  }
  Snapshot snap = NewSnapshot(*identity_);
  TimePoint start = SteadyClock::now();

  std::vector<Slot*> laned;         // run on the lane this tick
  std::vector<Slot*> inline_slots;  // run on this thread
  std::vector<std::function<void()>> jobs;
  std::vector<Slot*> stuck;
  bool any_first_run = false;  // a probe's first run: its cost is unknown (NVML init, ...)
  for (auto& s : slots_) {
    Slot& slot = *s;
    bool due = slot.spec->cadence == Cadence::kFast || run_slow || !slot.ever_ran;
    if (slot.pending != nullptr) {
      if (!slot.pending->Done()) {
        stuck.push_back(&slot);
        continue;
      }
      // It returned after its tick's deadline: keep its carry and facts.
      RunResult late = slot.pending->Take();
      slot.pending = nullptr;
      slot.carry = late.output.next;
      if (late.output.apply) slot.last_apply = late.output.apply;
    }
    if (!due) continue;
    any_first_run = any_first_run || !slot.ever_ran;
    slot.started_tick = tick;
    slot.started_at = start;
    slot.ever_ran = true;
    if (slot.spec->cannot_hang) {
      inline_slots.push_back(&slot);
      continue;
    }
    laned.push_back(&slot);
  }
  // Held by every context of this tick's runs: what the round's probes share (its /proc walk) is
  // let go when the last of them is through.
  auto tick_share = std::make_shared<TickShare>();
  // Quickest first (by the last run's time): a probe that waits inside its run (the processes
  // probe's window while tasks are in D) goes last and holds no other probe up.
  std::stable_sort(laned.begin(), laned.end(), [](const Slot* a, const Slot* b) {
    return a->last_record.ms < b->last_record.ms;
  });
  for (Slot* slot : laned) {
    ProbeContext ctx{settings_, deadline, slot->carry, true};
    ctx.tick_share = tick_share;
    ProbeFn fn = slot->spec->run;
    auto pending = std::make_shared<PendingResult<RunResult>>();
    slot->pending = pending;
    jobs.push_back([fn, ctx, pending] {
      TimePoint t0 = SteadyClock::now();
      ProbeOutput out = fn(ctx);
      pending->Set(RunResult{std::move(out), MsBetween(t0, SteadyClock::now())});
    });
  }

  // The probes that can hang go to one worker in turn (JobLane): one hand-off a tick, and a
  // probe that stalls has the ones behind it moved to another worker.
  // A tick with first runs gives each probe a worker (their costs are not known yet).
  JobLane lane(std::move(jobs));
  lane.Start(any_first_run ? static_cast<int>(laned.size()) : 1);
  for (Slot* slot : inline_slots) {
    ProbeContext ctx{settings_, deadline, slot->carry, true};
    ctx.tick_share = tick_share;
    TimePoint t0 = SteadyClock::now();
    ProbeOutput out = slot->spec->run(ctx);
    ProbeRecord& rec = slot->last_record;
    rec.state = out.state;
    rec.reason = std::move(out.reason);
    rec.ms = MsBetween(t0, SteadyClock::now());
    slot->carry = std::move(out.next);
    slot->last_apply = std::move(out.apply);
  }
  // Short ticks (watch --interval 0.3) move the probes behind a slow one sooner.
  lane.Run(deadline, std::min<SteadyClock::duration>(kLaneStall, (deadline - start) / 4));

  for (size_t i = 0; i < laned.size(); ++i) {
    Slot* slot = laned[i];
    ProbeRecord& rec = slot->last_record;
    JobLane::JobState state = lane.state(i);
    if (state == JobLane::JobState::kWithdrawn) {
      // Never started (the lane could not start, or the probes before it took the tick).
      slot->pending = nullptr;
      rec.state = lane.workers() == 0 ? ProbeState::kFailed : ProbeState::kTimeout;
      rec.ms = 0;
      rec.reason = lane.workers() == 0 ? "could not start a worker thread"
                                       : "not started within the tick; queued behind others";
      continue;
    }
    if (!slot->pending->Done()) {
      rec.state = ProbeState::kTimeout;
      rec.ms = MsBetween(start, SteadyClock::now());
      rec.reason = "did not finish within the tick; left running";
      continue;
    }
    RunResult done = slot->pending->Take();
    slot->pending = nullptr;
    rec.state = done.output.state;
    rec.reason = std::move(done.output.reason);
    rec.ms = done.ms;
    slot->carry = std::move(done.output.next);
    slot->last_apply = std::move(done.output.apply);
  }
  for (Slot* slot : stuck) {
    ProbeRecord& rec = slot->last_record;
    rec.state = ProbeState::kTimeout;
    rec.ms = MsBetween(slot->started_at, SteadyClock::now());
    rec.reason =
        "still running since tick " + std::to_string(slot->started_tick) + "; not started again";
  }

  // Apply every probe's latest facts in registry order (slow probes' facts persist between
  // their runs; a probe stuck or timed out this tick contributes nothing this tick).
  for (auto& s : slots_) {
    Slot& slot = *s;
    if (!slot.ever_ran) continue;
    if (slot.last_apply && slot.last_record.state != ProbeState::kTimeout) slot.last_apply(snap);
    snap.probes.push_back(slot.last_record);
  }
  return snap;
}

}  // namespace gpudoctor
