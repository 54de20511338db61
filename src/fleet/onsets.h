// Onsets: a finding (warn or crit) that appears in a node's report while it was absent from the
// node's previous report (the first report of a node counts as an onset too). A fault that
// stays across twenty reports is one onset, not twenty. Findings about gpudoctor itself
// (gpudoctor.*) are tool trouble, not faults, and are left out. Also the root-cause category of
// a finding id, in the Llama 3 table's categories. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

// "gpu", "gpu_memory", "nvlink_pcie", "network", "host", "software".
const char* CategoryOf(const FindingEvent& e);
extern const char* const kCategories[6];

// Indices into data.findings, in time order per node.
std::vector<size_t> FindOnsets(const FleetData& data);

// The card a finding is about, filled from the report's GPU facts when the finding lacks the
// serial ("" when unknown). Key: node + bus id or uuid or index.
std::string SerialOf(const FleetData& data, const FindingEvent& e);
// The slot (pci bus id) a finding is about, from the finding or the report's GPU facts.
std::string BusOf(const FleetData& data, const FindingEvent& e);

}  // namespace gpudoctor::fleet
