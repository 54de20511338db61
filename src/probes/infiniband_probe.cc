// InfiniBand probe. Source: /sys/class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,
// link_layer,counters/*}, read twice across the sampling window. Units: Gb/s, counts.
// Failure modes: no class/infiniband (no RDMA hardware) → skipped; unreadable counters absent.
// Reference: signals.md §11; kernel Documentation/ABI/stable/sysfs-class-infiniband.
#include <thread>

#include "net/infiniband_sysfs.h"
#include "probes/probe.h"

namespace gpudoctor {

ProbeOutput RunInfinibandProbe(const ProbeContext& ctx) {
  auto first = ReadIbPorts(ctx.fs());
  if (!first.ok()) return ProbeSkipped("no InfiniBand/RDMA devices: " + first.status().message());
  if (first->empty()) return ProbeSkipped("no InfiniBand/RDMA ports");
  TimePoint t0 = SteadyClock::now();
  std::this_thread::sleep_for(ctx.sample_window());
  auto second = ReadIbPorts(ctx.fs());
  if (!second.ok()) return ProbeFailed(second.status().message());
  double window_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  auto ports = IbPortFactsBetween(*first, *second, window_s);
  return ProbeOk([ports = std::move(ports)](Snapshot& s) { s.network.ib_ports = ports; });
}

}  // namespace gpudoctor
