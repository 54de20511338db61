// Boot probe: is a reboot pending, and will the NVIDIA driver load after it?
// Sources: <procfs>/sys/kernel/osrelease (running kernel), <rootfs>/boot/vmlinuz-* and
// <rootfs>/lib/modules/*/ (installed kernels; /usr/lib/modules when /lib/modules is absent),
// <rootfs>/run/reboot-required{,.pkgs} (Debian/Ubuntu; also under /var/run), <procfs>/modules
// (is nvidia loaded), and pending security updates (probes/updates_scan.h: apt lists vs dpkg
// status, or dnf's cache). The NVIDIA module is searched where drivers install it: updates/ (DKMS),
// extra/ (RHEL kmod), kernel/drivers/video/ (.run installer), kernel/nvidia*/ (Ubuntu's signed
// linux-modules-nvidia-*): a bounded walk (kMaxEntriesPerKernel). No network. Failure modes: no
// osrelease → skipped.
#include <algorithm>
#include <deque>
#include <map>

#include "core/strings.h"
#include "parsers/kernel_version.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "probes/updates_cache.h"
#include "probes/updates_scan.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxKernels = 64;
constexpr size_t kMaxEntriesPerKernel = 4000;
constexpr int kMaxDepth = 5;
constexpr size_t kMaxRebootPkgs = 20;

// Under `watch`: the last pending-updates answer and the package state it was read from.
struct UpdatesCarry : ProbeCarry {
  std::string key;  // UpdatesStateKey; "" = no memo
  std::shared_ptr<const UpdateFacts> updates;
};

bool IsNvidiaModuleFile(std::string_view name) {
  for (std::string_view stem : {"nvidia.ko", "nvidia-current.ko"}) {
    if (name == stem) return true;
    for (std::string_view ext : {".xz", ".zst", ".gz"}) {
      if (name.size() == stem.size() + ext.size() && StartsWith(name, stem) &&
          EndsWith(name, ext)) {
        return true;
      }
    }
  }
  return false;
}

// Breadth-first search for the module under the usual roots of one kernel's module directory
// (host path). Returns the module's host path, or "" (also when the bound was hit: *truncated).
std::string FindNvidiaModule(const RootFs& fs, const std::string& moddir, bool* truncated) {
  std::deque<std::pair<std::string, int>> queue;
  for (const char* sub : {"updates", "extra", "kernel/drivers/video"}) {
    queue.push_back({moddir + "/" + sub, 0});
  }
  if (auto top = RootFs::ListDir(fs.RootPath(moddir + "/kernel")); top.ok()) {
    for (const std::string& n : *top) {
      if (StartsWith(n, "nvidia")) queue.push_back({moddir + "/kernel/" + n, 0});
    }
  }
  size_t examined = 0;
  while (!queue.empty()) {
    auto [dir, depth] = queue.front();
    queue.pop_front();
    auto names = RootFs::ListDir(fs.RootPath(dir));
    if (!names.ok()) continue;
    for (const std::string& n : *names) {
      if (++examined > kMaxEntriesPerKernel) {
        *truncated = true;
        return "";
      }
      std::string path = dir + "/" + n;
      if (IsNvidiaModuleFile(n)) return path;
      if (depth + 1 >= kMaxDepth || n.find(".ko") != std::string::npos) continue;
      auto info = RootFs::Stat(fs.RootPath(path));
      if (info.ok() && info->is_dir) queue.push_back({path, depth + 1});
    }
  }
  return "";
}

std::string ModulesRoot(const RootFs& fs) {
  if (RootFs::Exists(fs.RootPath("/lib/modules"))) return "/lib/modules";
  return "/usr/lib/modules";
}

}  // namespace

ProbeOutput RunBootProbe(const ProbeContext& ctx) {
  const RootFs& fs = ctx.fs();
  auto osrelease = fs.ReadProc("sys/kernel/osrelease", 256);
  if (!osrelease.ok())
    return ProbeSkipped("running kernel unknown: " + osrelease.status().ToString());
  BootFacts facts;
  facts.running_kernel = Sanitize(Trim(*osrelease), 128);
  if (facts.running_kernel.empty()) return ProbeSkipped("empty kernel release");

  std::map<std::string, InstalledKernel> kernels;
  if (auto boot = RootFs::ListDir(fs.RootPath("/boot")); boot.ok()) {
    for (const std::string& n : *boot) {
      if (!StartsWith(n, "vmlinuz-") || n.find("rescue") != std::string::npos) continue;
      if (kernels.size() >= kMaxKernels) break;
      std::string v = Sanitize(n.substr(8), 128);
      kernels[v].version = v;
      kernels[v].has_image = true;
    }
  }
  std::string modroot = ModulesRoot(fs);
  if (auto mods = RootFs::ListDir(fs.RootPath(modroot)); mods.ok()) {
    for (const std::string& n : *mods) {
      std::string dir = modroot + "/" + n;
      bool real = RootFs::Exists(fs.RootPath(dir + "/modules.dep")) ||
                  RootFs::Exists(fs.RootPath(dir + "/kernel"));
      bool known = kernels.count(n) > 0;
      if (!real && !known && n != facts.running_kernel) continue;  // leftover DKMS directories
      if (!known && kernels.size() >= kMaxKernels) continue;
      InstalledKernel& k = kernels[n];
      k.version = Sanitize(n, 128);
      k.has_modules_dir = real;
    }
  }
  for (auto& [v, k] : kernels) {
    bool truncated = false;
    k.nvidia_module = FindNvidiaModule(fs, modroot + "/" + v, &truncated);
    facts.scan_truncated = facts.scan_truncated || truncated;
    facts.kernels.push_back(k);
  }
  std::sort(facts.kernels.begin(), facts.kernels.end(),
            [](const InstalledKernel& a, const InstalledKernel& b) {
              return CompareKernelVersions(a.version, b.version) < 0;
            });

  for (const char* dir : {"/run", "/var/run"}) {
    std::string flag = fs.RootPath(std::string(dir) + "/reboot-required");
    if (!RootFs::Exists(flag)) continue;
    facts.reboot_required_flag = true;
    if (auto pkgs = RootFs::ReadFile(flag + ".pkgs", 64 * 1024); pkgs.ok()) {
      for (std::string_view line : SplitLines(*pkgs)) {
        line = Trim(line);
        if (line.empty()) continue;
        if (facts.reboot_required_pkgs.size() >= kMaxRebootPkgs) break;
        facts.reboot_required_pkgs.push_back(Sanitize(line, 80));
      }
    }
    break;
  }
  if (!facts.reboot_required_flag && RootFs::Exists(fs.RootPath("/run"))) {
    facts.reboot_required_flag = false;
  }
  if (auto modules = fs.ReadProc("modules"); modules.ok()) {
    bool loaded = false;
    for (std::string_view line : SplitLines(*modules))
      loaded = loaded || StartsWith(line, "nvidia ");
    facts.nvidia_loaded = loaded;
  }
  // Pending security updates (probes/updates_scan.h): local package state only. Under watch
  // the last answer stands while dpkg's status and the apt lists did not change (reading and
  // parsing them was most of this probe's cost, every slow round).
  auto carry = std::make_shared<UpdatesCarry>();
  if (ctx.continuous) carry->key = UpdatesStateKey(fs);
  const auto* prev = dynamic_cast<const UpdatesCarry*>(ctx.previous.get());
  if (prev != nullptr && !carry->key.empty() && prev->key == carry->key) {
    carry->updates = prev->updates;
  } else {
    const TimePoint scan_deadline = ctx.deadline - std::chrono::milliseconds(300);
    // `check`: through the on-disk cache keyed on the inputs' identity (probes/updates_cache.h);
    // `watch` keeps its answer in memory (above).
    carry->updates = std::make_shared<const UpdateFacts>(
        ctx.continuous ? ScanSecurityUpdates(fs, scan_deadline)
                       : ScanSecurityUpdatesCached(fs, scan_deadline));
    if (SteadyClock::now() >= scan_deadline) carry->key.clear();  // maybe cut short: scan again
  }
  ProbeOutput out = ProbeOk([facts, updates = carry->updates](Snapshot& s) {
    s.host.boot = facts;
    s.host.updates = updates;
  });
  if (ctx.continuous) out.next = std::move(carry);
  return out;
}

}  // namespace gpudoctor
