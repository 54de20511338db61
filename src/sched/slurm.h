// Slurm HealthCheckProgram mode (`gpudoctor check --slurm`), the NHC contract:
//  - healthy (no finding whose action takes the node out, TakesNodeOutOfService): silent, exit 0;
//  if the node is drained with a reason that
//    gpudoctor set ("gpudoctor: ..."), resume it (`scontrol update nodename=N state=resume`).
//    A drain set by anyone else is never touched.
//  - a finding that needs the node out (reset_gpu, reboot, drain_reset, inspect_hardware on a
//    warn or crit finding): drain the node once: `scontrol update nodename=N state=drain
//    reason="gpudoctor: <id> <gpu> ..."` (reason at most 255 bytes); a node already drained by
//    someone else keeps that drain and reason; exit 2 with one line on stderr.
//  - gpudoctor itself could not run: no drain (a broken tool must not empty a cluster) unless
//    drain_on_tool_failure; exit 3.
// scontrol runs with a timeout (never hangs the health check; Slurm kills it after 60 s).
#pragma once

#include <string>
#include <vector>

#include "findings/finding.h"

namespace gpudoctor {

struct SlurmOptions {
  std::string node;  // Slurm NodeName
  std::string scontrol = "scontrol";
  bool drain_on_tool_failure = false;
  double timeout_s = 10;
};

struct SlurmNodeState {
  bool known = false;
  std::string state;   // "IDLE+DRAIN", "MIXED", ...
  std::string reason;  // without the trailing " [user@time]"
  bool drained() const { return state.find("DRAIN") != std::string::npos; }
  bool ours() const { return reason.rfind("gpudoctor:", 0) == 0; }
};

inline constexpr size_t kSlurmReasonMax = 255;

// "gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0; gpu.xid GPU3 ... (+2 more)", <= 255 bytes, no
// newlines or double quotes.
std::string SlurmReason(const std::vector<Finding>& findings);

// Parses `scontrol show node -o NAME` output.
SlurmNodeState ParseSlurmNode(const std::string& text);

struct SlurmOutcome {
  std::string action;   // "none", "drain", "resume", "keep_foreign_drain", "error"
  std::string message;  // one line for stderr ("" when silent)
  int exit_code = 0;
};

// tool_error non-empty = gpudoctor could not run (findings are then ignored).
SlurmOutcome RunSlurmMode(const std::vector<Finding>& findings, const std::string& tool_error,
                          const SlurmOptions& options);

}  // namespace gpudoctor
