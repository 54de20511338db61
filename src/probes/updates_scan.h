// Pending OS security updates from the package manager's local state; no network, ever.
//
// apt (chosen over `apt list --upgradable`): the lists apt last fetched,
// <rootfs>/var/lib/apt/lists/*_Packages of every suite whose Release/InRelease names a security
// suite (Suite/Codename or file name containing "security"), against the installed versions in
// <rootfs>/var/lib/dpkg/status, compared with dpkg's version order. Reading the files works on a
// fixture root and inside a container looking at the host (--path.rootfs), needs no apt binary,
// cannot take apt's lock or hang on it, and tells which suite offers the update and how old its
// list is (Release Date). `apt list --upgradable` would not say which upgrades are security ones.
// dnf/yum (no apt lists, rootfs "/" only): `dnf -C -q updateinfo list --security` (cache only,
// never the network) under a deadline; the age is not known there.
// Bounds: Packages files up to 64 MiB each, dpkg status up to 32 MiB, 64 lists; stops at the
// deadline (the facts then say "not checked"). Thread-compatible.
#pragma once

#include <string_view>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "facts/upkeep_facts.h"

namespace gpudoctor {

inline constexpr size_t kMaxPendingListed = 50;

UpdateFacts ScanSecurityUpdates(const RootFs& fs, TimePoint deadline);

// What ScanSecurityUpdates's answer depends on, for `watch` to rescan only when it moved: the
// modification times and sizes of dpkg's status file and of the apt lists directory (apt
// replaces a list by renaming into it, which changes the directory's mtime). "" when either is
// not there (dnf, no package state): no memo, always scan.
std::string UpdatesStateKey(const RootFs& fs);

// The exact identity of every file the apt answer of ScanSecurityUpdates is read from: one line
// per file, "<path under the root> <size> <mtime ns> <ctime ns> <inode> <device>", for every
// Release/InRelease and *_Packages[.*] list in the lists directory (sorted by name) and dpkg's
// status file. Any change of any input (rewritten, replaced by rename, added, removed, chmod)
// changes it. "" when there is no apt state (dnf or nothing), when an input cannot be stat'ed,
// or a name has a byte outside printable ASCII: then there is nothing to key a cached answer
// on (probes/updates_cache.h).
std::string UpdatesInputIdentity(const RootFs& fs);

// `dnf updateinfo list --security` lines ("FEDORA-2024-1a2b Important/Sec. openssl-1:3.0.9-
// 2.fc38.x86_64") into facts (pending_count, pending names). Pure; outside input.
void ParseDnfSecurityList(std::string_view text, UpdateFacts& facts);

}  // namespace gpudoctor
