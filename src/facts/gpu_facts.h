// Facts of the GPU layer: NVML devices, driver versions, PCI cross-check (issue: GPU layer).
// Placeholder until that layer lands: the Snapshot already carries it, so rules, reports and
// probes of the layer plug in without touching the others.
#pragma once

namespace gpudoctor {

struct GpuLayerFacts {};

}  // namespace gpudoctor
