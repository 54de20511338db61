// NIC probe. Source: /sys/class/net/*/{operstate,carrier,carrier_changes,speed,flags} and
// statistics/*, read twice across the sampling window. Units: bytes per second, Mb/s (speed),
// counts. Failure modes: no class/net → skipped; an unreadable attribute is absent (down links
// read EINVAL for speed/carrier), never 0. Reference: signals.md §11 "NIC state (sysfs)".
#include <thread>

#include "net/nic_sysfs.h"
#include "probes/probe.h"

namespace gpudoctor {

ProbeOutput RunNicProbe(const ProbeContext& ctx) {
  auto first = ReadNicSamples(ctx.fs());
  if (!first.ok()) return ProbeSkipped("no network interfaces: " + first.status().message());
  TimePoint t0 = SteadyClock::now();
  std::this_thread::sleep_for(ctx.sample_window());
  auto second = ReadNicSamples(ctx.fs());
  if (!second.ok()) return ProbeFailed(second.status().message());
  double window_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  auto nics = NicFactsBetween(*first, *second, window_s);
  return ProbeOk([nics = std::move(nics)](Snapshot& s) { s.network.nics = nics; });
}

}  // namespace gpudoctor
