// Slurm HealthCheckProgram mode (`gpudoctor check --slurm`), the NHC contract:
//  - healthy (no finding whose action takes the node out, TakesNodeOutOfService): silent, exit 0;
//    if the node is drained with the reason that our drain record (sched/slurm_record.h, in the
//    state directory) says gpudoctor set, resume it (`scontrol update nodename=N state=resume`)
//    and remove the record. A drain set by anyone else is never touched, even one whose reason
//    starts with "gpudoctor:" (no record, a corrupt one, or another reason: one stderr line says
//    so). A record left from a drain an admin already resumed by hand is removed.
//  - a finding that needs the node out (reset_gpu, reboot, drain_reset, inspect_hardware on a
//    warn or crit finding): drain the node once: `scontrol update nodename=N state=drain
//    reason="gpudoctor: <id> <gpu> ..."` (reason at most 255 bytes); a node already drained by
//    someone else keeps that drain and reason; exit 2 with one line on stderr. The record is
//    written (atomically) before the drain; a record that cannot be written leaves the node
//    drained and says it will not be resumed automatically.
//  - dry_run (`--slurm-dry-run`, for NHC's check_gpudoctor): the same decision, no scontrol and
//    no record: the reason that would be set goes to stdout, exit 2 (0 healthy, 3 could not run).
//  - gpudoctor itself could not run: no drain (a broken tool must not empty a cluster) unless
//    drain_on_tool_failure; exit 3.
// scontrol runs with a timeout (never hangs the health check; Slurm kills it after 60 s).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "findings/finding.h"

namespace gpudoctor {

struct SlurmOptions {
  std::string node;  // Slurm NodeName
  std::string scontrol = "scontrol";
  bool drain_on_tool_failure = false;
  double timeout_s = 10;
  std::string state_dir = "/var/lib/gpudoctor";  // where the drain record lives
  bool dry_run = false;
  int64_t now_unix_s = 0;  // drained_at of a new record
};

struct SlurmNodeState {
  bool known = false;
  std::string state;   // "IDLE+DRAIN", "MIXED", ...
  std::string reason;  // without the trailing " [user@time]"
  bool drained() const { return state.find("DRAIN") != std::string::npos; }
  // The reason has our prefix. Not proof that we set it: the drain record is.
  bool has_our_prefix() const { return reason.rfind("gpudoctor:", 0) == 0; }
};

inline constexpr size_t kSlurmReasonMax = 255;

// "gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0; gpu.xid GPU3 ... (+2 more)", <= 255 bytes, no
// newlines or double quotes.
std::string SlurmReason(const std::vector<Finding>& findings);

// Parses `scontrol show node -o NAME` output.
SlurmNodeState ParseSlurmNode(const std::string& text);

struct SlurmOutcome {
  // "none", "drain", "resume", "keep_foreign_drain", "would_drain" (dry run), "error"
  std::string action;
  std::string message;      // one line for stderr ("" when silent)
  std::string stdout_line;  // dry run: the reason a drain would set ("" when healthy)
  int exit_code = 0;
};

// tool_error non-empty = gpudoctor could not run (findings are then ignored).
SlurmOutcome RunSlurmMode(const std::vector<Finding>& findings, const std::string& tool_error,
                          const SlurmOptions& options);

}  // namespace gpudoctor
