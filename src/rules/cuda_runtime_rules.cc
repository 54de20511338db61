// driver.cuda_too_old: a GPU process's CUDA runtime (facts from probes/cuda_runtime_scan.h)
// against the driver's CUDA version (nvmlSystemGetCudaDriverVersion, 12040 = 12.4).
//  - runtime major > driver major → warn: needs a newer driver or the forward-compatibility
//    package (a process that maps libcuda.so from a compat directory already uses one: skipped).
//  - same major, runtime minor > driver minor (minor known only from a full file name) → info:
//    runs under minor version compatibility, but PTX for the newer toolkit cannot be JIT-ed.
// One finding per process (subject "PID COMM"), even when it uses several GPUs.
#include <set>
#include <string>

#include "rules/upkeep_rules.h"

namespace gpudoctor {

void CudaRuntimeRules(const GpuLayerFacts& gpu, std::vector<Finding>& out) {
  if (!gpu.driver.cuda_driver_version) return;
  int driver_major = *gpu.driver.cuda_driver_version / 1000;
  int driver_minor = *gpu.driver.cuda_driver_version % 1000 / 10;
  std::string driver_cuda = std::to_string(driver_major) + "." + std::to_string(driver_minor);
  std::set<uint32_t> done;
  for (const auto& g : gpu.gpus) {
    if (!g.processes) continue;
    for (const GpuProcess& p : *g.processes) {
      if (p.cuda_runtime.empty() || p.cuda_forward_compat || !done.insert(p.pid).second) continue;
      size_t dot = p.cuda_runtime.find('.');
      int major = std::stoi(p.cuda_runtime.substr(0, dot));
      int minor = dot == std::string::npos ? -1 : std::stoi(p.cuda_runtime.substr(dot + 1));
      Severity sev;
      std::string why;
      if (major > driver_major) {
        sev = Severity::kWarn;
        why = "needs CUDA " + std::to_string(major) +
              ".x: install a driver for it or the "
              "CUDA forward-compatibility package (cuda-compat-" +
              std::to_string(major) + "-*)";
      } else if (major == driver_major && minor > driver_minor) {
        sev = Severity::kInfo;
        why =
            "runs under minor version compatibility: PTX for the newer toolkit cannot be "
            "JIT-compiled and newer APIs are missing; a newer driver (or cuda-compat) fixes it";
      } else {
        continue;
      }
      std::string who = "process " + std::to_string(p.pid) + (p.comm.empty() ? "" : " " + p.comm);
      Finding f = MakeFinding("driver.cuda_too_old", sev,
                              who + " loaded CUDA runtime " + p.cuda_runtime +
                                  " but the driver supports CUDA " + driver_cuda + ": " + why);
      f.subject = std::to_string(p.pid) + (p.comm.empty() ? "" : " " + p.comm);
      f.Add("gpu_index", g.index);
      f.Add("pid", static_cast<int64_t>(p.pid)).Add("process", p.comm);
      if (!p.user.empty()) f.Add("user", p.user);
      f.Add("cuda_runtime", p.cuda_runtime).Add("cuda_runtime_library", p.cuda_runtime_path);
      f.Add("driver_cuda_version", driver_cuda);
      if (!gpu.driver.driver_version.empty()) f.Add("driver_version", gpu.driver.driver_version);
      out.push_back(std::move(f));
    }
  }
}

}  // namespace gpudoctor
