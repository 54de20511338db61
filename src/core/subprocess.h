// Runs a program (argv, no shell) with a timeout and captures its stdout and stderr (each at
// most `max_output` bytes, 64 KiB by default; the rest is read and dropped). The child is killed
// (SIGKILL, whole process group) when the timeout passes; the call never waits longer than timeout
// + 1 s, even for a child that cannot die (stuck in the kernel on a hung mount: it is left to a
// reaper thread) or an exec that never returns. The child starts with no signal blocked and
// SIGPIPE at its default, whatever the caller blocked (watch blocks SIGTERM/SIGHUP for its signal
// thread): systemd's SIGTERM and a `timeout` inside it still work. Used for scontrol (Slurm),
// ipmitool (thermal probe), nvidia-smi and nvidia-bug-report.sh (bundle). Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

struct ProcessResult {
  int exit_code = -1;  // -1: killed or did not exit normally
  std::string out, err;
  bool out_truncated = false, err_truncated = false;  // more than max_output was written
};

// After SIGKILL to `pid` (a child of this process): waits for it up to 1 s; a child that is still
// there (in uninterruptible sleep: killed, it dies when the kernel lets go) is handed to a
// detached thread that reaps it whenever it does, so the caller never blocks and no zombie is
// left for good. True when it was reaped here (`*status` set). Thread-safe.
bool ReapKilledChild(int pid, int* status);

// Errors: not_found (program missing), timeout, io_error (fork/pipe failed).
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, double timeout_s,
                                 size_t max_output = 64 * 1024);

}  // namespace gpudoctor
