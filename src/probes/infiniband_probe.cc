// InfiniBand probe. Source: /sys/class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,
// link_layer,counters/*}, read twice across the sampling window. Units: Gb/s, counts.
// Failure modes: no class/infiniband (no RDMA hardware) → skipped; unreadable counters absent.
// Reference: signals.md §11; kernel Documentation/ABI/stable/sysfs-class-infiniband.
#include <thread>

#include "net/infiniband_sysfs.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {

ProbeOutput RunInfinibandProbe(const ProbeContext& ctx) {
  using Samples = std::vector<IbPortSample>;
  auto probe_ports = [&]() -> Result<Samples> {
    auto ports = ReadIbPorts(ctx.fs());
    if (ports.ok() && ports->empty()) return NotFound("no InfiniBand/RDMA ports");
    return ports;
  };
  auto first = TakeFirstSample<Samples>(ctx, probe_ports);
  if (!first.ok()) return ProbeSkipped("no InfiniBand/RDMA devices: " + first.status().message());
  TimePoint t1 = SteadyClock::now();
  auto second = probe_ports();
  if (!second.ok()) return ProbeSkipped("no InfiniBand/RDMA devices: " + second.status().message());
  ProbeOutput out;
  if (!first->sample) {
    out = ProbeSkipped("first sample of a watch: rates from the next tick");
  } else {
    double window_s = std::chrono::duration<double>(t1 - first->at).count();
    auto ports = IbPortFactsBetween(*first->sample, *second, window_s);
    out = ProbeOk([ports = std::move(ports)](Snapshot& s) { s.network.ib_ports = ports; });
  }
  out.next = std::make_shared<SampleCarry<Samples>>(std::move(*second), t1);
  return out;
}

}  // namespace gpudoctor
