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

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/kept_file.h"
#include "facts/snapshot.h"
#include "probes/probe.h"

namespace gpudoctor {

Snapshot RunProbes(const std::vector<const ProbeSpec*>& probes,
                   std::shared_ptr<const Settings> settings, TimePoint deadline);

// The host's identity every Snapshot starts from.
struct HostIdentity {
  std::string hostname;  // uname's nodename
  std::string boot_id;   // sys/kernel/random/boot_id, sanitized; empty when unreadable
};
// Read now: the hostname, and the boot id through the settings' RootFs (a tiny file with no
// lock), or through `boot_id` when given (a KeptFile over that file that the caller keeps:
// one pread instead of a path lookup, open and close; a fixture file is still opened afresh).
HostIdentity ReadHostIdentity(const Settings& settings, KeptFile* boot_id = nullptr);
// ReadHostIdentity calls in this process: for tests and cost accounting. Thread-safe.
uint64_t HostIdentityReads();
// A Snapshot with `id` and the time now, before any probe runs. Both runners (RunProbes for
// check, ProbeScheduler for watch) start from one.
Snapshot NewSnapshot(const HostIdentity& id);
// The same with the identity read now.
Snapshot NewSnapshot(const Settings& settings);

}  // namespace gpudoctor
