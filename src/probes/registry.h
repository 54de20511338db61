// The probe registry: the one explicit list of probes (registry.cc). Adding a probe = one .cc,
// one line in the list, one test, one fixture.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "probes/probe.h"

namespace gpudoctor {

const std::vector<ProbeSpec>& ProbeRegistry();
const ProbeSpec* FindProbe(std::string_view name);
// The slow-cadence probes, "reachability, sockets, ..." in registry order (config help, README).
std::string SlowProbeNames();
// Probes enabled by the registry default and the settings' overrides, in registry order.
// --probes applies before the on/off settings: a listed probe runs even if off by default.
std::vector<const ProbeSpec*> EnabledProbes(const Settings& settings);
// invalid_argument naming the first probe name in the settings that the registry lacks.
Status ValidateProbeNames(const Settings& settings);

}  // namespace gpudoctor
