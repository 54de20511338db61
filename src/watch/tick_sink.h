// TickSink: what consumes the ticks the watch engine publishes (the history store; the HTTP
// server and the notifiers read the latest tick through WatchDaemon::Latest and their own
// transitions hand-off). The engine knows sinks only through this interface, so watch/ never
// includes store/, serve/ or notify/.
// Thread-safety: both calls come from the tick thread; they must not block on I/O.
#pragma once

#include <memory>
#include <vector>

#include "findings/finding.h"
#include "watch/watch_types.h"

namespace gpudoctor {

class TickSink {
 public:
  virtual ~TickSink() = default;
  // Before the lifecycle step of a tick: the sink's own faults as gpudoctor.* findings, and what
  // it has to say in the tick (e.g. TickResult::history_degraded for /healthz).
  virtual void Judge(std::vector<Finding>& findings, TickResult& tick) = 0;
  // The published, immutable tick.
  virtual void OnTick(const std::shared_ptr<const TickResult>& tick) = 0;
};

}  // namespace gpudoctor
