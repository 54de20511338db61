// Runs probes concurrently under one deadline, and assembles the Snapshot: the sampling probes
// each on a worker of its own (sockets and suspicious, which sample the same window through
// SharedSamples, on one worker in turn: the second computes from the samples the first took, is
// never started at or after the deadline, and is then a `timeout` that "did not start"), the
// quick ones (no window: pressure, pci_gpu, kmsg, boot, disk, ..., processes last) in turn on one
// JobLane (core/job_lane.h: one stalled probe moves those behind it to fresh workers; so
// `processes`, whose window runs from its own start while tasks are in D, starts up to the lane's
// stall, 100 ms, late when a probe before it stalls). The rate probes cpu, memory, nic and
// infiniband run in two steps as under `watch` (probe.h), all on one worker: their first steps in
// turn on a lane, then, once the window from each one's first sample has passed, their second steps
// in turn on a lane; one whose first step left no carry runs whole in its second, one whose first
// step is still running is waited for. A probe's `ms` is its own time (both steps), not the
// window's. Returns by the deadline whatever happens inside the probes: an overrunning probe is
// recorded as `timeout` and abandoned. Not re-entrant per Snapshot; safe to call concurrently.
#pragma once

#include <memory>
#include <vector>

#include "core/kept_file.h"
#include "facts/snapshot.h"
#include "probes/probe.h"

namespace gpudoctor {

Snapshot RunProbes(const std::vector<const ProbeSpec*>& probes,
                   std::shared_ptr<const Settings> settings, TimePoint deadline);

// A Snapshot with the host's identity, taken before any probe runs: hostname, boot id (through
// the settings' RootFs: sys/kernel/random/boot_id, a tiny file with no lock) and the time. Both
// runners (RunProbes for check, ProbeScheduler for watch) start from it.
Snapshot NewSnapshot(const Settings& settings);
// The same with the boot id read through `boot_id` (a KeptFile over the settings' procfs
// sys/kernel/random/boot_id that the caller keeps from tick to tick: under `watch` one pread a
// tick instead of a path lookup, open and close; a fixture file is still opened afresh).
Snapshot NewSnapshot(const Settings& settings, KeptFile& boot_id);

}  // namespace gpudoctor
