#include "parsers/mounts.h"

#include <algorithm>
#include <array>
#include <map>

#include "core/strings.h"

namespace gpudoctor {
namespace {

bool IsOctal(char c) { return c >= '0' && c <= '7'; }

bool HasOption(std::string_view options, std::string_view opt) {
  for (std::string_view o : Split(options, ",")) {
    if (o == opt) return true;
  }
  return false;
}

// At or below `dir` ("/run" matches "/run" and "/run/user/1000", not "/running").
bool AtOrBelow(std::string_view path, std::string_view dir) {
  if (!StartsWith(path, dir)) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

constexpr std::array<std::string_view, 30> kPseudoTypes = {
    "proc",       "sysfs",     "devtmpfs",  "devpts",     "cgroup",          "cgroup2",
    "securityfs", "pstore",    "debugfs",   "tracefs",    "configfs",        "fusectl",
    "mqueue",     "hugetlbfs", "bpf",       "autofs",     "binfmt_misc",     "rpc_pipefs",
    "nsfs",       "efivarfs",  "selinuxfs", "ramfs",      "rootfs",          "nfsd",
    "squashfs",   "erofs",     "iso9660",   "fuse.lxcfs", "fuse.gvfsd-fuse", "fuse.portal"};

constexpr std::array<std::string_view, 3> kHelperFuseTypes = {
    "fuse.snapfuse", "fuse.xdg-document-portal", "fuse.gvfs-fuse-daemon"};

// Directories whose mounts belong to container runtimes or the kubelet (secrets, projected
// volumes, container rootfs layers). The filesystems behind them are checked where they are
// mounted on the host.
constexpr std::array<std::string_view, 9> kRuntimeDirs = {
    "/var/lib/docker",     "/var/lib/containers",
    "/var/lib/kubelet",    "/run/containerd",
    "/var/lib/containerd", "/run/k3s",
    "/var/snap",           "/snap",
    "/var/lib/lxcfs"};

// Top-level directories (below "/") whose tmpfs mounts are runtime state. These are paths in
// the mount table being compared, not files gpudoctor opens (that goes through RootFs).
constexpr std::array<std::string_view, 4> kRuntimeTmpfsTopDirs = {"run", "dev", "sys", "proc"};

}  // namespace

std::string UnescapeMountField(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && field.size() - i > 3 && IsOctal(field[i + 1]) &&
        IsOctal(field[i + 2]) && IsOctal(field[i + 3])) {
      int v = (field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0');
      if (v > 0 && v < 256) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

Result<std::vector<MountEntry>> ParseMounts(std::string_view text, int* skipped_lines) {
  std::vector<MountEntry> out;
  int skipped = 0;
  for (std::string_view line : SplitLines(text)) {
    if (Trim(line).empty()) continue;
    auto fields = Split(line, " \t");
    if (fields.size() < 4) {
      ++skipped;
      continue;
    }
    MountEntry m;
    m.device = UnescapeMountField(fields[0]);
    m.mount_point = UnescapeMountField(fields[1]);
    m.fs_type = UnescapeMountField(fields[2]);
    m.options = std::string(fields[3]);
    if (m.mount_point.empty() || m.mount_point[0] != '/' || m.fs_type.empty() ||
        m.mount_point.find('\0') != std::string::npos) {
      ++skipped;
      continue;
    }
    m.read_only = HasOption(m.options, "ro");
    out.push_back(std::move(m));
  }
  if (skipped_lines != nullptr) *skipped_lines = skipped;
  if (out.empty()) return ParseError("no valid mount line");
  return out;
}

Result<std::vector<MountEntry>> ParseMountInfo(std::string_view text, int* skipped_lines) {
  std::vector<MountEntry> out;
  int skipped = 0;
  for (std::string_view line : SplitLines(text)) {
    if (Trim(line).empty()) continue;
    auto fields = Split(line, " \t");
    // The optional fields end at a lone "-"; three fields follow it.
    size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (fields.size() < 7 || dash + 2 >= fields.size()) {
      ++skipped;
      continue;
    }
    MountEntry m;
    m.mount_point = UnescapeMountField(fields[4]);
    m.options = std::string(fields[5]);
    m.fs_type = UnescapeMountField(fields[dash + 1]);
    m.device = UnescapeMountField(fields[dash + 2]);
    if (m.mount_point.empty() || m.mount_point[0] != '/' || m.fs_type.empty() ||
        m.mount_point.find('\0') != std::string::npos) {
      ++skipped;
      continue;
    }
    std::string_view super_options = dash + 3 < fields.size() ? fields[dash + 3] : "";
    m.read_only = HasOption(m.options, "ro") || HasOption(super_options, "ro");
    out.push_back(std::move(m));
  }
  if (skipped_lines != nullptr) *skipped_lines = skipped;
  if (out.empty()) return ParseError("no valid mountinfo line");
  return out;
}

bool MountIsChecked(const MountEntry& m) {
  const std::string& type = m.fs_type;
  for (std::string_view t : kPseudoTypes) {
    if (type == t) return false;
  }
  for (std::string_view t : kHelperFuseTypes) {
    if (type == t) return false;
  }
  // Strictly below: /var/lib/docker on its own disk is checked, its overlay layers are not.
  for (std::string_view dir : kRuntimeDirs) {
    if (m.mount_point.size() > dir.size() && AtOrBelow(m.mount_point, dir)) return false;
  }
  if (type == "overlay") return m.mount_point == "/";
  if (type == "tmpfs") {
    if (m.mount_point == "/dev/shm") return true;
    for (std::string_view top : kRuntimeTmpfsTopDirs) {
      if (m.mount_point.size() > top.size() && m.mount_point[0] == '/' &&
          AtOrBelow(std::string_view(m.mount_point).substr(1), top)) {
        return false;
      }
    }
    return true;
  }
  return true;
}

std::string MountIdentity(const MountEntry& m) {
  const std::string& d = m.device;
  if (StartsWith(d, "/dev/") || StartsWith(d, "//")) return d;
  size_t colon = d.find(":/");
  if (colon != std::string::npos && colon > 0) return d;  // nfs "host:/export"
  return "";
}

std::vector<MountEntry> SelectMountsToCheck(const std::vector<MountEntry>& all) {
  std::vector<MountEntry> out;
  std::map<std::string, size_t> by_identity;  // identity -> index in out
  // A later mount on the same point hides the earlier one: only the visible one is checked.
  std::map<std::string_view, size_t> last_at_point;
  for (size_t i = 0; i < all.size(); ++i) last_at_point[all[i].mount_point] = i;
  for (size_t i = 0; i < all.size(); ++i) {
    const MountEntry& m = all[i];
    if (last_at_point[m.mount_point] != i || !MountIsChecked(m)) continue;
    std::string id = MountIdentity(m);
    if (!id.empty()) {
      auto it = by_identity.find(id);
      if (it != by_identity.end()) {
        if (m.mount_point.size() < out[it->second].mount_point.size()) out[it->second] = m;
        continue;
      }
      by_identity[id] = out.size();
    }
    out.push_back(m);
  }
  return out;
}

}  // namespace gpudoctor
