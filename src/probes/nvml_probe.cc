// NVML probe. Source: libnvidia-ml through our own loader (src/nvml), every call under a
// deadline (src/nvml/sampler.h); process names from /proc/PID/comm and owners from
// stat(2) of /proc/PID + /etc/passwd (never cmdline: it can hang on a task stuck in the driver);
// the CUDA runtime from library paths in /proc/PID/maps, skipping tasks in D state.
// Units: as in facts/gpu_facts.h. Failure modes: no library → skipped (facts still say so, for
// the no-driver findings); init error → failed with the NVML text; a hung call → the probe
// returns on time with the hang recorded. References: nvml.md, signals.md.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/strings.h"
#include "nvml/sampler.h"
#include "nvml/session.h"
#include "parsers/gpu_sysfs.h"
#include "plan/live_advice.h"
#include "probes/cuda_runtime_scan.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

constexpr auto kReturnMargin = std::chrono::milliseconds(300);

// What /proc said of one GPU process: its comm and owner (empty where unreadable: a pid of
// another PID namespace has neither).
struct ProcessName {
  std::string comm, user;
  TimePoint read_at;
};

// Under `watch` a GPU process is named again once kNamesRefresh has passed (a comm can change and
// a pid be reused; both are rare); each tick used to open /proc/PID/comm, stat /proc/PID and read
// /etc/passwd for every GPU process, and to fail at both for every pid /proc does not have (NVML
// names host pids; a container without the host's PID namespace sees none of them).
constexpr auto kNamesRefresh = std::chrono::seconds(10);
using ProcessNames = std::unordered_map<uint32_t, ProcessName>;

ProcessName ReadProcessName(const RootFs& fs, uint32_t pid, std::optional<std::string>& passwd) {
  ProcessName n;
  std::string dir = std::to_string(pid);
  if (auto comm = fs.ReadProc(dir + "/comm", 256); comm.ok()) n.comm = Sanitize(Trim(*comm), 64);
  // The owner from stat(2) of /proc/PID, never /proc/PID/status: nothing of a task that may be
  // stuck in the driver is read beyond its comm.
  struct stat sb {};
  if (::stat(fs.ProcPath(dir).c_str(), &sb) != 0) return n;
  if (!passwd) {
    auto text = RootFs::ReadFile(fs.RootPath("/etc/passwd"), 1 << 20);
    passwd = text.ok() ? *text : "";
  }
  n.user = PasswdUserName(*passwd, sb.st_uid);
  if (n.user.empty()) n.user = std::to_string(sb.st_uid);
  return n;
}

// Fills comm and user of every GPU process. `cache` (watch; may be null) keeps the names of the
// processes NVML listed this time, each for kNamesRefresh.
void NameProcesses(const RootFs& fs, GpuLayerFacts& facts, ProcessNames* cache) {
  std::optional<std::string> passwd;
  const TimePoint now = SteadyClock::now();
  ProcessNames listed;
  auto still_fresh = [&](uint32_t pid) -> const ProcessName* {
    if (cache == nullptr) return nullptr;
    auto it = cache->find(pid);
    return it != cache->end() && now - it->second.read_at < kNamesRefresh ? &it->second : nullptr;
  };
  for (auto& gpu : facts.gpus) {
    if (!gpu.processes) continue;
    for (auto& p : *gpu.processes) {
      const ProcessName* name = nullptr;
      if (auto it = listed.find(p.pid); it != listed.end()) {
        name = &it->second;  // the same process on another GPU
      } else if (const ProcessName* kept = still_fresh(p.pid)) {
        name = &listed.emplace(p.pid, *kept).first->second;
      } else {
        ProcessName fresh = ReadProcessName(fs, p.pid, passwd);
        fresh.read_at = now;
        name = &listed.emplace(p.pid, std::move(fresh)).first->second;
      }
      p.comm = name->comm;
      p.user = name->user;
    }
  }
  if (cache != nullptr) *cache = std::move(listed);
}

// Under `watch`: the NVML session kept open between ticks.
struct NvmlCarry : ProbeCarry {
  std::shared_ptr<NvmlSession> session;
  ProcessNames process_names;
  CudaRuntimeCache cuda_runtimes;
};

}  // namespace

ProbeOutput RunNvmlProbe(const ProbeContext& ctx) {
  const Settings& s = *ctx.settings;
  NvmlSampleOptions opts;
  opts.library_path = s.nvml_lib;
  opts.window = ctx.sample_window();
  opts.timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::clamp(s.nvml_timeout_s, 0.05, 3600.0) * 1000));
  // A check leaves time to report; a watch tick is short and its runner collects late results.
  opts.deadline = ctx.deadline - (ctx.continuous ? std::chrono::milliseconds(20) : kReturnMargin);
  if (!ctx.continuous) {
    // The hang timeout must fit in the check's deadline, so a hung call is named as a hang
    // whatever --deadline is: init and the GPU phase (plus its window) may each use it.
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(opts.deadline - SteadyClock::now());
    auto fit = (left - opts.window) / 2;
    if (fit < opts.timeout) opts.timeout = std::max(fit, std::chrono::milliseconds(50));
  }
  GpuLayerFacts facts;
  std::shared_ptr<NvmlCarry> carry;
  if (ctx.continuous) {
    carry = std::dynamic_pointer_cast<NvmlCarry>(ctx.previous);
    if (carry == nullptr) {
      carry = std::make_shared<NvmlCarry>();
      carry->session = std::make_shared<NvmlSession>(opts);
    }
    facts = carry->session->Sample(opts.deadline);
  } else {
    facts = SampleNvml(opts);
  }
  // Process names and owners come from /proc after the NVML phase, never inside it: a stuck
  // /proc read cannot cost the GPU facts.
  NameProcesses(ctx.fs(), facts, carry ? &carry->process_names : nullptr);
  // The CUDA runtime each GPU process loaded (library paths of /proc/PID/maps, never of a task
  // in D state; probes/cuda_runtime_scan.h), for driver.cuda_too_old.
  if (facts.driver.cuda_driver_version) {
    ReadCudaRuntimes(ctx.fs(), facts, ctx.deadline - kReturnMargin,
                     carry ? &carry->cuda_runtimes : nullptr);
  }
  // An inference server on a GPU: the planner's KV numbers as facts, for gpu.memory.full.
  for (auto& gpu : facts.gpus) gpu.live_kv = plan::LiveKvFactsFor(gpu);

  ProbeState state = ProbeState::kOk;
  std::string reason;
  switch (facts.nvml.state) {
    case NvmlState::kLibraryMissing:
      state = ProbeState::kSkipped;
      reason = "no NVIDIA driver: " + facts.nvml.error;
      break;
    case NvmlState::kSymbolMissing:
    case NvmlState::kInitFailed:
    case NvmlState::kInitHung:
      state = ProbeState::kFailed;
      reason = facts.nvml.error;
      break;
    case NvmlState::kInitUnfinished:
      state = ProbeState::kTimeout;
      reason = facts.nvml.error;
      break;
    case NvmlState::kOk:
    case NvmlState::kNotRun: {
      size_t cut = std::count_if(facts.hangs.begin(), facts.hangs.end(),
                                 [](const NvmlHang& h) { return h.check_deadline; });
      if (cut < facts.hangs.size()) {
        state = ProbeState::kFailed;
        reason = std::to_string(facts.hangs.size() - cut) + " NVML call(s) hung and were abandoned";
      } else if (cut > 0) {
        state = ProbeState::kTimeout;
        reason = std::to_string(cut) + " NVML call(s) not finished in the check's deadline";
      }
      break;
    }
  }
  // The pci_gpu probe owns pci_devices and the kernel module version; leave them alone.
  auto apply = [facts = std::move(facts)](Snapshot& snap) mutable {
    GpuLayerFacts& g = snap.gpu;
    g.nvml = std::move(facts.nvml);
    g.driver.driver_version = std::move(facts.driver.driver_version);
    g.driver.nvml_version = std::move(facts.driver.nvml_version);
    g.driver.cuda_driver_version = facts.driver.cuda_driver_version;
    g.gpus = std::move(facts.gpus);
    g.hangs = std::move(facts.hangs);
    g.nvml_xid_events = std::move(facts.nvml_xid_events);
  };
  return {state, std::move(reason), std::move(apply), std::move(carry)};
}

}  // namespace gpudoctor
