// Runs a program (argv, no shell) with a timeout and captures its stdout and stderr (each at
// most `max_output` bytes, 64 KiB by default; the rest is read and dropped). The child is killed
// (SIGKILL, whole process group) when the timeout passes; the call never waits longer than timeout
// + 1 s. Used for scontrol (Slurm), ipmitool (thermal probe), nvidia-smi and nvidia-bug-report.sh
// (bundle). Thread-compatible.
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

// Errors: not_found (program missing), timeout, io_error (fork/pipe failed).
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, double timeout_s,
                                 size_t max_output = 64 * 1024);

}  // namespace gpudoctor
