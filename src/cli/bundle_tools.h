// What NVIDIA support asks for first, collected for `gpudoctor bundle`: `nvidia-smi -q` and
// `nvidia-bug-report.sh`'s report (on the live host only: --path.rootfs "/"; each run without a
// shell, killed after `tool_timeout_s`, its output bounded) and the raw tail of the kernel log
// (RootPath("/dev/kmsg"): the ring read non-blocking, or a regular file's end). What could not
// be collected becomes a note for MANIFEST.txt, never an error. Not thread-safe (runs children).
#pragma once

#include <string>
#include <vector>

#include "bundle/bundle.h"
#include "core/deadline.h"
#include "core/settings.h"

namespace gpudoctor {

struct BundleToolOptions {
  double tool_timeout_s = 120;  // each tool; 0: the tools are not run
  size_t max_smi_bytes = 8u << 20;
  size_t max_bug_report_bytes = 64u << 20;
  size_t kernel_tail_bytes = 256u << 10;
};

// Appends nvidia/nvidia-smi-q.txt, nvidia/nvidia-bug-report.log.gz and kernel-tail.txt to
// `members` as far as they can be had; why not, to `notes`.
void CollectBundleAttachments(const Settings& settings, const BundleToolOptions& options,
                              std::vector<BundleMember>& members, std::vector<std::string>& notes);

// The last `max_bytes` of the kernel log at `path` as "[   12.345678] message" lines: a kmsg
// device's records (read until it has no more, or until `deadline`), or a text file's end.
// Errors: as the open or read (not_found, permission_denied, io_error).
Result<std::string> KernelLogTail(const std::string& path, size_t max_bytes, TimePoint deadline);

}  // namespace gpudoctor
