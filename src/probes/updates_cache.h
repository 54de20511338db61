// The pending-security-updates answer of `check`, kept on disk between runs: reading and parsing
// the apt lists and dpkg's status (decompressing a 2.5 MB security list, parsing 0.8 MB of
// status) was about a tenth of a default check's CPU, for an answer that only changes when apt
// or dpkg rewrite a file (docs/cost.md). The answer is stored with the exact identity of every
// input (UpdatesInputIdentity: path, size, mtime and ctime in ns, inode, device) and used only
// while every input still has that identity; an unchanged host costs a directory listing and a
// few stats.
//
// Where: <rootfs>/var/cache/gpudoctor/security-updates. The directory is created (0700) only on
// the host's own root (--path.rootfs "/"); under another root the cache is used only when the
// directory is already there (a fixture tree is never written to). Safety, for a tool run as
// root: the directory must be a real directory (O_NOFOLLOW) owned by the effective user and
// writable by no one else, the file a regular file (O_NOFOLLOW, non-blocking open) owned by the
// effective user with mode 0600 or stricter and at most kMaxUpdatesCacheBytes; it is written to
// a fresh file (O_CREAT|O_EXCL, 0600) and renamed over the old one, so a reader never sees half
// a file. Anything else (unwritable, not ours, a link, corrupt, truncated, another version, any
// field out of range, a checksum mismatch, another identity) is ignored: the lists are scanned
// as without a cache, and the cache rewritten when possible. A cached answer is therefore always
// the answer of a complete scan of exactly these inputs. Only complete answers are stored (the
// scan checked the state, with no note: not cut by the deadline, every list read).
// Thread-compatible (two processes racing write whole files; the last rename wins).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "facts/upkeep_facts.h"

namespace gpudoctor {

inline constexpr size_t kMaxUpdatesCacheBytes = 256 << 10;
inline constexpr const char* kUpdatesCacheDir = "/var/cache/gpudoctor";
inline constexpr const char* kUpdatesCacheFile = "security-updates";

// What the cache did for one call (tests and debugging).
enum class UpdatesCacheUse {
  kOff,     // no identity (no apt state) or no usable cache directory: scanned
  kHit,     // answered from the cache
  kStored,  // missing, stale or invalid: scanned and the answer stored
  kMissed,  // missing, stale or invalid: scanned, nothing stored (incomplete answer, write failed)
};

// The file's text for `facts` read from inputs with `identity`. Pure.
std::string SerializeUpdatesCache(std::string_view identity, const UpdateFacts& facts);
// The facts of a cache file's text when it is well formed, its checksum matches and it was
// written for exactly `identity`; nullopt otherwise (never a partial answer). Pure; outside
// input (fuzzed: tests/fuzz/updates_cache_fuzz.cc).
std::optional<UpdateFacts> ParseUpdatesCache(std::string_view text, std::string_view identity);

// ScanSecurityUpdates (probes/updates_scan.h) through the cache described above.
UpdateFacts ScanSecurityUpdatesCached(const RootFs& fs, TimePoint deadline,
                                      UpdatesCacheUse* use = nullptr);

}  // namespace gpudoctor
