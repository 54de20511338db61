// NotifierHub: tells the outside world when a finding opens (after its for_s), escalates or
// resolves. Receivers: a webhook (Alertmanager's webhook JSON, version "4", so receivers written
// for Alertmanager work), Alertmanager itself (POST /api/v2/alerts, endsAt on resolve; open
// alerts are re-sent every resend_s so Alertmanager does not time them out), and an exec
// notifier (an argument vector with placeholders, run without a shell, with a timeout).
//
// Each notifier has its own worker thread and a bounded queue: OnTransitions only filters and
// queues, so a slow or failing receiver never blocks the tick loop nor the other notifiers.
// Failed deliveries are retried with exponential backoff (max_attempts); when a queue is full the
// oldest job is dropped. Silenced (silenced_until_ms in the future) and acknowledged findings are
// not notified on open/escalation; resolutions are always sent. Every delivery and every final
// failure becomes a HistoryEvent (kind "notify_sent" / "notify_failed") that the daemon drains
// and stores.
//
// Placeholders in exec argv: {id} {key} {status} (firing|resolved) {transition}
// (opened|escalated|resolved) {severity} {layer} {gpu} {uuid} {pci_bus_id} {serial} {summary}
// {hostname}. They are substituted inside single arguments; nothing is ever parsed by a shell.
//
// Thread-safety: OnTransitions, DrainDeliveryEvents and Stop may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "findings/finding.h"
#include "watch/watch_types.h"

namespace gpudoctor {

enum class NotifierKind { kWebhook, kAlertmanager, kExec };
const char* NotifierKindName(NotifierKind k);  // "webhook", "alertmanager", "exec"

struct NotifierConfig {
  NotifierKind kind = NotifierKind::kWebhook;
  std::string url;                // webhook: full URL; alertmanager: base, e.g. http://host:9093
  std::vector<std::string> argv;  // exec
  Severity min_severity = Severity::kWarn;
  double timeout_s = 10;  // per HTTP request or exec run
};

struct NotifierHubOptions {
  std::string hostname;  // label `hostname` on every alert
  size_t max_queue = 256;
  int max_attempts = 5;
  double backoff_initial_s = 1;
  double backoff_max_s = 60;
  double alertmanager_resend_s = 60;
  size_t max_events = 1000;  // undrained delivery events beyond this are dropped (oldest)
};

// Validates one config (URL scheme http/https, non-empty argv with an absolute program path).
Status ValidateNotifierConfig(const NotifierConfig& c);

// Replaces the placeholders in one argument.
std::string ExpandPlaceholders(std::string_view arg, const TrackedFinding& f,
                               TransitionKind transition, const std::string& hostname);

// The Alertmanager webhook payload (version "4") for one transition, and the /api/v2/alerts body.
std::string WebhookPayload(const TrackedFinding& f, TransitionKind transition,
                           const std::string& hostname, int64_t now_ms);
std::string AlertmanagerPayload(const std::vector<TrackedFinding>& findings,
                                const std::string& hostname, int64_t now_ms, double resend_s);

class NotifierHub {
 public:
  static Result<std::unique_ptr<NotifierHub>> Create(const std::vector<NotifierConfig>& configs,
                                                     const NotifierHubOptions& options);
  ~NotifierHub();  // Stop()
  NotifierHub(const NotifierHub&) = delete;
  NotifierHub& operator=(const NotifierHub&) = delete;

  // Queues the tick's transitions for every notifier whose filter passes. Never blocks on I/O.
  void OnTransitions(const TickResult& tick);
  // Delivery outcomes since the last call (oldest first).
  std::vector<HistoryEvent> DrainDeliveryEvents();
  // Stops the workers: a delivery in flight ends within its timeout; queued jobs are dropped.
  // Idempotent.
  void Stop();

  class Impl;

 private:
  explicit NotifierHub(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpudoctor
