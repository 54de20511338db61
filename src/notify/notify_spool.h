// The notification spool: deliveries that SIGTERM cut short (NotifierHub::Shutdown), kept in one
// small file beside the history database (DB + ".notify-spool") and handed back to the notifiers
// at the next start (NotifierHub::Requeue). It holds rendered payloads and placeholder values,
// never a notifier's URL or argv (the fingerprint names the notifier).
//
// Written atomically (a temporary file created O_CREAT|O_EXCL|O_NOFOLLOW mode 0600, fsync,
// rename), so a crash leaves the old spool or the new one, and a symlink planted in the state
// directory is never followed. At most kMaxSpooled entries and kMaxSpoolBytes: the newest that
// fit are kept, the oldest dropped.
// Not thread-safe (shutdown and start, main thread).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"
#include "notify/notifier.h"

namespace gpudoctor {

inline constexpr size_t kMaxSpooled = 1024;
inline constexpr size_t kMaxSpoolBytes = size_t{4} << 20;

std::string NotifySpoolPath(const std::string& db_path);

// Replaces the spool with `pending`; an empty list removes it.
Status WriteNotifySpool(const std::string& path, const std::vector<PendingDelivery>& pending);

// Reads the spool and removes it. A missing spool is an empty list; a symlink, a file that is
// not ours (not a regular file) or one that does not parse is an error (and is left alone, or,
// when it does not parse, removed so it cannot block every start).
Result<std::vector<PendingDelivery>> TakeNotifySpool(const std::string& path);

}  // namespace gpudoctor
