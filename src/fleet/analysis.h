// One fleet analysis: the health table, stragglers, lemons, failure statistics and interruptions
// (interruptions.h) computed from
// FleetData, plus the rendering of it as text or JSON. Pure functions of their inputs.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/failure_stats.h"
#include "fleet/fleet_model.h"
#include "fleet/health_table.h"
#include "fleet/interruptions.h"
#include "fleet/ledger.h"
#include "fleet/lemons.h"
#include "fleet/onsets.h"
#include "fleet/outliers.h"

namespace gpudoctor::fleet {

struct FleetOptions {
  OutlierOptions outliers;
  int lemon_min_onsets = 3;  // incidents (see lemons.h)
  int64_t incident_gap_s = kIncidentGapS;
};

struct FleetAnalysis {
  std::vector<NodeRow> table;
  std::vector<Straggler> stragglers;
  std::vector<IdleGpu> idle;
  std::vector<std::string> idle_nodes;  // nodes whose every GPU is idle
  std::vector<Lemon> lemons;
  FailureStats stats;
  InterruptionStats interruptions;
  // Input problems found across reports (a serial in two slots at once), listed with the
  // readers' FleetData::problems.
  std::vector<InputProblem> problems;
};

FleetAnalysis Analyze(const FleetData& data, const FleetOptions& options);

// Exit code: 2 a node is crit now, 1 warn / hardware straggler / lemon, 0 otherwise.
int FleetExitCode(const FleetAnalysis& a);

std::string RenderFleetText(const FleetData& data, const FleetAnalysis& a);
// The fleet document as JSON. WriteFleetJson hands it to `sink` in pieces (the nodes one at a
// time, so the ~33 MB of a 10k-node fleet's document is never held whole); RenderFleetJson
// returns the same bytes as one string. sink is called on this thread only.
void WriteFleetJson(const FleetData& data, const FleetAnalysis& a,
                    const std::function<void(std::string_view)>& sink);
std::string RenderFleetJson(const FleetData& data, const FleetAnalysis& a);
std::string RenderVerdictText(const Verdict& v);
std::string RenderVerdictJson(const Verdict& v);

}  // namespace gpudoctor::fleet
