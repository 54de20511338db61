// `gpudoctor probes`: the registry, with what each probe reads and whether it is on.
#include <cstdio>

#include "cli/commands.h"
#include "probes/registry.h"

namespace gpudoctor {

int ProbesCommand(const CliOptions& o) {
  auto settings = BuildSettings(o);
  if (!settings.ok()) return CouldNotRun(settings.status().message());
  auto enabled = EnabledProbes(**settings);
  for (const auto& p : ProbeRegistry()) {
    bool on = false;
    for (const auto* e : enabled) on = on || e == &p;
    std::printf("%-14s %-9s %-3s %-4s %s\n", std::string(p.name).c_str(), LayerName(p.layer),
                on ? "on" : "off", p.cadence == Cadence::kFast ? "fast" : "slow",
                std::string(p.description).c_str());
  }
  return 0;
}

}  // namespace gpudoctor
