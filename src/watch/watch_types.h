// Plain data that flows through `gpudoctor watch`: the lifecycle state of findings, history
// events, and the immutable result of one tick that the daemon publishes to its readers (the
// store's writer thread, the HTTP server, notifiers, `top --connect`). Plain value types;
// a published TickResult is shared read-only through std::shared_ptr<const TickResult>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/finding.h"
#include "metrics/metric_table.h"
#include "report/report.h"

namespace gpudoctor {

enum class FindingState {
  kPending,   // the rule fires but has not fired for its for_s yet: nobody is told
  kOpen,      // opened: notifiers fired, /metrics shows gpudoctor_finding_active
  kResolved,  // clear for resolve_after_s (or cleared by a reboot)
};
const char* FindingStateName(FindingState s);  // "pending", "open", "resolved"

// One finding followed over time. `key` identifies "the same finding" across ticks and reboots:
// id + the GPU's serial (else bus id, else index) + the finding's subject.
struct TrackedFinding {
  std::string key;
  Finding last;  // the latest occurrence (severity, evidence, next steps, GPU)
  FindingState state = FindingState::kPending;
  int64_t first_seen_ms = 0;      // when the rule first fired in this episode
  int64_t opened_ms = 0;          // 0 while pending
  int64_t last_seen_ms = 0;       // the last tick on which the rule fired
  int64_t resolved_ms = 0;        // 0 unless resolved
  std::string resolution;         // "cleared", "cleared_by_reboot"; empty unless resolved
  int reboots_during = 0;         // reboots between first_seen and resolution
  int episodes_after_reboot = 0;  // times it came back on the same card after a reboot cleared it
  bool escalated = false;         // came back after 2+ reboots: hardware inspection advised
  bool acked = false;
  int64_t acked_ms = 0;
  std::string ack_note;
  int64_t silenced_until_ms = 0;  // notifiers stay quiet until then (gpudoctor silence)
  // first_seen / last_seen on the steady clock (ms; in memory only, 0 unknown): for_s and
  // resolve_after_s are measured on it, so wall-clock steps neither hold nor hasten them.
  int64_t first_seen_mono_ms = 0;
  int64_t last_seen_mono_ms = 0;
};

enum class TransitionKind { kOpened, kResolved, kEscalated };
const char* TransitionKindName(TransitionKind k);  // "opened", "resolved", "escalated"

struct FindingTransition {
  TransitionKind kind = TransitionKind::kOpened;
  TrackedFinding finding;  // state after the transition
};

// Something that happened, kept in the history: "xid", "reboot", "driver_changed",
// "gpu_appeared", "gpu_disappeared", "notify_sent", "notify_failed", "ack", "silence",
// "config_reloaded".
struct HistoryEvent {
  int64_t unix_ms = 0;
  std::string kind;
  std::optional<int> gpu_index;
  std::string serial, pci_bus_id;
  std::string detail;  // human text: "Xid 79 (3 lines)", "boot id 1f2e.. -> 9a8b.."
};

// Everything one tick produced. Published once complete; never modified afterwards.
struct TickResult {
  uint64_t tick = 0;
  int64_t unix_ms = 0;                         // when the tick's probes started
  int64_t mono_ms = 0;                         // the same instant on the steady clock; 0 unknown
  std::string history_degraded;                // why the history is degraded; empty when fine
  std::string boot_id;                         // /proc/sys/kernel/random/boot_id
  Report report;                               // exactly what `check --json` renders (RenderJson)
  std::vector<MetricPoint> points;             // FlattenSnapshot(report.snapshot)
  std::vector<TrackedFinding> findings;        // pending, open, and resolved in the last hour
  std::vector<FindingTransition> transitions;  // this tick
  std::vector<HistoryEvent> events;            // this tick
  // A record of events alone (HistoryStore::AppendEvents, the store's own notes), not a tick:
  // it says nothing about the findings (the store keeps what it knows of them).
  bool events_only = false;
};

}  // namespace gpudoctor
