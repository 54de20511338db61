// Exporter: renders one published tick as the Prometheus text exposition format (version 0.0.4)
// for GET /metrics. Pure function of the tick: never probes, never blocks, thread-safe.
//
// Families come in AllMetrics() order, each with one # HELP and one # TYPE line, followed by its
// samples. Identity labels: `hostname` on every sample; GPU samples add `gpu` (NVML index),
// `uuid`, `pci_bus_id`, `model`; then the point's own labels (reason, xid, nic, target, mount...).
// Every open TrackedFinding becomes gpudoctor_finding_active{id,severity,layer,action,gpu,...} 1
// (its HELP/TYPE are always written, so absent() works with no finding open), and
// gpudoctor_finding_severity / _acknowledged / _silenced {id,layer,gpu,...}: the same identity
// without severity and action, which change while a finding stays open. gpudoctor_build_info,
// gpudoctor_last_tick_timestamp_seconds (the tick's start) and gpudoctor_tick_interval_seconds
// tell a stuck daemon (old tick, up == 1) from a dead one. With dcgm_compat the
// GPU facts that have a dcgm-exporter twin are written again under the DCGM_FI_* name in
// dcgm-exporter's unit (MetricInfo::dcgm_scale) and labels gpu, UUID, device ("nvidiaN"),
// modelName, Hostname, pci_bus_id; DCGM_FI_DEV_XID_ERRORS is the code of the GPU's
// last Xid (0 when none), as dcgm-exporter's gauge; without watch tallies, the highest code seen.
#pragma once

#include <string>

#include "watch/watch_types.h"

namespace gpudoctor {

struct ExporterOptions {
  bool dcgm_compat = false;
  std::string hostname;   // empty: the snapshot's hostname
  double interval_s = 0;  // the daemon's tick interval; 0: gpudoctor_tick_interval_seconds left out
};

std::string RenderMetrics(const TickResult& tick, const ExporterOptions& options);

// Prometheus escaping: label values escape backslash, double quote and newline, and every byte
// that is not part of well-formed UTF-8 becomes U+FFFD (Prometheus rejects the whole scrape for
// one such value); HELP text escapes backslash and newline (our own texts, always UTF-8).
std::string EscapeLabelValue(std::string_view v);
std::string EscapeHelp(std::string_view v);
// A sample value: integers without exponent, else shortest round-trip; NaN, +Inf, -Inf.
std::string FormatSampleValue(double v);
// A bus id in DCGM's spelling, 8-digit domain and upper case: "0000:2a:00.0" ->
// "00000000:2A:00.0" (a bus id without domain gets domain 0); "" stays "".
std::string DcgmBusId(std::string_view bus_id);

}  // namespace gpudoctor

namespace gpudoctor {
// docs/metrics.md: every metric of AllMetrics() with type, labels, help and dcgm-exporter twin
// (a unit test keeps the file in sync; GPUDOCTOR_UPDATE_GOLDEN=1 rewrites it).
std::string MetricsMarkdown();
}  // namespace gpudoctor
