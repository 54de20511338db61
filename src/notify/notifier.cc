#include "notify/notifier.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/json_text.h"
#include "core/notify_target.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/thread_name.h"
#include "report/report.h"

namespace gpudoctor {

const char* NotifierKindName(NotifierKind k) {
  switch (k) {
    case NotifierKind::kWebhook:
      return "webhook";
    case NotifierKind::kAlertmanager:
      return "alertmanager";
    case NotifierKind::kExec:
      return "exec";
  }
  return "unknown";
}

Status ValidateNotifierConfig(const NotifierConfig& c) {
  std::string kind = NotifierKindName(c.kind);
  if (!(c.timeout_s >= kMinNotifyTimeoutS && c.timeout_s <= kMaxNotifyTimeoutS)) {
    return InvalidArgument(kind + ": timeout_s must be 0.001-600 seconds");
  }
  std::string problem = c.kind == NotifierKind::kExec           ? ExecArgvProblem(c.argv)
                        : c.kind == NotifierKind::kAlertmanager ? AlertmanagerUrlProblem(c.url)
                                                                : HttpUrlProblem(c.url);
  if (!problem.empty()) {
    return InvalidArgument(kind + (c.kind == NotifierKind::kExec ? ": argv " : ": url ") + problem);
  }
  return Status::Ok();
}

std::string NotifierFingerprint(const NotifierConfig& c) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](std::string_view s) {
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  };
  mix(NotifierKindName(c.kind));
  mix(c.url);
  for (const std::string& a : c.argv) mix(a);
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

const char* TransitionText(TransitionKind k) {
  switch (k) {
    case TransitionKind::kOpened:
      return "opened";
    case TransitionKind::kResolved:
      return "resolved";
    case TransitionKind::kEscalated:
      return "escalated";
  }
  return "unknown";
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Iso(int64_t ms) {
  return FormatUtc(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

std::string GpuText(const TrackedFinding& f) {
  if (f.last.gpu && f.last.gpu->index) return std::to_string(*f.last.gpu->index);
  return "";
}

// The finding's entry in the catalogue's documentation (`explain ID` prints the same text);
// docs/findings.md gives every entry an anchor named by its id.
constexpr const char* kRunbookBase = "docs/findings.md#";

nlohmann::ordered_json AlertLabels(const TrackedFinding& f, const std::string& hostname) {
  nlohmann::ordered_json l;
  l["alertname"] = "GpudoctorFinding";
  l["finding"] = f.last.id;
  l["id"] = f.last.id;
  l["severity"] = AlertSeverityName(f.last.severity);
  l["layer"] = LayerName(f.last.layer);
  l["action"] = ActionName(f.last.action);
  l["hostname"] = hostname;
  std::string gpu = GpuText(f);
  if (!gpu.empty()) l["gpu"] = gpu;
  if (f.last.gpu && !f.last.gpu->uuid.empty()) l["uuid"] = f.last.gpu->uuid;
  if (f.last.gpu && !f.last.gpu->pci_bus_id.empty()) l["pci_bus_id"] = f.last.gpu->pci_bus_id;
  if (f.last.gpu && !SerialOrEmpty(f.last.gpu->serial).empty()) l["serial"] = f.last.gpu->serial;
  if (!f.last.subject.empty()) l["subject"] = f.last.subject;
  return l;
}

nlohmann::ordered_json AlertAnnotations(const TrackedFinding& f) {
  nlohmann::ordered_json a;
  a["summary"] = f.last.summary;
  a["action"] = ActionPhrase(f.last.action);
  std::string steps;
  for (const std::string& s : f.last.next_steps) {
    if (!steps.empty()) steps += "\n";
    steps += "- " + s;
  }
  a["next_steps"] = steps;
  a["runbook_url"] = std::string(kRunbookBase) + f.last.id;
  if (f.escalated) a["escalated"] = "came back after 2+ reboots: hardware inspection advised";
  return a;
}

std::string Fingerprint(const std::string& key) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ULL;
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

namespace {

// Every placeholder's value for one transition, in the documented order.
std::vector<std::pair<std::string, std::string>> PlaceholderValues(const TrackedFinding& f,
                                                                   TransitionKind transition,
                                                                   const std::string& hostname) {
  const GpuRef* g = f.last.gpu ? &*f.last.gpu : nullptr;
  // Values from outside (a mount point, a process or device name in a summary or key) may hold
  // control characters or bytes that are not UTF-8: they become '?', so the hook still runs.
  auto safe = [](const std::string& v) { return Sanitize(v, 4096); };
  return {{"id", f.last.id},
          {"key", safe(f.key)},
          {"status", transition == TransitionKind::kResolved ? "resolved" : "firing"},
          {"transition", TransitionText(transition)},
          {"severity", SeverityName(f.last.severity)},
          {"layer", LayerName(f.last.layer)},
          {"action", ActionName(f.last.action)},
          {"gpu", safe(GpuText(f))},
          {"uuid", g ? safe(g->uuid) : ""},
          {"pci_bus_id", g ? safe(g->pci_bus_id) : ""},
          {"serial", g ? safe(g->serial) : ""},
          {"summary", safe(f.last.summary)},
          {"hostname", safe(hostname)}};
}

std::string Expand(std::string_view arg,
                   const std::vector<std::pair<std::string, std::string>>& values) {
  std::string out;
  size_t i = 0;
  while (i < arg.size()) {
    if (arg[i] == '{') {
      size_t close = arg.find('}', i);
      if (close != std::string_view::npos) {
        std::string_view name = arg.substr(i + 1, close - i - 1);
        const std::string* v = nullptr;
        for (const auto& [n, value] : values) {
          if (n == name) v = &value;
        }
        if (v != nullptr) {
          out += *v;
          i = close + 1;
          continue;
        }
      }
    }
    out += arg[i++];
  }
  return out;
}

bool HasControl(std::string_view s) {
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

}  // namespace

std::string ExpandPlaceholders(std::string_view arg, const TrackedFinding& f,
                               TransitionKind transition, const std::string& hostname) {
  return Expand(arg, PlaceholderValues(f, transition, hostname));
}

std::string WebhookPayload(const TrackedFinding& f, TransitionKind transition,
                           const std::string& hostname, int64_t now_ms) {
  bool resolved = transition == TransitionKind::kResolved;
  nlohmann::ordered_json alert;
  alert["status"] = resolved ? "resolved" : "firing";
  alert["labels"] = AlertLabels(f, hostname);
  alert["annotations"] = AlertAnnotations(f);
  alert["startsAt"] = Iso(f.opened_ms ? f.opened_ms : f.first_seen_ms);
  alert["endsAt"] = resolved ? Iso(f.resolved_ms ? f.resolved_ms : now_ms) : "0001-01-01T00:00:00Z";
  alert["generatorURL"] = "";
  alert["fingerprint"] = Fingerprint(f.key);
  nlohmann::ordered_json j;
  j["version"] = "4";
  j["groupKey"] = "{}:{key=\"" + f.key + "\"}";
  j["truncatedAlerts"] = 0;
  j["status"] = alert["status"];
  j["receiver"] = "gpudoctor";
  j["groupLabels"] = {{"alertname", "GpudoctorFinding"}, {"id", f.last.id}};
  j["commonLabels"] = alert["labels"];
  j["commonAnnotations"] = alert["annotations"];
  j["externalURL"] = "";
  j["alerts"] = nlohmann::ordered_json::array({alert});
  return JsonText(j);
}

std::string AlertmanagerPayload(const std::vector<TrackedFinding>& findings,
                                const std::string& hostname, int64_t now_ms, double resend_s) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const TrackedFinding& f : findings) {
    nlohmann::ordered_json a;
    a["labels"] = AlertLabels(f, hostname);
    a["annotations"] = AlertAnnotations(f);
    a["startsAt"] = Iso(f.opened_ms ? f.opened_ms : f.first_seen_ms);
    if (f.state == FindingState::kResolved) {
      a["endsAt"] = Iso(f.resolved_ms ? f.resolved_ms : now_ms);
    } else {
      // Like Prometheus: valid for 4 resend periods, renewed by the next resend.
      a["endsAt"] = Iso(now_ms + static_cast<int64_t>(4 * resend_s * 1000));
    }
    a["generatorURL"] = "";
    arr.push_back(std::move(a));
  }
  return JsonText(arr);
}

namespace {

using Job = PendingDelivery;

int64_t TimeoutMs(double timeout_s) {
  // Never 0: curl and the exec wait read 0 as "no timeout" (timeout_s >= 1 ms is validated).
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(timeout_s * 1000)));
}

size_t CurlWrite(char* ptr, size_t size, size_t n, void* userdata) {
  auto* s = static_cast<std::string*>(userdata);
  if (s->size() < 4096) s->append(ptr, std::min(size * n, 4096 - s->size()));
  return size * n;
}

int CurlProgress(void* abort, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(abort)->load() ? 1 : 0;
}

// `abort` set: the transfer ends at curl's next progress call (about once a second at worst,
// more often while data moves), also during name resolution.
Status HttpPost(const std::string& url, const std::string& body, double timeout_s,
                const std::atomic<bool>& abort) {
  CURL* c = curl_easy_init();
  if (c == nullptr) return Internal("curl_easy_init failed");
  std::string response;
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(TimeoutMs(timeout_s)));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(TimeoutMs(std::min(timeout_s, 5.0))));
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, CurlWrite);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, CurlProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(&abort));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "gpudoctor");
  CURLcode rc = curl_easy_perform(c);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc == CURLE_ABORTED_BY_CALLBACK) return IoError("POST aborted: shutting down");
  if (rc != CURLE_OK) return IoError(std::string("POST failed: ") + curl_easy_strerror(rc));
  if (code < 200 || code >= 300) {
    return IoError("HTTP " + std::to_string(code) + ": " + response.substr(0, 200));
  }
  return Status::Ok();
}

// The child's whole environment: a fixed PATH, the C locale and GPUDOCTOR_<NAME> per
// placeholder. Nothing of the daemon's (credentials in its environment, LD_PRELOAD, ...).
std::vector<std::string> ExecEnvironment(
    const std::vector<std::pair<std::string, std::string>>& values) {
  std::vector<std::string> env = {
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"};
  for (const auto& [name, value] : values) {
    std::string n = "GPUDOCTOR_";
    for (char c : name) n += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    env.push_back(n + "=" + value);
  }
  return env;
}

// posix_spawn without a shell; stdin/stdout from/to /dev/null, stderr inherited; own process
// group so a timeout (or `abort`) kills its children too.
Status RunExec(const std::vector<std::string>& argv, const std::vector<std::string>& env,
               double timeout_s, const std::atomic<bool>& abort) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return IoError("exec " + argv[0] + ": " + std::strerror(rc));
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(TimeoutMs(timeout_s));
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return IoError("waitpid: " + std::string(std::strerror(errno)));
    bool aborted = abort.load();
    if (aborted || std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ReapKilledChild(pid, &status);  // never blocks on a child stuck in the kernel
      if (aborted) return IoError("exec " + argv[0] + ": killed, shutting down");
      return TimeoutError("exec " + argv[0] + ": killed after " + std::to_string(timeout_s) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  if (WIFEXITED(status)) {
    return IoError("exec " + argv[0] + ": exit status " + std::to_string(WEXITSTATUS(status)));
  }
  return IoError("exec " + argv[0] + ": killed by signal " + std::to_string(WTERMSIG(status)));
}

}  // namespace

class NotifierHub::Impl {
 public:
  struct Worker {
    NotifierConfig config;
    std::string fingerprint;
    std::deque<Job> queue;
    std::optional<Job> current;  // taken from the queue, not yet delivered nor given up
    std::thread thread;
    bool done = false;  // the thread has returned
    int64_t last_resend_ms = 0;
  };

  NotifierHubOptions options;
  std::vector<std::unique_ptr<Worker>> workers;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  bool shut_down = false;
  std::atomic<bool> abort{false};  // deliveries in flight end now
  std::deque<HistoryEvent> events;

  void PushEvent(HistoryEvent e) {  // mu held
    events.push_back(std::move(e));
    while (events.size() > options.max_events) events.pop_front();
  }

  void Record(bool ok, const NotifierConfig& c, const Job& job, const std::string& detail) {
    HistoryEvent e;
    e.unix_ms = NowMs();
    e.kind = ok ? "notify_sent" : "notify_failed";
    e.gpu_index = job.gpu_index;
    e.serial = job.serial;
    e.pci_bus_id = job.pci_bus_id;
    // Only scheme://host[:port] of a URL: its userinfo, path and query may hold credentials.
    std::string target = c.kind == NotifierKind::kExec ? c.argv[0] : UrlOrigin(c.url);
    e.detail = std::string(NotifierKindName(c.kind)) + " " + target + ": " + job.what +
               (detail.empty() ? "" : " (" + detail + ")");
    std::lock_guard<std::mutex> lock(mu);
    PushEvent(std::move(e));
  }

  Status Deliver(const NotifierConfig& c, const Job& job) {
    switch (c.kind) {
      case NotifierKind::kWebhook:
        return HttpPost(c.url, job.body, c.timeout_s, abort);
      case NotifierKind::kAlertmanager: {
        std::string url = c.url;
        while (!url.empty() && url.back() == '/') url.pop_back();
        return HttpPost(url + "/api/v2/alerts", job.body, c.timeout_s, abort);
      }
      case NotifierKind::kExec: {
        for (const auto& [name, value] : job.values) {
          // PlaceholderValues made every value safe; values requeued from a spool file are
          // checked again here (a file on disk is outside input).
          if (HasControl(value)) {
            return InvalidArgument("refused: the value of {" + name +
                                   "} holds a control character");
          }
        }
        std::vector<std::string> argv;
        for (const std::string& a : c.argv) argv.push_back(Expand(a, job.values));
        return RunExec(argv, ExecEnvironment(job.values), c.timeout_s, abort);
      }
    }
    return Internal("unknown notifier");
  }

  void Run(Worker* w) {
    NameThisThread("gd-notify");
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || !w->queue.empty(); });
        if (stop) break;
        w->current = std::move(w->queue.front());
        w->queue.pop_front();
      }
      const Job& job = *w->current;
      double backoff = options.backoff_initial_s;
      bool keep = false;  // stopping with the job undelivered: it stays pending
      for (int attempt = 1;; ++attempt) {
        Status s = Deliver(w->config, job);
        if (s.ok()) {
          Record(true, w->config, job, attempt > 1 ? "attempt " + std::to_string(attempt) : "");
          break;
        }
        if (abort.load()) {  // cut short by Shutdown: still to deliver
          keep = true;
          break;
        }
        if (attempt >= options.max_attempts || s.code() == StatusCode::kInvalidArgument) {
          Record(false, w->config, job,
                 s.message() + "; gave up after " + std::to_string(attempt) + " attempts");
          break;
        }
        std::unique_lock<std::mutex> lock(mu);
        if (cv.wait_for(lock, std::chrono::milliseconds(static_cast<int64_t>(backoff * 1000)),
                        [&] { return stop; })) {
          keep = true;
          break;
        }
        backoff = std::min(backoff * 2, options.backoff_max_s);
      }
      std::lock_guard<std::mutex> lock(mu);
      if (!keep) w->current.reset();
      if (keep) break;
    }
    std::lock_guard<std::mutex> lock(mu);
    w->done = true;
    cv.notify_all();
  }

  void Enqueue(Worker* w, Job job) {  // mu held
    if (w->queue.size() >= options.max_queue) {
      Job dropped = std::move(w->queue.front());
      w->queue.pop_front();
      HistoryEvent e;
      e.unix_ms = NowMs();
      e.kind = "notify_failed";
      e.detail =
          std::string(NotifierKindName(w->config.kind)) + ": queue full, dropped " + dropped.what;
      PushEvent(std::move(e));
    }
    w->queue.push_back(std::move(job));
  }
};

NotifierHub::NotifierHub(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
NotifierHub::~NotifierHub() { Stop(); }

Result<std::unique_ptr<NotifierHub>> NotifierHub::Create(const std::vector<NotifierConfig>& configs,
                                                         const NotifierHubOptions& options) {
  if (configs.size() > kMaxNotifiers) {
    return InvalidArgument("more than " + std::to_string(kMaxNotifiers) + " notifiers");
  }
  for (const NotifierConfig& c : configs) {
    Status s = ValidateNotifierConfig(c);
    if (!s.ok()) return s;
  }
  static std::once_flag curl_once;
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  auto impl = std::make_shared<Impl>();
  impl->options = options;
  if (impl->options.max_queue == 0) impl->options.max_queue = 1;
  if (impl->options.max_attempts < 1) impl->options.max_attempts = 1;
  auto hub = std::unique_ptr<NotifierHub>(new NotifierHub(impl));
  try {
    for (const NotifierConfig& c : configs) {
      auto w = std::make_unique<Impl::Worker>();
      w->config = c;
      w->fingerprint = NotifierFingerprint(c);
      Impl::Worker* wp = w.get();
      impl->workers.push_back(std::move(w));
      // The thread holds the Impl: one left running past Shutdown's bound never dangles.
      wp->thread = std::thread([impl, wp] { impl->Run(wp); });
    }
  } catch (const std::exception& e) {
    return Internal(std::string("notifier thread: ") + e.what());
  }
  return hub;
}

void NotifierHub::OnTransitions(const TickResult& tick) {
  if (!impl_) return;
  int64_t now = NowMs();
  const std::string& host = impl_->options.hostname;
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->stop) return;
  for (auto& w : impl_->workers) {
    const NotifierConfig& c = w->config;
    std::vector<TrackedFinding> am_batch;
    for (const FindingTransition& t : tick.transitions) {
      const TrackedFinding& f = t.finding;
      if (f.last.severity < c.min_severity) continue;
      bool quiet = f.acked || f.silenced_until_ms > now;
      if (t.kind != TransitionKind::kResolved && quiet) continue;
      std::string what = std::string(TransitionText(t.kind)) + " " + f.last.id;
      if (f.last.gpu && f.last.gpu->index) what += " gpu " + std::to_string(*f.last.gpu->index);
      if (c.kind == NotifierKind::kAlertmanager) {
        am_batch.push_back(f);
        continue;
      }
      Job job;
      job.notifier = w->fingerprint;
      job.kind = c.kind;
      job.what = std::move(what);
      job.queued_unix_ms = now;
      if (f.last.gpu) {
        job.gpu_index = f.last.gpu->index;
        job.serial = f.last.gpu->serial;
        job.pci_bus_id = f.last.gpu->pci_bus_id;
      }
      if (c.kind == NotifierKind::kExec) {
        job.values = PlaceholderValues(f, t.kind, host);
      } else {
        job.body = WebhookPayload(f, t.kind, host, now);
      }
      impl_->Enqueue(w.get(), std::move(job));
    }
    if (c.kind == NotifierKind::kAlertmanager) {
      // Re-send every open alert periodically (Alertmanager times out alerts not renewed).
      bool resend = now - w->last_resend_ms >= impl_->options.alertmanager_resend_s * 1000;
      if (resend) {
        for (const TrackedFinding& f : tick.findings) {
          if (f.state != FindingState::kOpen || f.last.severity < c.min_severity) continue;
          if (f.acked || f.silenced_until_ms > now) continue;
          bool in_batch = false;
          for (const TrackedFinding& b : am_batch) in_batch |= b.key == f.key;
          if (!in_batch) am_batch.push_back(f);
        }
        w->last_resend_ms = now;
      }
      if (!am_batch.empty()) {
        Job job;
        job.notifier = w->fingerprint;
        job.kind = c.kind;
        job.what = std::to_string(am_batch.size()) + " alert(s)";
        job.queued_unix_ms = now;
        job.body = AlertmanagerPayload(am_batch, host, now, impl_->options.alertmanager_resend_s);
        impl_->Enqueue(w.get(), std::move(job));
      }
    }
  }
  impl_->cv.notify_all();
}

std::vector<HistoryEvent> NotifierHub::DrainDeliveryEvents() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<HistoryEvent> out(impl_->events.begin(), impl_->events.end());
  impl_->events.clear();
  return out;
}

size_t NotifierHub::Requeue(std::vector<PendingDelivery> pending) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  size_t dropped = 0;
  // Newest first to the front, so the oldest ends up first.
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
    Impl::Worker* target = nullptr;
    for (auto& w : impl_->workers) {
      if (w->fingerprint == it->notifier && w->config.kind == it->kind) target = w.get();
    }
    if (target == nullptr || impl_->stop) {
      ++dropped;
      continue;
    }
    if (target->queue.size() >= impl_->options.max_queue) {
      ++dropped;
      continue;
    }
    target->queue.push_front(std::move(*it));
  }
  impl_->cv.notify_all();
  return dropped;
}

std::vector<PendingDelivery> NotifierHub::Shutdown(double grace_s) {
  std::vector<PendingDelivery> out;
  if (!impl_) return out;
  Impl& im = *impl_;
  std::unique_lock<std::mutex> lock(im.mu);
  if (im.shut_down) return out;
  im.shut_down = true;
  im.stop = true;
  im.cv.notify_all();
  auto all_done = [&] {
    for (auto& w : im.workers) {
      if (!w->done) return false;
    }
    return true;
  };
  auto grace = std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, grace_s) * 1000));
  if (!im.cv.wait_for(lock, grace, all_done)) {
    im.abort = true;
    // curl notices within about a second; an exec child is killed within 10 ms.
    im.cv.wait_for(lock, std::chrono::milliseconds(1500), all_done);
  }
  for (auto& w : im.workers) {
    if (w->done) {
      if (w->current) out.push_back(std::move(*w->current));
      w->current.reset();
    } else if (w->current) {
      out.push_back(*w->current);  // still stuck in its delivery: a copy, the thread keeps its
    }
    for (Job& j : w->queue) out.push_back(std::move(j));
    w->queue.clear();
  }
  lock.unlock();
  for (auto& w : im.workers) {
    if (!w->thread.joinable()) continue;
    bool done;
    {
      std::lock_guard<std::mutex> l(im.mu);
      done = w->done;
    }
    if (done) {
      w->thread.join();
    } else {
      w->thread.detach();  // never join a thread that may be stuck; it holds the Impl
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Job& a, const Job& b) { return a.queued_unix_ms < b.queued_unix_ms; });
  return out;
}

void NotifierHub::Stop() { (void)Shutdown(0); }

}  // namespace gpudoctor
