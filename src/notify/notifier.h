// NotifierHub: tells the outside world when a finding opens (after its for_s), escalates or
// resolves. Receivers: a webhook (Alertmanager's webhook JSON, version "4", so receivers written
// for Alertmanager work), Alertmanager itself (POST /api/v2/alerts, endsAt on resolve; open
// alerts are re-sent every resend_s so Alertmanager does not time them out), and an exec
// notifier (an argument vector with placeholders, run without a shell, with a timeout).
//
// Each notifier has its own worker thread and a bounded queue: OnTransitions only filters,
// renders and queues, so a slow or failing receiver never blocks the tick loop nor the other
// notifiers. Failed deliveries are retried with exponential backoff (max_attempts); when a queue
// is full the oldest job is dropped. Silenced (silenced_until_ms in the future) and acknowledged
// findings are not notified on open/escalation; resolutions are always sent. Every delivery and
// every final failure becomes a HistoryEvent (kind "notify_sent" / "notify_failed") that the
// daemon drains and stores. At most kMaxNotifiers notifiers (core/notify_target.h).
//
// Shutdown(grace_s) gives deliveries in flight a bounded grace, then aborts them (curl transfers
// and exec children), and returns what was not delivered as PendingDelivery (rendered payloads
// and placeholder values, never a URL or an argv from the config) for a spool (notify_spool.h);
// Requeue hands them to the matching notifier at the next start.
//
// Placeholders in exec argv: {id} {key} {status} (firing|resolved) {transition}
// (opened|escalated|resolved) {severity} {layer} {gpu} {uuid} {pci_bus_id} {serial} {summary}
// {hostname}. They are substituted inside single arguments; nothing is ever parsed by a shell.
// Values that come from the device or host may start an argument only after "--" (checked at
// load); every value is also in the child's environment as GPUDOCTOR_<NAME> (GPUDOCTOR_SERIAL).
// A value holding a control character refuses the delivery (notify_failed). The child gets a
// minimal environment (PATH, LANG=C and those variables), never the daemon's.
//
// Thread-safety: OnTransitions, DrainDeliveryEvents, Requeue, Shutdown and Stop may be called
// from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
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

// How long SIGTERM waits for deliveries in flight before aborting them (and spooling them). It
// must fit in the systemd unit's TimeoutStopSec (20 s) with the history flush before it: a test
// checks deploy/systemd/gpudoctor.service against it.
inline constexpr double kNotifyShutdownGraceS = 5;

// One delivery not (yet) made. `notifier` is NotifierFingerprint of the notifier it belongs to.
struct PendingDelivery {
  std::string notifier;
  NotifierKind kind = NotifierKind::kWebhook;
  std::string body;                                         // webhook / alertmanager: the JSON
  std::vector<std::pair<std::string, std::string>> values;  // exec: placeholder name -> value
  std::string what;                                         // "opened gpu.ecc.dbe gpu 0"
  int64_t queued_unix_ms = 0;
  std::optional<int> gpu_index;
  std::string serial, pci_bus_id;
};

// A stable hash of a notifier's kind and target (URL or argv): which spooled deliveries are its.
std::string NotifierFingerprint(const NotifierConfig& c);

struct NotifierHubOptions {
  std::string hostname;  // label `hostname` on every alert
  size_t max_queue = 256;
  int max_attempts = 5;
  double backoff_initial_s = 1;
  double backoff_max_s = 60;
  double alertmanager_resend_s = 60;
  size_t max_events = 1000;  // undrained delivery events beyond this are dropped (oldest)
};

// Validates one config with the load-time checks of core/notify_target.h (URL, Alertmanager base
// URL, exec program and argv) and timeout_s in [0.001, 600].
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
  // Queues deliveries of an earlier run for the notifier whose fingerprint they carry (before
  // the new ones); returns how many had no such notifier any more (dropped).
  size_t Requeue(std::vector<PendingDelivery> pending);
  // Stops the workers. A delivery in flight may finish within grace_s, then it is aborted; what
  // was not delivered (in flight, waiting to retry, queued) is returned, oldest first. Returns
  // within about grace_s + 1 s whatever the receivers do. The second call returns nothing.
  std::vector<PendingDelivery> Shutdown(double grace_s);
  // Shutdown(0), dropping what is pending. Idempotent.
  void Stop();

  class Impl;

 private:
  explicit NotifierHub(std::shared_ptr<Impl> impl);
  // Shared with the worker threads: one still stuck after Shutdown's bound is detached.
  std::shared_ptr<Impl> impl_;
};

}  // namespace gpudoctor
