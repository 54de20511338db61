#include "watch/notifier.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/strings.h"
#include "report/report.h"

extern char** environ;

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
  if (c.timeout_s <= 0 || c.timeout_s > 600) {
    return InvalidArgument(std::string(NotifierKindName(c.kind)) + ": timeout_s must be 0-600");
  }
  if (c.kind == NotifierKind::kExec) {
    if (c.argv.empty() || c.argv[0].empty() || c.argv[0][0] != '/') {
      return InvalidArgument("exec notifier: argv must start with an absolute program path");
    }
    return Status::Ok();
  }
  if (c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0) {
    return InvalidArgument(std::string(NotifierKindName(c.kind)) + ": url must be http(s)://...");
  }
  return Status::Ok();
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

nlohmann::ordered_json AlertLabels(const TrackedFinding& f, const std::string& hostname) {
  nlohmann::ordered_json l;
  l["alertname"] = "GpudoctorFinding";
  l["id"] = f.last.id;
  l["severity"] = SeverityName(f.last.severity);
  l["layer"] = LayerName(f.last.layer);
  l["action"] = ActionName(f.last.action);
  l["hostname"] = hostname;
  std::string gpu = GpuText(f);
  if (!gpu.empty()) l["gpu"] = gpu;
  if (f.last.gpu && !f.last.gpu->uuid.empty()) l["uuid"] = f.last.gpu->uuid;
  if (f.last.gpu && !f.last.gpu->pci_bus_id.empty()) l["pci_bus_id"] = f.last.gpu->pci_bus_id;
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

std::string ExpandPlaceholders(std::string_view arg, const TrackedFinding& f,
                               TransitionKind transition, const std::string& hostname) {
  std::string out;
  size_t i = 0;
  while (i < arg.size()) {
    if (arg[i] == '{') {
      size_t close = arg.find('}', i);
      if (close != std::string_view::npos) {
        std::string_view name = arg.substr(i + 1, close - i - 1);
        std::string v;
        bool known = true;
        const GpuRef* g = f.last.gpu ? &*f.last.gpu : nullptr;
        if (name == "id")
          v = f.last.id;
        else if (name == "key")
          v = f.key;
        else if (name == "status")
          v = transition == TransitionKind::kResolved ? "resolved" : "firing";
        else if (name == "transition")
          v = TransitionText(transition);
        else if (name == "severity")
          v = SeverityName(f.last.severity);
        else if (name == "layer")
          v = LayerName(f.last.layer);
        else if (name == "action")
          v = ActionName(f.last.action);
        else if (name == "gpu")
          v = GpuText(f);
        else if (name == "uuid")
          v = g ? g->uuid : "";
        else if (name == "pci_bus_id")
          v = g ? g->pci_bus_id : "";
        else if (name == "serial")
          v = g ? g->serial : "";
        else if (name == "summary")
          v = f.last.summary;
        else if (name == "hostname")
          v = hostname;
        else
          known = false;
        if (known) {
          out += v;
          i = close + 1;
          continue;
        }
      }
    }
    out += arg[i++];
  }
  return out;
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
  return j.dump();
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
  return arr.dump();
}

namespace {

struct Job {
  std::vector<TrackedFinding> findings;  // one for webhook/exec; a batch for alertmanager
  TransitionKind transition = TransitionKind::kOpened;
  std::string what;  // "opened gpu.ecc.dbe gpu 0"
};

size_t CurlWrite(char* ptr, size_t size, size_t n, void* userdata) {
  auto* s = static_cast<std::string*>(userdata);
  if (s->size() < 4096) s->append(ptr, std::min(size * n, 4096 - s->size()));
  return size * n;
}

Status HttpPost(const std::string& url, const std::string& body, double timeout_s) {
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
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(timeout_s, 5.0) * 1000));
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, CurlWrite);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "gpudoctor");
  CURLcode rc = curl_easy_perform(c);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) return IoError(std::string("POST failed: ") + curl_easy_strerror(rc));
  if (code < 200 || code >= 300) {
    return IoError("HTTP " + std::to_string(code) + ": " + response.substr(0, 200));
  }
  return Status::Ok();
}

// posix_spawn without a shell; stdin/stdout from/to /dev/null, stderr inherited; own process
// group so a timeout kills its children too.
Status RunExec(const std::vector<std::string>& argv, double timeout_s) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
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
  int rc = posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return IoError("exec " + argv[0] + ": " + std::strerror(rc));
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return IoError("waitpid: " + std::string(std::strerror(errno)));
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
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
    std::deque<Job> queue;
    std::thread thread;
    int64_t last_resend_ms = 0;
  };

  NotifierHubOptions options;
  std::vector<std::unique_ptr<Worker>> workers;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::deque<HistoryEvent> events;

  void Record(bool ok, const NotifierConfig& c, const Job& job, const std::string& detail) {
    HistoryEvent e;
    e.unix_ms = NowMs();
    e.kind = ok ? "notify_sent" : "notify_failed";
    if (job.findings.size() == 1 && job.findings[0].last.gpu) {
      const GpuRef& g = *job.findings[0].last.gpu;
      e.gpu_index = g.index;
      e.serial = g.serial;
      e.pci_bus_id = g.pci_bus_id;
    }
    // Only scheme://host[:port] of a URL: its userinfo, path and query may hold credentials.
    std::string target = c.kind == NotifierKind::kExec ? c.argv[0] : UrlOrigin(c.url);
    e.detail = std::string(NotifierKindName(c.kind)) + " " + target + ": " + job.what +
               (detail.empty() ? "" : " (" + detail + ")");
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(std::move(e));
    while (events.size() > options.max_events) events.pop_front();
  }

  Status Deliver(const NotifierConfig& c, const Job& job) {
    int64_t now = NowMs();
    switch (c.kind) {
      case NotifierKind::kWebhook:
        return HttpPost(c.url,
                        WebhookPayload(job.findings[0], job.transition, options.hostname, now),
                        c.timeout_s);
      case NotifierKind::kAlertmanager: {
        std::string url = c.url;
        while (!url.empty() && url.back() == '/') url.pop_back();
        return HttpPost(
            url + "/api/v2/alerts",
            AlertmanagerPayload(job.findings, options.hostname, now, options.alertmanager_resend_s),
            c.timeout_s);
      }
      case NotifierKind::kExec: {
        std::vector<std::string> argv;
        for (const std::string& a : c.argv) {
          argv.push_back(ExpandPlaceholders(a, job.findings[0], job.transition, options.hostname));
        }
        return RunExec(argv, c.timeout_s);
      }
    }
    return Internal("unknown notifier");
  }

  void Run(Worker* w) {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || !w->queue.empty(); });
        if (stop) return;
        job = std::move(w->queue.front());
        w->queue.pop_front();
      }
      double backoff = options.backoff_initial_s;
      for (int attempt = 1;; ++attempt) {
        Status s = Deliver(w->config, job);
        if (s.ok()) {
          Record(true, w->config, job, attempt > 1 ? "attempt " + std::to_string(attempt) : "");
          break;
        }
        if (attempt >= options.max_attempts) {
          Record(false, w->config, job,
                 s.message() + "; gave up after " + std::to_string(attempt) + " attempts");
          break;
        }
        std::unique_lock<std::mutex> lock(mu);
        if (cv.wait_for(lock, std::chrono::milliseconds(static_cast<int64_t>(backoff * 1000)),
                        [&] { return stop; })) {
          return;
        }
        backoff = std::min(backoff * 2, options.backoff_max_s);
      }
    }
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
      events.push_back(std::move(e));
    }
    w->queue.push_back(std::move(job));
  }
};

NotifierHub::NotifierHub(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NotifierHub::~NotifierHub() { Stop(); }

Result<std::unique_ptr<NotifierHub>> NotifierHub::Create(const std::vector<NotifierConfig>& configs,
                                                         const NotifierHubOptions& options) {
  for (const NotifierConfig& c : configs) {
    Status s = ValidateNotifierConfig(c);
    if (!s.ok()) return s;
  }
  static std::once_flag curl_once;
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.max_queue == 0) impl->options.max_queue = 1;
  if (impl->options.max_attempts < 1) impl->options.max_attempts = 1;
  Impl* raw = impl.get();
  try {
    for (const NotifierConfig& c : configs) {
      auto w = std::make_unique<Impl::Worker>();
      w->config = c;
      Impl::Worker* wp = w.get();
      impl->workers.push_back(std::move(w));
      wp->thread = std::thread([raw, wp] { raw->Run(wp); });
    }
  } catch (const std::exception& e) {
    return Internal(std::string("notifier thread: ") + e.what());
  }
  return std::unique_ptr<NotifierHub>(new NotifierHub(std::move(impl)));
}

void NotifierHub::OnTransitions(const TickResult& tick) {
  if (!impl_) return;
  int64_t now = NowMs();
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
      impl_->Enqueue(w.get(), Job{{f}, t.kind, what});
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
        std::string what = std::to_string(am_batch.size()) + " alert(s)";
        impl_->Enqueue(w.get(), Job{std::move(am_batch), TransitionKind::kOpened, what});
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

void NotifierHub::Stop() {
  if (!impl_) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  for (auto& w : impl_->workers) {
    if (w->thread.joinable()) w->thread.join();
  }
}

}  // namespace gpudoctor
