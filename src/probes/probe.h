// Probe interface. A probe only reads and parses: no thresholds, no advice (those are rules).
// It runs on a worker thread under the check's deadline and returns a ProbeOutput whose `apply`
// patch is run later on the calling thread to move its facts into the Snapshot. A probe that
// overruns is abandoned: its patch is never applied. Probes must therefore keep all their state
// local and reach settings only through the shared_ptr in ProbeContext.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/deadline.h"
#include "core/settings.h"
#include "facts/snapshot.h"

namespace gpudoctor {

struct ProbeContext {
  std::shared_ptr<const Settings> settings;
  TimePoint deadline;  // the whole check's deadline; probes with inner calls may use it
  const RootFs& fs() const { return settings->fs; }
  std::chrono::milliseconds sample_window() const {
    return std::chrono::milliseconds(settings->sample_ms);
  }
};

struct ProbeOutput {
  ProbeState state = ProbeState::kOk;
  std::string reason;                    // for skipped / failed
  std::function<void(Snapshot&)> apply;  // may be empty
};

inline ProbeOutput ProbeOk(std::function<void(Snapshot&)> apply) {
  return {ProbeState::kOk, "", std::move(apply)};
}
inline ProbeOutput ProbeSkipped(std::string reason, std::function<void(Snapshot&)> apply = {}) {
  return {ProbeState::kSkipped, std::move(reason), std::move(apply)};
}
inline ProbeOutput ProbeFailed(std::string reason, std::function<void(Snapshot&)> apply = {}) {
  return {ProbeState::kFailed, std::move(reason), std::move(apply)};
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
};

}  // namespace gpudoctor
