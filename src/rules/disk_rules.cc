// Filesystem rules: host.disk.full, host.disk.inodes, host.disk.unresponsive; one finding per
// mount (subject = mount point); host.mount.missing per required mount point not mounted. Read-only
// filesystems are never "full": nothing writes there.
#include <string>

#include "core/strings.h"
#include "rules/host_rules.h"

namespace gpudoctor {
namespace {

void AddMount(Finding& f, const MountFacts& m) {
  f.subject = m.mount_point;
  f.Add("mount_point", m.mount_point).Add("fs_type", m.fs_type).Add("device", m.device);
}

// Used share as df prints it: used / (used + available to users); root-reserved blocks are
// neither. Falls back to (total - available) / total without f_bfree.
std::optional<double> UsedSpacePct(const MountFacts& m) {
  if (!m.total_bytes || !m.available_bytes || *m.total_bytes == 0) return std::nullopt;
  uint64_t total = *m.total_bytes, avail = std::min(*m.available_bytes, total);
  if (m.free_bytes && *m.free_bytes <= total) {
    uint64_t used = total - *m.free_bytes;
    if (used + avail == 0) return std::nullopt;
    return 100.0 * static_cast<double>(used) / static_cast<double>(used + avail);
  }
  return 100.0 * static_cast<double>(total - avail) / static_cast<double>(total);
}

void SpaceRule(const MountFacts& m, const Thresholds& t, std::vector<Finding>& out) {
  auto pct = UsedSpacePct(m);
  if (!pct) return;
  const char* id = "host.disk.full";
  auto sev = GradeHigh(*pct, t.Get(id, "warn_used_pct"), t.Get(id, "crit_used_pct"));
  if (!sev) return;
  Finding f = MakeFinding(id, *sev,
                          m.mount_point + " is " + FormatDouble(*pct) + "% full (" +
                              FormatBytes(*m.available_bytes) + " left of " +
                              FormatBytes(*m.total_bytes) + ")");
  AddMount(f, m);
  f.Add("used_pct", *pct).Add("available_bytes", *m.available_bytes);
  f.Add("total_bytes", *m.total_bytes);
  if (m.mount_point == "/dev/shm") {
    f.next_steps.insert(f.next_steps.begin(),
                        "/dev/shm is RAM-backed shared memory used by data loaders: remove stale "
                        "segments (`ls -la /dev/shm`) or raise its size (`mount -o "
                        "remount,size=... /dev/shm`, docker `--shm-size`).");
  }
  out.push_back(std::move(f));
}

void InodeRule(const MountFacts& m, const Thresholds& t, std::vector<Finding>& out) {
  if (!m.inodes_total || !m.inodes_free || *m.inodes_total == 0) return;
  const char* id = "host.disk.inodes";
  uint64_t used = *m.inodes_total - std::min(*m.inodes_free, *m.inodes_total);
  double pct = 100.0 * static_cast<double>(used) / static_cast<double>(*m.inodes_total);
  auto sev = GradeHigh(pct, t.Get(id, "warn_used_pct"), t.Get(id, "crit_used_pct"));
  if (!sev) return;
  Finding f = MakeFinding(id, *sev,
                          m.mount_point + " has used " + FormatDouble(pct) + "% of its inodes (" +
                              std::to_string(*m.inodes_free) + " free)");
  AddMount(f, m);
  f.Add("inodes_used_pct", pct).Add("inodes_free_count", *m.inodes_free);
  f.Add("inodes_total_count", *m.inodes_total);
  out.push_back(std::move(f));
}

void UnresponsiveRule(const MountFacts& m, std::vector<Finding>& out) {
  Finding f = MakeFinding("host.disk.unresponsive", Severity::kWarn,
                          m.mount_point + " (" + m.fs_type + ") did not answer statvfs in time");
  AddMount(f, m);
  f.Add("error", m.error);
  out.push_back(std::move(f));
}

}  // namespace

void DiskRules(const std::vector<MountFacts>& mounts, const Thresholds& t,
               std::vector<Finding>& out) {
  for (const MountFacts& m : mounts) {
    if (m.timed_out) {
      UnresponsiveRule(m, out);
      continue;
    }
    if (m.read_only || !m.error.empty()) continue;
    SpaceRule(m, t, out);
    InodeRule(m, t, out);
  }
}

void RequiredMountRules(const std::vector<RequiredMountFacts>& required,
                        std::vector<Finding>& out) {
  for (const RequiredMountFacts& r : required) {
    if (r.mounted) continue;
    Finding f = MakeFinding("host.mount.missing", Severity::kCrit,
                            r.mount_point + " is not mounted ([node] required_mounts)");
    f.subject = r.mount_point;
    f.Add("mount_point", r.mount_point).Add("source", "mount table");
    out.push_back(std::move(f));
  }
}

}  // namespace gpudoctor
