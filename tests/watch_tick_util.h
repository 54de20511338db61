// A synthetic TickResult for the HTTP / exporter / notifier tests: 2 GPUs with temperature,
// power, memory, clocks, throttle reasons and an Xid count, host points, one open finding.
#pragma once

#include <chrono>
#include <memory>

#include "metrics/metric_table.h"
#include "watch/watch_types.h"

namespace gpudoctor::testing {

inline TrackedFinding MakeTracked(const std::string& id, Severity sev, int gpu,
                                  FindingState state = FindingState::kOpen) {
  TrackedFinding t;
  t.last.id = id;
  t.last.layer = Layer::kHardware;
  t.last.severity = sev;
  t.last.summary = "summary of " + id;
  t.last.next_steps = {"step one", "step \"two\""};
  if (gpu >= 0) {
    GpuRef g;
    g.index = gpu;
    g.uuid = "GPU-" + std::to_string(gpu);
    g.pci_bus_id = "0000:3b:00." + std::to_string(gpu);
    g.serial = "SN" + std::to_string(gpu);
    t.last.gpu = g;
  }
  t.key = id + "/" + std::to_string(gpu);
  t.state = state;
  t.first_seen_ms = 1764000000000;
  t.opened_ms = state == FindingState::kPending ? 0 : 1764000060000;
  t.last_seen_ms = 1764000120000;
  if (state == FindingState::kResolved) t.resolved_ms = 1764000180000;
  return t;
}

inline std::shared_ptr<TickResult> MakeTick(int64_t unix_ms = 0) {
  auto t = std::make_shared<TickResult>();
  t->tick = 7;
  t->unix_ms = unix_ms ? unix_ms
                       : std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  Snapshot& s = t->report.snapshot;
  s.hostname = "node1";
  s.time = std::chrono::system_clock::now();
  for (int i = 0; i < 2; ++i) {
    GpuFacts g;
    g.index = i;
    g.uuid = "GPU-" + std::to_string(i);
    g.name = "NVIDIA H100 80GB HBM3";
    g.pci_bus_id = "0000:3b:00." + std::to_string(i);
    g.serial = "SN" + std::to_string(i);
    g.temp_c = 60 + i;
    g.power_mw = 250000;
    g.memory_used_bytes = uint64_t{1} << 30;
    g.memory_total_bytes = uint64_t{80} << 30;
    g.sm_clock_mhz = 1980;
    g.memory_clock_mhz = 2619;
    g.util_gpu_pct = 50;
    g.pcie_gen = 5;
    g.pcie_width = 16;
    s.gpu.gpus.push_back(g);
  }
  s.probes.push_back({"nvml", Layer::kHardware, ProbeState::kOk, "", 12.5});
  s.probes.push_back({"disk", Layer::kResources, ProbeState::kFailed, "io error", 3});
  t->points = FlattenSnapshot(s);
  t->points.push_back({&kGpuXidErrorsTotal, 1, {{"xid", "79"}}, 2});
  t->points.push_back({&kGpuXidErrorsTotal, 1, {{"xid", "13"}}, 1});
  t->findings.push_back(MakeTracked("gpu.ecc.dbe", Severity::kCrit, 1));
  t->findings.push_back(MakeTracked("host.disk.full", Severity::kWarn, -1));
  t->findings.back().last.subject = "/var \"log\"";
  t->findings.push_back(MakeTracked("gpu.thermal", Severity::kWarn, 0, FindingState::kPending));
  t->findings.push_back(MakeTracked("gpu.pcie", Severity::kWarn, 0, FindingState::kResolved));
  return t;
}

}  // namespace gpudoctor::testing
