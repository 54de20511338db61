// The members of a `gpudoctor bundle` (support archive): everything someone away from the machine
// needs to judge it, built from one fresh check, the history database (read-only, when present)
// and the config in effect. Secrets never enter a member: config.toml is redacted
// (bundle/redact.h) and every member has the explicit secrets (the bearer token) replaced.
//
//   report.json report.txt    the check, as `check --json` / `check`
//   kernel.json               kernel-log accounting, its events and the findings drawn from it
//   probes.json               every registry probe: enabled, cadence, this run's status
//   versions.txt              gpudoctor, driver/NVML/CUDA, kernel release, os-release
//   config.toml               the config file in effect, redacted (or a note: defaults + flags)
//   history/findings.json     finding episodes of the last `history_s` (when the db exists)
//   history/events.json       events (Xids, reboots, notifications) of the same window
//   history/metrics.json      key series (GPU temp, power, util, memory, ECC, Xid; host CPU, mem)
//   nvidia/nvidia-smi-q.txt   `nvidia-smi -q` (live host, when installed; attachments)
//   nvidia/nvidia-bug-report.log.gz  NVIDIA's own support report (idem)
//   kernel-tail.txt           the raw tail of the kernel log (idem)
//   MANIFEST.txt              what is in the bundle, sizes, notes ("no history: ...")
//
// Pure apart from reading the database and the files named in the inputs (through RootFs);
// thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/settings.h"
#include "report/report.h"

namespace gpudoctor {

struct BundleMember {
  std::string name;
  std::string content;
};

struct BundleInputs {
  const Report* report = nullptr;
  const Settings* settings = nullptr;
  std::string version;      // gpudoctor's own
  std::string config_path;  // the file that was applied; empty: none
  std::string config_text;  // its content (redacted here)
  std::string db_path;      // empty or missing: "no history"
  int64_t now_unix_s = 0;
  int64_t history_s = 24 * 3600;
  std::vector<std::string> secrets;  // replaced in every member (the bearer token)
  std::vector<std::string> notes;    // added to MANIFEST.txt
  // Collected by the caller (cli/bundle_tools.h). Text members are redacted like the others;
  // a ".gz" member is kept byte for byte (compressed: nothing to redact in it).
  std::vector<BundleMember> attachments;
};

// The metrics history/metrics.json carries (all GPUs and the host).
const std::vector<std::string>& BundleHistoryMetrics();

// Every member, MANIFEST.txt last.
std::vector<BundleMember> BuildBundleMembers(const BundleInputs& in);

// "gpudoctor-bundle-HOST-20261203T090500Z.tar.gz" (HOST reduced to [A-Za-z0-9._-]).
std::string DefaultBundleName(const std::string& hostname, int64_t unix_s);

}  // namespace gpudoctor
