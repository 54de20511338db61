// The per-node and per-GPU health table: the state in each node's latest report (worst finding,
// key numbers), with the history (onsets) and straggler marks beside it. Sorted worst first:
// crit, warn, straggler, ok; then by onsets. Pure function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fleet/fleet_model.h"
#include "fleet/outliers.h"

namespace gpudoctor::fleet {

struct GpuRow {
  uint32_t card = 0;
  std::string worst;  // "ok", "warn", "crit"
  std::string worst_id;
  std::optional<float> sm_clock_mhz, power_w, util_pct, temp_c;
  std::string straggler;  // "", "hardware", "workload"
};

struct NodeRow {
  std::string node;
  std::string worst = "ok";
  std::string worst_id, worst_summary;
  int64_t last_report_s = 0;
  int reports = 0;
  int gpus = 0;
  int onsets = 0;
  int stragglers = 0;
  std::vector<GpuRow> gpu_rows;
  // Cards seen in an earlier report of the node but absent from its latest one.
  std::vector<uint32_t> missing_cards;
};

std::vector<NodeRow> BuildHealthTable(const FleetData& data, const std::vector<size_t>& onsets,
                                      const std::vector<Straggler>& stragglers);

}  // namespace gpudoctor::fleet
