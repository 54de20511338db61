// Inference probe: what the inference servers on this node say about themselves, read from
// their Prometheus /metrics (inference/prom_text.h, normalised by inference/engine_metrics.h,
// windowed by inference/inference_window.h). Endpoints: the [[inference]] tables, and local
// listeners of known engines (a listening TCP socket, from sock_diag, owned by a process whose
// comm or exe name is vllm / text-generation-launcher / sglang / tritonserver, on that engine's
// documented default metrics port), looked for on the first run and then every 60 s.
//
// Bounds: every read is one HttpGet (libcurl, lazily loaded) ending by the earlier of the
// check's deadline (less a margin) and 2 s from the read's start, with a body of at most 8 MiB;
// the reads run one after another, so the probe ends by the check's deadline. A server that fails
// to answer is that endpoint's `error` (the probe stays ok). Failure modes: nothing configured and
// nothing found -> skipped.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "core/http_get.h"
#include "facts/inference_facts.h"
#include "inference/engine_metrics.h"
#include "inference/inference_window.h"
#include "inference/prom_text.h"
#include "net/proc_scan.h"
#include "net/sock_diag.h"
#include "plan/kv_planner.h"
#include "plan/model_presets.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "probes/round_walk.h"

namespace gpudoctor {
namespace {

struct Endpoint {
  std::string name, url, source;
  InferenceEngine engine = InferenceEngine::kAuto;
  std::vector<int> pids;
};

struct InferenceCarry : ProbeCarry {
  std::map<std::string, std::shared_ptr<InferenceWindow>> windows;  // by url
  std::vector<Endpoint> discovered;
  std::optional<TimePoint> discovered_at;
};

constexpr auto kRediscover = std::chrono::seconds(60);

std::string WithPath(const std::string& url) {
  // http://host:port → http://host:port/metrics (a URL with a path is taken as is).
  size_t scheme = url.find("://");
  size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return slash == std::string::npos ? url + "/metrics" : url;
}

std::string LowerBase(const std::string& path) {
  std::string b = path.substr(path.rfind('/') + 1);
  for (auto& c : b) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return b;
}

// Listening sockets of known engines' processes on their default metrics ports.
std::vector<Endpoint> Discover(const ProbeContext& ctx, TimePoint deadline) {
  std::vector<Endpoint> out;
  auto sockets = DumpTcpListeners();
  if (!sockets.ok()) return out;
  // Only a listener on some engine's default metrics port can become an endpoint: with none, no
  // process needs an owner and /proc is not walked (the usual node without an inference server).
  std::set<int> engine_ports;
  for (InferenceEngine e : {InferenceEngine::kVllm, InferenceEngine::kTgi, InferenceEngine::kSglang,
                            InferenceEngine::kTriton}) {
    for (int port : DefaultMetricsPorts(e)) engine_ports.insert(port);
  }
  std::map<uint64_t, const TcpSocketInfo*> listening;
  for (const auto& s : *sockets) {
    if (s.state == 10 && engine_ports.count(s.local_port) != 0) {  // TCP_LISTEN
      listening[s.inode] = &s;
    }
  }
  if (listening.empty()) return out;
  // A walk of this round already taken by the sockets or suspicious probe is used as is.
  std::shared_ptr<const ProcessScan> scan;
  if (ctx.continuous) {
    scan = RoundWalk(ctx, std::chrono::milliseconds(500), deadline);
  } else {
    ProcScanOptions opts;
    opts.read_fds = true;
    opts.read_exe = true;
    opts.deadline = deadline;
    scan = std::make_shared<const ProcessScan>(ScanProcesses(ctx.fs(), opts));
  }
  std::map<int, Endpoint> by_port;
  for (const auto& p : scan->processes) {
    InferenceEngine e = EngineForProcess(p.comm);
    if (e == InferenceEngine::kAuto && !p.exe.empty()) e = EngineForProcess(LowerBase(p.exe));
    if (e == InferenceEngine::kAuto) continue;
    std::vector<int> ports = DefaultMetricsPorts(e);
    for (uint64_t inode : p.socket_inodes) {
      auto it = listening.find(inode);
      if (it == listening.end()) continue;
      const TcpSocketInfo& s = *it->second;
      if (std::find(ports.begin(), ports.end(), s.local_port) == ports.end()) continue;
      Endpoint& ep = by_port[s.local_port];
      if (ep.url.empty()) {
        std::string host = s.local.substr(0, s.local.rfind(':'));
        if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
        if (host == "[::]") host = "[::1]";
        ep.url = "http://" + host + ":" + std::to_string(s.local_port) + "/metrics";
        ep.name = std::string(InferenceEngineName(e)) + ":" + std::to_string(s.local_port);
        ep.source = "discovered";
        ep.engine = e;
      }
      if (std::find(ep.pids.begin(), ep.pids.end(), p.pid) == ep.pids.end()) {
        ep.pids.push_back(p.pid);
      }
    }
  }
  for (auto& [port, ep] : by_port) out.push_back(std::move(ep));
  return out;
}

bool SamePort(const std::string& url, const std::string& other) {
  auto port = [](const std::string& u) {
    size_t scheme = u.find("://");
    std::string rest = u.substr(scheme == std::string::npos ? 0 : scheme + 3);
    rest = rest.substr(0, rest.find('/'));
    size_t colon = rest.rfind(':');
    return colon == std::string::npos ? std::string() : rest.substr(colon + 1);
  };
  return !port(url).empty() && port(url) == port(other);
}

// The planner's preset for a served model name: "meta-llama/Llama-3.1-8B-Instruct" →
// "llama-3.1-8b" (the longest preset name the base name starts with, "meta-" dropped).
const plan::ModelPreset* PresetForServedModel(const std::string& served) {
  std::string base = LowerBase(served.substr(0, served.find(',')));
  if (base.rfind("meta-", 0) == 0) base = base.substr(5);
  const plan::ModelPreset* best = nullptr;
  for (const auto& p : plan::ModelPresets()) {
    std::string name(p.name);
    if (base.rfind(name, 0) != 0) continue;
    // The preset name must end at a separator: "llama-3-8b" is not "llama-3-80b".
    if (base.size() > name.size() && std::isalnum(static_cast<unsigned char>(base[name.size()]))) {
      continue;
    }
    if (best == nullptr || p.name.size() > best->name.size()) best = &p;
  }
  return best;
}

void FillPlan(InferenceFacts& f) {
  if (f.model.empty()) return;
  const plan::ModelPreset* p = PresetForServedModel(f.model);
  if (p == nullptr) return;
  f.plan_model = std::string(p->name);
  plan::KvPlanInput in;
  in.model = p->shape;
  in.gpu_mem_bytes = uint64_t{80} << 30;  // any size: bytes per token do not depend on it
  in.reserve_fraction = 0.1;
  if (auto plan = plan::PlanKv(in); plan.ok()) {
    f.plan_kv_bytes_per_token = static_cast<uint64_t>(plan->kv_bytes_per_token);
  }
}

double SteadySeconds(TimePoint t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

ProbeOutput RunInferenceProbe(const ProbeContext& ctx) {
  const Settings& s = *ctx.settings;
  auto prev = std::dynamic_pointer_cast<InferenceCarry>(ctx.previous);
  auto carry = std::make_shared<InferenceCarry>();
  TimePoint now = SteadyClock::now();
  TimePoint deadline =
      std::clamp(ctx.deadline - std::chrono::milliseconds(100), now + std::chrono::milliseconds(50),
                 now + std::chrono::seconds(2));

  std::vector<Endpoint> endpoints;
  for (const auto& c : s.inference) {
    Endpoint ep;
    ep.url = WithPath(c.url);
    ep.engine = ParseInferenceEngine(c.engine).value_or(InferenceEngine::kAuto);
    ep.name = c.name;
    ep.source = "config";
    endpoints.push_back(std::move(ep));
  }
  if (s.inference_discover) {
    if (prev && prev->discovered_at && now - *prev->discovered_at < kRediscover) {
      carry->discovered = prev->discovered;
      carry->discovered_at = prev->discovered_at;
    } else {
      carry->discovered = Discover(ctx, deadline);
      carry->discovered_at = now;
    }
    for (const auto& d : carry->discovered) {
      bool configured = std::any_of(endpoints.begin(), endpoints.end(), [&](const Endpoint& e) {
        return e.source == "config" && SamePort(e.url, d.url);
      });
      if (!configured) endpoints.push_back(d);
    }
  }
  if (endpoints.empty()) {
    ProbeOutput out = ProbeSkipped("no [[inference]] configured and no known engine listening");
    if (ctx.continuous) out.next = std::move(carry);
    return out;
  }

  std::vector<InferenceFacts> facts;
  for (const auto& ep : endpoints) {
    InferenceFacts f;
    f.url = ep.url;
    f.source = ep.source;
    f.pids = ep.pids;
    f.engine = InferenceEngineName(ep.engine);
    std::shared_ptr<InferenceWindow> window;
    if (prev) {
      auto it = prev->windows.find(ep.url);
      if (it != prev->windows.end()) window = it->second;
    }
    if (!window) window = std::make_shared<InferenceWindow>();
    carry->windows[ep.url] = window;
    HttpGetRequest req;
    req.url = ep.url;
    TimePoint start = SteadyClock::now();
    req.deadline =
        std::clamp(ctx.deadline - std::chrono::milliseconds(100),
                   start + std::chrono::milliseconds(50), start + std::chrono::seconds(2));
    req.max_body_bytes = 8u << 20;
    req.connect_timeout_s = 1;
    Result<HttpGetAnswer> answer = HttpGet(req);
    if (!answer.ok()) {
      f.error = answer.status().message();
    } else if (answer->status < 200 || answer->status > 299) {
      f.error = ep.url + ": HTTP status " + std::to_string(answer->status);
    } else {
      auto families = ParsePromText(answer->body);
      if (!families.ok()) {
        f.error = ep.url + ": " + families.status().message();
      } else {
        EngineReading r = NormaliseEngine(ep.engine, *families);
        if (!r.any) {
          f.error = ep.url + ": no " +
                    (ep.engine == InferenceEngine::kAuto
                         ? std::string("vllm:, tgi_, sglang: or nv_inference_")
                         : std::string(InferenceEngineName(ep.engine))) +
                    " metrics in the answer";
        }
        window->Add(r, SteadySeconds(SteadyClock::now()), f);
        FillPlan(f);
      }
    }
    f.name = !ep.name.empty() ? ep.name : f.engine + ":" + [&] {
      std::string rest = ep.url.substr(ep.url.find("://") + 3);
      rest = rest.substr(0, rest.find('/'));
      return rest.substr(rest.rfind(':') + 1);
    }();
    f.restarts = window->restarts();
    facts.push_back(std::move(f));
  }
  ProbeOutput out = ProbeOk([f = std::move(facts)](Snapshot& snap) { snap.inference = f; });
  if (ctx.continuous) out.next = std::move(carry);
  return out;
}

}  // namespace gpudoctor
