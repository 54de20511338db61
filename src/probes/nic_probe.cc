// NIC probe. Source: /sys/class/net/*/{operstate,carrier,carrier_changes,speed,flags} and
// statistics/*, read twice across the sampling window. Units: bytes per second, Mb/s (speed),
// counts. Failure modes: no class/net → skipped; an unreadable attribute is absent (down links
// read EINVAL for speed/carrier), never 0. Reference: signals.md §11 "NIC state (sysfs)".
#include <thread>

#include "net/nic_sysfs.h"
#include "probes/probe.h"

namespace gpudoctor {

ProbeOutput RunNicProbe(const ProbeContext& ctx) {
  using Samples = std::vector<NicSample>;
  auto first = TakeFirstSample<Samples>(ctx, [&] { return ReadNicSamples(ctx.fs()); });
  if (!first.ok()) return ProbeSkipped("no network interfaces: " + first.status().message());
  TimePoint t1 = SteadyClock::now();
  auto second = ReadNicSamples(ctx.fs());
  if (!second.ok()) return ProbeFailed(second.status().message());
  ProbeOutput out;
  if (!first->sample) {
    out = ProbeSkipped("first sample of a watch: rates from the next tick");
  } else {
    double window_s = std::chrono::duration<double>(t1 - first->at).count();
    auto nics = NicFactsBetween(*first->sample, *second, window_s);
    out = ProbeOk([nics = std::move(nics)](Snapshot& s) { s.network.nics = nics; });
  }
  out.next = std::make_shared<SampleCarry<Samples>>(std::move(*second), t1);
  return out;
}

}  // namespace gpudoctor
