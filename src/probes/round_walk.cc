#include "probes/round_walk.h"

#include <utility>

namespace gpudoctor {

void TickShare::Hold(std::shared_ptr<const void> thing) {
  std::lock_guard<std::mutex> lock(mu_);
  held_.push_back(std::move(thing));
}

std::shared_ptr<const ProcessScan> RoundWalk(const ProbeContext& ctx,
                                             std::chrono::milliseconds max_age,
                                             std::optional<TimePoint> deadline,
                                             std::optional<TimePoint> newer_than) {
  std::shared_ptr<const ProcessScan> walk = RecentFullScan(ctx.fs(), max_age, deadline, newer_than);
  if (ctx.tick_share != nullptr) ctx.tick_share->Hold(walk);
  return walk;
}

}  // namespace gpudoctor
