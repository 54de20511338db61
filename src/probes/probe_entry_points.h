// Probe entry points, one per file in src/probes/, declared once: the registry (registry.cc)
// lists them, each probe file defines its own, and tests call them directly on fixture trees.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "probes/probe.h"

namespace gpudoctor {

ProbeOutput RunCpuProbe(const ProbeContext& ctx);
ProbeOutput RunNvmlProbe(const ProbeContext& ctx);
ProbeOutput RunPciGpuProbe(const ProbeContext& ctx);
// Network layer.
ProbeOutput RunReachabilityProbe(const ProbeContext& ctx);
// The reachability probe's output for the facts it gathered: skipped (with the facts) when the
// only host is the implicit gateway and it was inconclusive, else ok.
ProbeOutput ReachabilityOutput(ReachabilityFacts facts);
ProbeOutput RunNicProbe(const ProbeContext& ctx);
ProbeOutput RunInfinibandProbe(const ProbeContext& ctx);
ProbeOutput RunSocketsProbe(const ProbeContext& ctx);
ProbeOutput RunSuspiciousProbe(const ProbeContext& ctx);
ProbeOutput RunMemoryProbe(const ProbeContext& ctx);
ProbeOutput RunPressureProbe(const ProbeContext& ctx);
ProbeOutput RunDiskProbe(const ProbeContext& ctx);
ProbeOutput RunProcessProbe(const ProbeContext& ctx);
// Under watch, how long one scan of every task serves the processes probe (process_probe.cc):
// the proc.dstate threshold min_stuck_s less one tick (watch_interval_s), at least one tick, at
// most 10 s. So a task that enters D just after a scan is found by the next scan before its
// stuck time can reach min_stuck_s.
SteadyClock::duration ProcessRescanEvery(const Settings& settings);
// The catalogue's default proc.dstate min_stuck_s, seconds (used when no override is set).
extern const double kDefaultProcDstateMinStuckS;
ProbeOutput RunKmsgProbe(const ProbeContext& ctx);
// Upkeep.
ProbeOutput RunThermalProbe(const ProbeContext& ctx);
ProbeOutput RunBootProbe(const ProbeContext& ctx);
ProbeOutput RunBackupProbe(const ProbeContext& ctx);
// The backup probe's reading of its [backup] command's first line: unix seconds (a fraction is
// dropped) or RFC 3339; nullopt for anything else (outside input).
std::optional<int64_t> ParseBackupTime(std::string_view text);
// Jobs' own speed ([[job]]).
ProbeOutput RunJobProbe(const ProbeContext& ctx);
// Inference servers' own metrics ([[inference]], local listeners of known engines).
ProbeOutput RunInferenceProbe(const ProbeContext& ctx);

}  // namespace gpudoctor
