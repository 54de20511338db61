// Parser for /proc/mounts (= /proc/PID/mounts; fstab(5) format, one mount per line):
//   <device> <mount point> <fs type> <options> <dump> <pass>
// Spaces, tabs, newlines and backslashes inside fields are octal-escaped by the kernel (\040,
// \011, \012, \134); they are decoded. Pure functions; thread-safe.
//
// Also the policy of which mounts the disk probe looks at (MountIsChecked) and when two entries
// are the same filesystem (MountIdentity), kept here so that both are tested on literal input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

struct MountEntry {
  std::string device;
  std::string mount_point;
  std::string fs_type;
  std::string options;     // comma-separated, as printed
  bool read_only = false;  // "ro" among the options
};

// Decodes the kernel's \ooo escapes; a backslash not followed by three octal digits is kept.
std::string UnescapeMountField(std::string_view field);

// Lines with fewer than 4 fields, or with an empty or relative mount point, are skipped and
// counted in *skipped_lines (when not null): a garbled line never hides the others.
// Errors: parse_error only when the text has no valid line at all.
Result<std::vector<MountEntry>> ParseMounts(std::string_view text, int* skipped_lines = nullptr);

// Parser for /proc/PID/mountinfo (proc(5)), one mount per line:
//   <id> <parent> <major:minor> <root> <mount point> <mount options> [<optional>...] - <fs type>
//   <source> <super options>
// Fields are octal-escaped like /proc/mounts. Read-only when "ro" is among the mount options or
// the super options. Same skipping and errors as ParseMounts (a line without the " - "
// separator or with fewer fields is skipped).
Result<std::vector<MountEntry>> ParseMountInfo(std::string_view text, int* skipped_lines = nullptr);

// True for a filesystem whose fullness matters to jobs on the host:
// - disk, network (nfs, cifs, lustre, gpfs, beegfs, ceph, ...) and FUSE filesystems;
// - tmpfs on /dev/shm (data loaders' shared memory: a full /dev/shm kills PyTorch loaders with
//   "bus error") and tmpfs elsewhere (/tmp, job scratch), except runtime tmpfs under /run, /dev,
//   /sys, /proc and container-runtime state (tiny, sized by systemd, never the bottleneck);
// - overlay only when it is the root "/" (inside a container); container layers elsewhere live
//   on the filesystem that holds /var/lib/docker etc., which is checked itself.
// False for pseudo filesystems (proc, sysfs, cgroup, devpts, debugfs, ...), read-only images
// (squashfs: snaps, erofs, iso9660), helper FUSE filesystems (lxcfs, gvfs, portals, snapfuse),
// and anything mounted strictly below container-runtime or kubelet directories (a dedicated disk
// at /var/lib/docker itself is checked).
bool MountIsChecked(const MountEntry& m);

// Key under which bind mounts of the same filesystem collapse to one: the device for block
// devices ("/dev/...") and network exports ("host:/path", "//host/share"); empty (never
// deduplicated) for names that are not identities ("tmpfs", "overlay", "none", ...).
std::string MountIdentity(const MountEntry& m);

// Filters with MountIsChecked and collapses entries with equal MountIdentity, keeping the one
// with the shortest mount point ("/" before "/var/lib/kubelet/..."); of several mounts on one
// point only the last (visible) one is kept. Order: as in the input.
std::vector<MountEntry> SelectMountsToCheck(const std::vector<MountEntry>& all);

}  // namespace gpudoctor
