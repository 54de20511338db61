// CUDA runtime of GPU processes from /proc/PID/maps library paths (see cuda_runtime_scan.h).
#include "probes/cuda_runtime_scan.h"

#include <map>

#include "core/strings.h"
#include "parsers/pid_stat.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxMapsBytes = 8u << 20;

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "libcudart.so.12.4.127" → {12, 4}; "libcudart.so.12" → {12, -}; "libcudart-ab12.so.11.0" →
// {11, -}. nullopt major when the name has no ".so.N".
CudaRuntimeSeen VersionOf(std::string_view base, bool full_minor) {
  CudaRuntimeSeen out;
  size_t so = base.find(".so.");
  if (so == std::string_view::npos) return out;
  std::vector<std::string_view> parts = Split(base.substr(so + 4), ".", false);
  if (parts.empty()) return out;
  auto major = ParseBoundedDecimal(parts[0], 3);
  if (!major || *major < 1) return out;
  out.major = static_cast<int>(*major);
  if (full_minor && parts.size() >= 3) {
    if (auto minor = ParseBoundedDecimal(parts[1], 3)) out.minor = static_cast<int>(*minor);
  }
  return out;
}

enum class TaskStates { kNoneInD, kOneInD, kNoSuchProcess };

// Whether any thread of `pid` is in D state, from /proc/PID/task/*/stat (or /proc/PID/stat).
// kNoSuchProcess: /proc has neither (exited, or a process of another PID namespace: NVML names
// host pids, which a container without the host's PID namespace does not see).
TaskStates ThreadStates(const RootFs& fs, const std::string& pid) {
  auto tasks = RootFs::ListDir(fs.ProcPath(pid + "/task"));
  if (!tasks.ok()) {
    auto st = fs.ReadProc(pid + "/stat", 4096);
    if (!st.ok()) return TaskStates::kNoSuchProcess;
    auto parsed = ParsePidStat(*st);
    // Unparsable: do not touch it.
    return !parsed.ok() || parsed->state == 'D' ? TaskStates::kOneInD : TaskStates::kNoneInD;
  }
  for (const std::string& tid : *tasks) {
    auto st = fs.ReadProc(pid + "/task/" + tid + "/stat", 4096);
    if (!st.ok()) continue;
    auto parsed = ParsePidStat(*st);
    if (parsed.ok() && parsed->state == 'D') return TaskStates::kOneInD;
  }
  return TaskStates::kNoneInD;
}

constexpr std::string_view kNoSuchProcessNote =
    "not read: no such process in /proc (exited, or of another PID namespace)";

}  // namespace

CudaRuntimeSeen ParseCudaRuntimeMaps(std::string_view maps) {
  CudaRuntimeSeen cudart, fallback;
  bool compat = false;
  for (std::string_view line : SplitLines(maps)) {
    size_t slash = line.find('/');  // the path column starts at the first '/'
    if (slash == std::string_view::npos) continue;
    std::string_view path = Trim(line.substr(slash));
    if (EndsWith(path, " (deleted)")) path.remove_suffix(10);
    std::string_view base = BaseName(path);
    if (StartsWith(base, "libcuda.so") && path.find("/compat/") != std::string_view::npos) {
      compat = true;
    } else if (StartsWith(base, "libcudart") && !cudart.major) {
      cudart = VersionOf(base, true);
      if (cudart.major) cudart.path = Sanitize(path, 512);
    } else if ((StartsWith(base, "libnvrtc") || StartsWith(base, "libcublas")) && !fallback.major) {
      fallback = VersionOf(base, false);
      if (fallback.major) fallback.path = Sanitize(path, 512);
    }
  }
  CudaRuntimeSeen out = cudart.major ? cudart : fallback;
  out.forward_compat = compat;
  return out;
}

void ReadCudaRuntimes(const RootFs& fs, GpuLayerFacts& facts, TimePoint deadline,
                      CudaRuntimeCache* cache, int per_read_ms) {
  std::map<uint32_t, CudaRuntimeSeen> seen;
  CudaRuntimeCache next;
  std::map<uint32_t, std::string> notes;
  bool stuck = false;
  for (auto& gpu : facts.gpus) {
    if (!gpu.processes) continue;
    for (auto& p : *gpu.processes) {
      if (p.pid == 0) continue;
      auto key = std::make_pair(p.pid, p.comm);
      if (cache != nullptr && !seen.count(p.pid) && !notes.count(p.pid)) {
        if (auto hit = cache->find(key); hit != cache->end()) {
          if (hit->second.no_such_process) {
            notes[p.pid] = std::string(kNoSuchProcessNote);
            next[key] = hit->second;
          } else {
            seen[p.pid] = hit->second;
          }
        }
      }
      if (!seen.count(p.pid) && !notes.count(p.pid)) {
        std::string pid = std::to_string(p.pid);
        if (stuck) {
          notes[p.pid] = "not read: an earlier maps read did not return";
        } else if (SteadyClock::now() >= deadline) {
          notes[p.pid] = "not read: the check's deadline";
        } else if (TaskStates states = ThreadStates(fs, pid); states == TaskStates::kOneInD) {
          notes[p.pid] = "not read: a thread is in D state (maps would wait on its mm lock)";
        } else if (states == TaskStates::kNoSuchProcess) {
          notes[p.pid] = std::string(kNoSuchProcessNote);
          // Kept while NVML lists it (a pid of another PID namespace stays unseen): not looked
          // for again every tick.
          next[key] = CudaRuntimeSeen{.no_such_process = true};
        } else {
          std::string path = fs.ProcPath(pid + "/maps");
          TimePoint until =
              std::min(deadline, SteadyClock::now() + std::chrono::milliseconds(per_read_ms));
          auto text =
              RunWithDeadline([path] { return RootFs::ReadFile(path, kMaxMapsBytes); }, until);
          if (!text) {
            stuck = true;
            notes[p.pid] =
                "not read: maps did not answer in " + std::to_string(per_read_ms) + " ms";
          } else if (!text->ok()) {
            notes[p.pid] = "not read: " + text->status().ToString();
          } else {
            seen[p.pid] = ParseCudaRuntimeMaps(**text);
          }
        }
      }
      if (auto n = notes.find(p.pid); n != notes.end()) {
        p.maps_note = n->second;
        continue;
      }
      const CudaRuntimeSeen& c = seen[p.pid];
      next[key] = c;
      p.cuda_forward_compat = c.forward_compat;
      if (!c.major) continue;
      p.cuda_runtime = std::to_string(*c.major);
      if (c.minor) p.cuda_runtime += '.' + std::to_string(*c.minor);
      p.cuda_runtime_path = c.path;
    }
  }
  if (cache != nullptr) *cache = std::move(next);
}

}  // namespace gpudoctor
