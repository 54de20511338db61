// Settings: everything a check needs to know, from defaults, the config file and flags (in that
// order of precedence, flags last). Built once per command, then shared read-only with probe
// workers through std::shared_ptr<const Settings> (an abandoned worker may outlive the caller).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/root_fs.h"
#include "rules/thresholds.h"

namespace gpudoctor {

struct Settings {
  RootFs fs;
  double deadline_s = 10;  // whole check; `check` returns within deadline + 1 s
  int sample_ms = 250;     // window for rates (CPU, swap, NIC throughput, ...)
  std::map<std::string, bool, std::less<>> probe_enabled;  // overrides of the registry default
  std::vector<std::string> only_probes;  // --probes: when non-empty, run exactly these
  Thresholds thresholds;
  // Kernel log (kmsg probe, `gpudoctor logs`; issue 4).
  std::string kmsg_file;                     // --kmsg-file PATH or "-": scan it, not live sources
  std::string kmsg_source = "auto";          // auto (kmsg, then journal) | kmsg | journal
  std::optional<int64_t> kmsg_since_unix_s;  // --since: ignore older lines (those with a time)
};

}  // namespace gpudoctor
