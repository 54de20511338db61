// InfiniBand probe. Source: /sys/class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,
// link_layer,counters/*}, read twice across the sampling window. Units: Gb/s, counts.
// Failure modes: no class/infiniband (no RDMA hardware) → skipped (under `watch` looked at again
// every kAbsentSourceRecheck, probe.h); unreadable counters absent.
// Reference: signals.md §11; kernel Documentation/ABI/stable/sysfs-class-infiniband.
// Under `watch` the carry keeps an IbReader: the port files stay open from tick to tick and the
// ports are listed again only when the device list changes (infiniband_sysfs.h).
#include <thread>

#include "net/infiniband_sysfs.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

using Samples = std::vector<IbPortSample>;

// The last sample and, under watch, the reader that keeps the port files open.
using IbCarry = SampleReaderCarry<Samples, IbReader>;

}  // namespace

ProbeOutput RunInfinibandProbe(const ProbeContext& ctx) {
  // A host without InfiniBand/RDMA devices is looked at again every kAbsentSourceRecheck.
  if (auto again = AbsentSourceAgain(ctx)) return std::move(*again);
  std::shared_ptr<IbReader> reader;
  if (auto* prev = dynamic_cast<const IbCarry*>(ctx.previous.get())) reader = prev->reader;
  if (reader == nullptr) reader = std::make_shared<IbReader>(/*keep_files=*/ctx.continuous);
  auto probe_ports = [&]() -> Result<Samples> {
    auto ports = reader->Read(ctx.fs());
    if (ports.ok() && ports->empty()) return NotFound("no InfiniBand/RDMA ports");
    return ports;
  };
  auto first = TakeFirstSample<Samples>(ctx, probe_ports);
  if (!first.ok()) return ProbeSkipped("no InfiniBand/RDMA devices: " + first.status().message());
  TimePoint t1 = SteadyClock::now();
  auto second = probe_ports();
  if (!second.ok()) {
    std::string reason = "no InfiniBand/RDMA devices: " + second.status().message();
    if (second.status().code() == StatusCode::kNotFound) {
      return AbsentSourceSkip(ctx, std::move(reason));
    }
    return ProbeSkipped(std::move(reason));
  }
  ProbeOutput out;
  if (!first->sample) {
    out = ProbeSkipped("first sample of a watch: rates from the next tick");
  } else {
    double window_s = std::chrono::duration<double>(t1 - first->at).count();
    auto ports = IbPortFactsBetween(*first->sample, *second, window_s);
    out = ProbeOk([ports = std::move(ports)](Snapshot& s) { s.network.ib_ports = ports; });
  }
  if (ctx.continuous) {
    out.next = std::make_shared<IbCarry>(std::move(*second), t1, std::move(reader));
  } else {
    out.next = std::make_shared<SampleCarry<Samples>>(std::move(*second), t1);
  }
  return out;
}

}  // namespace gpudoctor
