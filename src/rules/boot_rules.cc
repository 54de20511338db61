// Boot and update rules: host.reboot.pending (a newer kernel of the running flavour is
// installed, or /run/reboot-required) and driver.module.kernel_mismatch (the NVIDIA module is
// missing for the running kernel while the driver is not loaded, or for the newest kernel the
// next boot starts while the running one has it). Kernels only count when installed (an image in
// /boot or a real module directory); versions compare like dpkg (parsers/kernel_version.h).
#include <string>

#include "parsers/kernel_version.h"
#include "rules/upkeep_rules.h"

namespace gpudoctor {
namespace {

bool Installed(const InstalledKernel& k) { return k.has_image || k.has_modules_dir; }

std::string KernelsWithModule(const BootFacts& b) {
  std::string list;
  for (const InstalledKernel& k : b.kernels) {
    if (k.nvidia_module.empty()) continue;
    list += (list.empty() ? "" : ",") + k.version;
  }
  return list;
}

}  // namespace

void BootRules(const BootFacts& b, const Thresholds&, std::vector<Finding>& out) {
  const std::string& running = b.running_kernel;
  const InstalledKernel* run = nullptr;
  const InstalledKernel* newest = nullptr;
  std::string flavour = KernelFlavour(running);
  for (const InstalledKernel& k : b.kernels) {  // oldest first
    if (k.version == running) run = &k;
    if (Installed(k) && KernelFlavour(k.version) == flavour) newest = &k;
  }
  bool newer = newest != nullptr && CompareKernelVersions(newest->version, running) > 0;

  if (newer || b.reboot_required_flag.value_or(false)) {
    std::string summary =
        newer ? "kernel " + newest->version + " is installed but " + running + " runs"
              : "the system asks for a reboot (/run/reboot-required)";
    Finding f = MakeFinding("host.reboot.pending", Severity::kInfo, summary);
    f.Add("running_kernel", running);
    if (newest != nullptr) f.Add("newest_kernel", newest->version);
    if (b.reboot_required_flag) f.AddBool("reboot_required_flag", *b.reboot_required_flag);
    if (!b.reboot_required_pkgs.empty()) {
      std::string pkgs;
      for (const auto& p : b.reboot_required_pkgs) pkgs += (pkgs.empty() ? "" : ",") + p;
      f.Add("packages", pkgs);
    }
    if (run == nullptr || !run->has_modules_dir) f.AddBool("running_kernel_modules_present", false);
    out.push_back(std::move(f));
  }

  std::string with_module = KernelsWithModule(b);
  if (with_module.empty()) return;  // no NVIDIA module anywhere: not a host we can judge
  bool run_has = run != nullptr && !run->nvidia_module.empty();
  if (!run_has && run != nullptr && run->has_modules_dir && b.nvidia_loaded == false) {
    Finding f = MakeFinding("driver.module.kernel_mismatch", Severity::kCrit,
                            "no NVIDIA module for the running kernel " + running + " (built for " +
                                with_module + "): the driver cannot load");
    f.Add("running_kernel", running).Add("kernels_with_module", with_module);
    f.AddBool("nvidia_loaded", false);
    out.push_back(std::move(f));
    return;
  }
  if (newer && run_has && newest->nvidia_module.empty()) {
    Finding f = MakeFinding("driver.module.kernel_mismatch", Severity::kWarn,
                            "after a reboot into " + newest->version +
                                " the NVIDIA driver will not load: its module is built only "
                                "for " +
                                with_module);
    f.Add("running_kernel", running).Add("next_kernel", newest->version);
    f.Add("kernels_with_module", with_module).Add("running_module", run->nvidia_module);
    if (b.nvidia_loaded) f.AddBool("nvidia_loaded", *b.nvidia_loaded);
    if (b.scan_truncated) f.AddBool("scan_truncated", true);
    out.push_back(std::move(f));
  }
}

}  // namespace gpudoctor
