#include "probes/round_walk.h"

namespace gpudoctor {

std::shared_ptr<const ProcessScan> RoundWalk(const ProbeContext& ctx,
                                             std::chrono::milliseconds max_age,
                                             std::optional<TimePoint> deadline,
                                             std::optional<TimePoint> newer_than) {
  std::shared_ptr<const ProcessScan> walk = RecentFullScan(ctx.fs(), max_age, deadline, newer_than);
  if (ctx.tick_share != nullptr) ctx.tick_share->Hold(walk);
  return walk;
}

std::shared_ptr<const TcpTable> RoundTcpDump(const ProbeContext& ctx,
                                             std::chrono::milliseconds max_age,
                                             std::optional<TimePoint> newer_than) {
  std::shared_ptr<const TcpTable> table =
      RecentTcpDump(max_age, ctx.deadline - std::chrono::milliseconds(200), newer_than);
  if (ctx.tick_share != nullptr) ctx.tick_share->Hold(table);
  return table;
}

}  // namespace gpudoctor
