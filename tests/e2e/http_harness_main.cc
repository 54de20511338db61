// http_harness: a test-only stand-in for `gpudoctor watch` until the daemon lands. Runs the
// `check` probes once (RunProbes + EvaluateRules), publishes the result as a TickResult (points
// = FlattenSnapshot, findings as open TrackedFindings) every --interval seconds, serves it with
// WatchHttpServer and notifies with NotifierHub. After --resolve-after seconds every finding
// resolves (transition + notifiers), to test resolved paths.
//
//   http_harness [--listen A] [--token-file F] [--dcgm-compat] [--interval S]
//                [--webhook URL] [--alertmanager URL] [--exec PROG ARG...--] [--resolve-after S]
//                [--run-for S] -- <check flags: --probes, --nvml-lib, --path.* ...>
// Prints "listening on PORT" to stdout once serving. Exits on SIGTERM/SIGINT or after --run-for.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_options.h"
#include "cli/commands.h"
#include "probes/registry.h"
#include "probes/runner.h"
#include "report/report.h"
#include "rules/engine.h"
#include "watch/http_server.h"
#include "watch/notifier.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }
int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

int main(int argc, char** argv) {
  using namespace gpudoctor;
  HttpOptions http;
  http.listen = "127.0.0.1:0";
  http.interval_s = 1;
  std::vector<NotifierConfig> notifiers;
  double resolve_after_s = -1, run_for_s = 3600;
  std::vector<std::string> check_args = {"gpudoctor", "check"};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "http_harness: %s needs a value\n", a.c_str());
        std::exit(3);
      }
      return argv[++i];
    };
    if (a == "--") {
      for (++i; i < argc; ++i) check_args.push_back(argv[i]);
    } else if (a == "--listen") {
      http.listen = next();
    } else if (a == "--token-file") {
      auto t = ReadTokenFile(next());
      if (!t.ok()) {
        std::fprintf(stderr, "http_harness: %s\n", t.status().ToString().c_str());
        return 3;
      }
      http.token = *t;
    } else if (a == "--dcgm-compat") {
      http.dcgm_compat = true;
    } else if (a == "--interval") {
      http.interval_s = std::stod(next());
    } else if (a == "--webhook") {
      notifiers.push_back({NotifierKind::kWebhook, next(), {}, Severity::kWarn, 5});
    } else if (a == "--alertmanager") {
      notifiers.push_back({NotifierKind::kAlertmanager, next(), {}, Severity::kWarn, 5});
    } else if (a == "--resolve-after") {
      resolve_after_s = std::stod(next());
    } else if (a == "--run-for") {
      run_for_s = std::stod(next());
    } else {
      std::fprintf(stderr, "http_harness: unknown flag %s\n", a.c_str());
      return 3;
    }
  }
  std::vector<const char*> cargv;
  for (const auto& s : check_args) cargv.push_back(s.c_str());
  auto opts = ParseCommandLine(static_cast<int>(cargv.size()), cargv.data());
  if (!opts.ok()) {
    std::fprintf(stderr, "http_harness: %s\n", opts.status().ToString().c_str());
    return 3;
  }
  auto settings = BuildSettings(*opts);
  if (!settings.ok()) {
    std::fprintf(stderr, "http_harness: %s\n", settings.status().ToString().c_str());
    return 3;
  }
  std::shared_ptr<const Settings> shared = *settings;
  auto start = SteadyClock::now();
  Report report;
  report.snapshot = RunProbes(EnabledProbes(*shared), shared,
                              start + std::chrono::duration_cast<SteadyClock::duration>(
                                          std::chrono::duration<double>(shared->deadline_s)));
  report.findings = EvaluateRules(report.snapshot, shared->thresholds);
  SortFindings(report.findings);
  report.duration_ms =
      std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();

  std::mutex mu;
  std::shared_ptr<const TickResult> latest;
  auto publish = [&](std::shared_ptr<const TickResult> t) {
    std::lock_guard<std::mutex> lock(mu);
    latest = std::move(t);
  };
  std::vector<TrackedFinding> tracked;
  int64_t t0 = NowMs();
  for (const Finding& f : report.findings) {
    TrackedFinding t;
    t.last = f;
    t.key =
        f.id + "/" + (f.gpu && f.gpu->index ? std::to_string(*f.gpu->index) : "") + "/" + f.subject;
    t.state = FindingState::kOpen;
    t.first_seen_ms = t.opened_ms = t.last_seen_ms = t0;
    tracked.push_back(t);
  }
  auto make_tick = [&](uint64_t n, bool resolved, bool with_transitions) {
    auto t = std::make_shared<TickResult>();
    t->tick = n;
    t->unix_ms = NowMs();
    t->report = report;
    if (resolved) t->report.findings.clear();
    t->points = FlattenSnapshot(report.snapshot);
    for (TrackedFinding f : tracked) {
      if (resolved) {
        f.state = FindingState::kResolved;
        f.resolved_ms = f.resolved_ms ? f.resolved_ms : t->unix_ms;
        f.resolution = "cleared";
      }
      t->findings.push_back(f);
      if (with_transitions) {
        t->transitions.push_back(
            {resolved ? TransitionKind::kResolved : TransitionKind::kOpened, f});
      }
    }
    return t;
  };

  NotifierHubOptions nopts;
  nopts.hostname = report.snapshot.hostname;
  nopts.backoff_initial_s = 0.2;
  auto hub = NotifierHub::Create(notifiers, nopts);
  if (!hub.ok()) {
    std::fprintf(stderr, "http_harness: %s\n", hub.status().ToString().c_str());
    return 3;
  }
  uint64_t n = 1;
  auto first = make_tick(n, false, true);
  publish(first);
  auto server = WatchHttpServer::Start(
      http,
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return latest;
      },
      nullptr);
  if (!server.ok()) {
    std::fprintf(stderr, "http_harness: %s\n", server.status().ToString().c_str());
    return 3;
  }
  std::printf("listening on %d\n", (*server)->port());
  std::fflush(stdout);
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  (*hub)->OnTransitions(*first);
  bool resolved = false;
  auto begin = std::chrono::steady_clock::now();
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::duration<double>(http.interval_s));
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (el > run_for_s) break;
    bool resolve_now = !resolved && resolve_after_s >= 0 && el >= resolve_after_s;
    if (resolve_now) {
      resolved = true;
      for (auto& f : tracked) f.resolved_ms = NowMs();
    }
    auto t = make_tick(++n, resolved, resolve_now);
    publish(t);
    (*hub)->OnTransitions(*t);
    for (const HistoryEvent& e : (*hub)->DrainDeliveryEvents()) {
      std::fprintf(stderr, "event %s %s\n", e.kind.c_str(), e.detail.c_str());
    }
  }
  (*server)->Stop();
  (*hub)->Stop();
  return 0;
}
