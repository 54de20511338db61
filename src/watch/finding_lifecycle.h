// Finding lifecycle as a pure state machine: given the tracked findings, the
// findings the rules produced this tick, the time and the boot id, it returns the new tracked
// set and the transitions (opened / resolved / escalated). No clock, no I/O: tests drive it with
// sequences of snapshots. Thread-safe (pure).
//
// - Durations (for_s, resolve_after_s) run on the monotonic clock (mono_ms) when given; the wall
//   clock only stamps the records.
// - A finding is pending until it has fired for for_s (catalogue default, overridable per id in
//   [finding."ID"] for_s), then opens; severity may change while open.
// - It resolves after it has been clear for resolve_after_s (hysteresis), except a latched one
//   (WatchDefaults::latched: an Xid and other kernel-log events) whose action needs a reset or
//   reboot: it stays open until the node reboots or it is acknowledged, or (WatchDefaults::
//   cleared_by_driver_reload) the NVIDIA module was loaded again after it was last seen, which
//   resolves it with "cleared_by_driver_reload".
// - A new boot id closes open findings whose rule is reboot-fixable with "cleared_by_reboot"
//   when they do not fire on the first tick after the reboot; the same key coming back after
//   2 reboots escalates (next steps for reseat, swap test, RMA are appended).
// - Acks and silences are carried over unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rules/thresholds.h"
#include "watch/watch_types.h"

namespace gpudoctor {

// id + GPU (serial, else bus id, else index) + subject.
std::string FindingKey(const Finding& f);

struct LifecycleInput {
  std::vector<TrackedFinding> tracked;  // from the previous step (or loaded from the store)
  std::vector<Finding> fired;           // the rules' findings this tick
  int64_t now_ms = 0;   // wall clock: what is recorded (first_seen_ms, opened_ms, ...)
  int64_t mono_ms = 0;  // steady clock: what for_s / resolve_after_s are measured on; 0 unknown
  std::string boot_id;
  std::string previous_boot_id;  // empty on the daemon's first tick
  // Wall-clock ms of the NVIDIA module's last load this boot (KernelLogFacts::last_driver_load);
  // 0 unknown. Latched findings it resets, last seen before it, resolve.
  int64_t driver_loaded_ms = 0;
};

struct LifecycleOutput {
  std::vector<TrackedFinding> tracked;  // pending + open + recently resolved (kept 1 h)
  std::vector<FindingTransition> transitions;
};

LifecycleOutput StepLifecycle(const LifecycleInput& in, const Thresholds& thresholds);

}  // namespace gpudoctor
