// NIC probe. Source: /sys/class/net/*/{operstate,carrier,carrier_changes,speed,flags} and
// statistics/*, read twice across the sampling window. Units: bytes per second, Mb/s (speed),
// counts. Failure modes: no class/net → skipped; an unreadable attribute is absent (down links
// read EINVAL for speed/carrier), never 0. Reference: signals.md §11 "NIC state (sysfs)".
// Under `watch` the carry keeps a NicReader: the attribute files stay open from tick to tick
// and the link speed is re-read only when the link's state moved or every 30 s (nic_sysfs.h).
#include <thread>

#include "net/nic_sysfs.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

using Samples = std::vector<NicSample>;

// The last sample and, under watch, the reader that keeps the files open.
using NicCarry = SampleReaderCarry<Samples, NicReader>;

}  // namespace

ProbeOutput RunNicProbe(const ProbeContext& ctx) {
  std::shared_ptr<NicReader> reader;
  if (auto* prev = dynamic_cast<const NicCarry*>(ctx.previous.get())) reader = prev->reader;
  if (reader == nullptr) reader = std::make_shared<NicReader>(/*keep_files=*/ctx.continuous);
  auto read = [&] { return reader->Read(ctx.fs(), SteadyClock::now()); };
  auto first = TakeFirstSample<Samples>(ctx, read);
  if (!first.ok()) return ProbeSkipped("no network interfaces: " + first.status().message());
  TimePoint t1 = SteadyClock::now();
  auto second = read();
  if (!second.ok()) return ProbeFailed(second.status().message());
  ProbeOutput out;
  if (!first->sample) {
    // First run of a watch: link state, speed and totals now (a link that is down is a finding
    // from the first tick); rates and deltas from the next run.
    auto nics = NicFactsBetween({}, *second, 0);
    out = ProbeOk([nics = std::move(nics)](Snapshot& s) { s.network.nics = nics; });
  } else {
    double window_s = std::chrono::duration<double>(t1 - first->at).count();
    auto nics = NicFactsBetween(*first->sample, *second, window_s);
    out = ProbeOk([nics = std::move(nics)](Snapshot& s) { s.network.nics = nics; });
  }
  if (ctx.continuous) {
    out.next = std::make_shared<NicCarry>(std::move(*second), t1, std::move(reader));
  } else {
    out.next = std::make_shared<SampleCarry<Samples>>(std::move(*second), t1);
  }
  return out;
}

}  // namespace gpudoctor
