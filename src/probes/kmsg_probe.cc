// Kernel-log probe. Source: --kmsg-file PATH|- when given, else /dev/kmsg (RootPath, current boot,
// non-blocking) and, when that cannot be opened, the systemd journal's kernel entries of the
// current boot (libsystemd via dlopen; live root only). Units: see KernelLogFacts (µs times).
// Failure modes: no readable source → skipped with both reasons (never a fault); a given file
// that cannot be read → failed; reading stops at a deadline (marked in the facts).
// References: shared/reference/xid.md, signals.md §10-§13.
#include <algorithm>

#include "kmsg/live_sources.h"
#include "kmsg/log_scanner.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

struct KmsgCarry : ProbeCarry {
  std::shared_ptr<KmsgTail> tail;
};

}  // namespace

ProbeOutput RunKmsgProbe(const ProbeContext& ctx) {
  const Settings& s = *ctx.settings;
  KernelLogScanOptions options;
  if (s.kmsg_since_unix_s) options.since_wall_us = *s.kmsg_since_unix_s * 1000000;
  // Leave the runner time to apply the facts: stop reading well before the check's deadline.
  LiveReadLimits limits;
  limits.deadline = std::min(ctx.deadline - std::chrono::milliseconds(300),
                             SteadyClock::now() + std::chrono::seconds(5));

  if (!s.kmsg_file.empty()) {
    auto facts = ScanLogPath(s.kmsg_file, options, limits.deadline);
    if (!facts.ok()) return ProbeFailed(facts.status().ToString());
    return ProbeOk([f = std::move(*facts)](Snapshot& snap) { snap.kernel = f; });
  }

  options.current_boot_only = true;
  options.boot_wall_us = BootWallTimeUs();
  std::string reasons;
  if (ctx.continuous && (s.kmsg_source == "auto" || s.kmsg_source == "kmsg")) {
    // watch: /dev/kmsg stays open; each run reads only what arrived since the last.
    auto carry = std::dynamic_pointer_cast<KmsgCarry>(ctx.previous);
    if (carry == nullptr) {
      carry = std::make_shared<KmsgCarry>();
      carry->tail = std::make_shared<KmsgTail>(ctx.fs().RootPath("/dev/kmsg"), options);
    }
    auto facts = carry->tail->Poll(limits);
    if (facts.ok()) {
      ProbeOutput out = ProbeOk([f = std::move(*facts)](Snapshot& snap) { snap.kernel = f; });
      out.next = std::move(carry);
      return out;
    }
    reasons = "kmsg: " + facts.status().ToString();
  } else if (s.kmsg_source == "auto" || s.kmsg_source == "kmsg") {
    KernelLogScanner scanner(options);
    Status st = ReadKmsg(ctx.fs().RootPath("/dev/kmsg"), scanner, limits);
    if (st.ok()) {
      return ProbeOk([f = scanner.Finish()](Snapshot& snap) { snap.kernel = f; });
    }
    reasons = "kmsg: " + st.ToString();
  }
  if (s.kmsg_source == "auto" || s.kmsg_source == "journal") {
    if (ctx.fs().rootfs() != "/") {
      reasons += std::string(reasons.empty() ? "" : "; ") +
                 "journal: only read on the live root (--path.rootfs is set)";
    } else {
      KernelLogScanner scanner(options);
      Status st = ReadJournal(scanner, limits);
      if (st.ok() && scanner.facts().records_read > 0) {
        return ProbeOk([f = scanner.Finish()](Snapshot& snap) { snap.kernel = f; });
      }
      // An open journal with no kernel entry of this boot is what a user outside the
      // systemd-journal/adm groups sees: nothing was read, so nothing can be said.
      reasons += std::string(reasons.empty() ? "" : "; ") + "journal: " +
                 (st.ok() ? "no kernel entries of this boot readable (run as root or in the "
                            "systemd-journal group)"
                          : st.ToString());
    }
  }
  return ProbeSkipped(reasons.empty() ? "no kernel log source selected" : reasons);
}

}  // namespace gpudoctor
