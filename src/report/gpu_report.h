// Report pieces of the GPU layer: the `gpus` array and `driver` object of `check --json`, and the
// one-line-per-GPU table of the text report. Facts that are unknown are left out of the JSON
// (never written as 0 or null). Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "facts/gpu_facts.h"
#include "findings/finding.h"

namespace gpudoctor {

// {"gpus":[{"index","uuid","serial","pci_bus_id","name",...}], "driver":{...},
//  "nvml":{"state",...}, "nvml_hangs":[...], "nvml_xid_events":[...]} (the last two only when
// non-empty). Callers merge these keys into the top-level report object.
nlohmann::ordered_json GpuFactsToJson(const GpuLayerFacts& facts);

// Fixed-width table, one line per GPU, plus a driver line; empty when NVML found no GPU.
//   GPU  NAME                 BUS ID        SERIAL         TEMP  POWER       UTIL  MEMORY ...
// One line per GPU; STATE is HUNG/LOST, else the worst severity among `findings` naming the GPU.
std::string GpuTable(const GpuLayerFacts& facts, const std::vector<Finding>& findings = {});

}  // namespace gpudoctor
