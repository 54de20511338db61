// Runs a program (argv, no shell) with a timeout and captures its stdout and stderr (each at
// most 64 KiB). The child is killed (SIGKILL, whole process group) when the timeout passes;
// the call never waits longer than timeout + 1 s. Used for scontrol. Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

struct ProcessResult {
  int exit_code = -1;  // -1: killed or did not exit normally
  std::string out, err;
};

// Errors: not_found (program missing), timeout, io_error (fork/pipe failed).
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, double timeout_s);

}  // namespace gpudoctor
