// Probe interface. A probe only reads and parses: no thresholds, no advice (those are rules).
// It runs on a worker thread under the check's deadline and returns a ProbeOutput whose `apply`
// patch is run later on the calling thread to move its facts into the Snapshot. A probe that
// overruns is abandoned: its patch is never applied. Probes must therefore keep all their state
// local and reach settings only through the shared_ptr in ProbeContext.
//
// Probes are steps: a probe that measures rates takes its previous sample in
// (ProbeContext::previous) and hands its latest sample out (ProbeOutput::next). `check` runs
// most probes once with no previous sample, so the probe samples twice across the window (the
// rate probes the runner splits, runner.h, get a continuous first step and then that step's
// carry, as under watch);
// `watch` keeps the carry between ticks, so the probe samples once per tick and diffs against
// the last tick (no sleep inside a tick). The runner never runs a probe again while an earlier
// run of it is still in flight, so a carry is only ever used by one run at a time.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/deadline.h"
#include "core/settings.h"
#include "core/status.h"
#include "facts/snapshot.h"

namespace gpudoctor {

// What a probe keeps from one run to the next: its last sample, an open NVML session, the
// kernel-log reader's position. Opaque to the runner; each probe downcasts its own.
struct ProbeCarry {
  virtual ~ProbeCarry() = default;
};

// A plain sample with the (steady) time it was taken.
template <typename Sample>
struct SampleCarry : ProbeCarry {
  SampleCarry(Sample s, TimePoint t) : sample(std::move(s)), at(t) {}
  Sample sample;
  TimePoint at;
};

// A SampleCarry that also hands the next run the reader that keeps its files open (watch). A
// skipped run carries nothing, so it holds no file.
template <typename Sample, typename Reader>
struct SampleReaderCarry : SampleCarry<Sample> {
  SampleReaderCarry(Sample s, TimePoint t, std::shared_ptr<Reader> r)
      : SampleCarry<Sample>(std::move(s), t), reader(std::move(r)) {}
  std::shared_ptr<Reader> reader;
};

// What the probes of one `watch` tick share while that tick runs: the round's /proc walk, which
// RecentFullScan (net/proc_scan.h) hands to every probe of the round that asks while someone
// still holds it. The probes of a round run one after another on one worker, so the first one's
// walk was let go before the second asked, and each took its own (probes/round_walk.h). The
// scheduler makes one per tick; the contexts of that tick's runs hold it, so what is held here
// is let go when the tick's last run is through, never kept between rounds. Thread-safe.
class TickShare {
 public:
  void Hold(std::shared_ptr<const void> thing) {
    std::lock_guard<std::mutex> lock(mu_);
    held_.push_back(std::move(thing));
  }

 private:
  std::mutex mu_;
  std::vector<std::shared_ptr<const void>> held_;
};

struct ProbeContext {
  std::shared_ptr<const Settings> settings;
  TimePoint deadline;  // the whole check's deadline; probes with inner calls may use it
  // The carry this probe's previous run returned; null on a first run.
  std::shared_ptr<ProbeCarry> previous;
  // true under `watch`: runs repeat, so a first run takes one sample without sleeping the
  // window (rates start on the next run) and long-lived state (NVML, kmsg) is kept.
  bool continuous = false;
  // Reads several probes of one check share (socket table, /proc walk); null under `watch` and
  // in unit tests (probes then read on their own).
  std::shared_ptr<class SharedSamples> shared;
  // Under `watch`, what this tick's probes share while it runs; null under `check` and in unit
  // tests.
  std::shared_ptr<TickShare> tick_share;
  // When the check's sampling window started (all probes start together).
  TimePoint window_start{};
  const RootFs& fs() const { return settings->fs; }
  std::chrono::milliseconds sample_window() const {
    return std::chrono::milliseconds(settings->sample_ms);
  }
};

struct ProbeOutput {
  ProbeState state = ProbeState::kOk;
  std::string reason;                    // for skipped / failed
  std::function<void(Snapshot&)> apply;  // may be empty
  std::shared_ptr<ProbeCarry> next;      // handed to the next run as `previous`; may be null
};

// The first of the two samples a rate needs: the previous run's (when it is a SampleCarry of
// the same type), else, under `check`, one read now followed by the sampling window. Under
// `watch` with no previous sample it returns nullopt: the caller reports levels without rates.
// `read` returns Result<Sample>; its error is returned as is.
template <typename Sample>
struct FirstSample {
  std::optional<Sample> sample;  // nullopt: no rate this run (watch, first run)
  TimePoint at{};
};
template <typename Sample, typename ReadFn>
Result<FirstSample<Sample>> TakeFirstSample(const ProbeContext& ctx, ReadFn read) {
  if (auto* prev = dynamic_cast<SampleCarry<Sample>*>(ctx.previous.get())) {
    return FirstSample<Sample>{prev->sample, prev->at};
  }
  if (ctx.continuous) return FirstSample<Sample>{};
  Result<Sample> first = read();
  if (!first.ok()) return first.status();
  TimePoint t0 = SteadyClock::now();
  std::this_thread::sleep_for(ctx.sample_window());
  return FirstSample<Sample>{std::move(*first), t0};
}

inline ProbeOutput ProbeOk(std::function<void(Snapshot&)> apply) {
  return {ProbeState::kOk, "", std::move(apply)};
}
inline ProbeOutput ProbeSkipped(std::string reason, std::function<void(Snapshot&)> apply = {}) {
  return {ProbeState::kSkipped, std::move(reason), std::move(apply)};
}
inline ProbeOutput ProbeFailed(std::string reason, std::function<void(Snapshot&)> apply = {}) {
  return {ProbeState::kFailed, std::move(reason), std::move(apply)};
}

// Under `watch`, a probe whose source this host lacks (no InfiniBand class, ...) reports the same
// skip from its carry and looks again only once kAbsentSourceRecheck has passed since it last
// looked (the slow probes' default cadence): hardware or a driver that appears later is seen
// within that time, and a host without it pays nothing per tick.
inline constexpr auto kAbsentSourceRecheck = std::chrono::seconds(30);
struct AbsentSourceCarry : ProbeCarry {
  AbsentSourceCarry(std::string r, TimePoint t) : reason(std::move(r)), looked_at(t) {}
  std::string reason;  // the skip's reason, as the run that looked gave it
  TimePoint looked_at;
};

// The skip to report again (its carry handed on), or nullopt when the probe should look: no
// such carry, or it is kAbsentSourceRecheck old.
inline std::optional<ProbeOutput> AbsentSourceAgain(const ProbeContext& ctx) {
  const auto* absent = dynamic_cast<const AbsentSourceCarry*>(ctx.previous.get());
  if (absent == nullptr || SteadyClock::now() - absent->looked_at >= kAbsentSourceRecheck) {
    return std::nullopt;
  }
  ProbeOutput out = ProbeSkipped(absent->reason);
  out.next = ctx.previous;
  return out;
}

// A skip because the source is absent; under `watch` it carries the absence (AbsentSourceAgain).
inline ProbeOutput AbsentSourceSkip(const ProbeContext& ctx, std::string reason) {
  ProbeOutput out = ProbeSkipped(reason);
  if (ctx.continuous) {
    out.next = std::make_shared<AbsentSourceCarry>(std::move(reason), SteadyClock::now());
  }
  return out;
}

enum class Cadence { kFast, kSlow };  // watch: fast every tick, slow every Nth tick

using ProbeFn = ProbeOutput (*)(const ProbeContext&);

struct ProbeSpec {
  std::string_view name;  // stable, used in config [probes] and in metrics labels
  Layer layer;
  bool default_on;
  Cadence cadence;
  ProbeFn run;
  std::string_view description;
  // Reads only a few procfs files it keeps open (no lock a stuck task or driver can hold, no
  // network, no disk): `watch` runs it on its tick thread, without a worker or a deadline.
  // `check` runs every probe on a worker alike.
  bool cannot_hang = false;
};

}  // namespace gpudoctor
