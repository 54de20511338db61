#include "probes/runner.h"

#include <unistd.h>

#include "core/hostname.h"
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

}  // namespace

Snapshot NewSnapshot(const Settings& settings) {
  Snapshot snap;
  snap.hostname = LocalHostname();
  if (auto text = settings.fs.ReadProc("sys/kernel/random/boot_id", 128); text.ok()) {
    snap.boot_id = Sanitize(Trim(*text), 64);
  }
  snap.time = std::chrono::system_clock::now();
  return snap;
}

Snapshot NewSnapshot(const Settings& settings, KeptFile& boot_id) {
  Snapshot snap;
  snap.hostname = LocalHostname();
  std::string text;
  if (boot_id.Read(&text, 128).ok()) snap.boot_id = Sanitize(Trim(text), 64);
  snap.time = std::chrono::system_clock::now();
  return snap;
}

Snapshot RunProbes(const std::vector<const ProbeSpec*>& probes,
                   std::shared_ptr<const Settings> settings, TimePoint deadline) {
  Snapshot snap = NewSnapshot(*settings);
  ProbeContext ctx{settings, deadline};
  ctx.window_start = SteadyClock::now();
  ctx.shared =
      std::make_shared<SharedSamples>(settings->fs, deadline - std::chrono::milliseconds(200));

  TimePoint start = SteadyClock::now();
  std::vector<std::shared_ptr<PendingResult<TimedOutput>>> pending;
  pending.reserve(probes.size());
  for (const ProbeSpec* spec : probes) {
    ProbeFn fn = spec->run;
    pending.push_back(StartDetached([fn, ctx] {
      TimePoint t0 = SteadyClock::now();
      ProbeOutput out = fn(ctx);
      return TimedOutput{std::move(out), MsSince(t0, SteadyClock::now())};
    }));
  }

  for (size_t i = 0; i < probes.size(); ++i) {
    ProbeRecord rec;
    rec.name = std::string(probes[i]->name);
    rec.layer = probes[i]->layer;
    if (pending[i] == nullptr) {
      rec.state = ProbeState::kFailed;
      rec.reason = "could not start a worker thread";
    } else if (!pending[i]->WaitUntil(deadline)) {
      CountAbandonedWorker();
      rec.state = ProbeState::kTimeout;
      rec.ms = MsSince(start, SteadyClock::now());
      rec.reason = "did not finish within the deadline; abandoned";
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
