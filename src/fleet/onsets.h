// Onsets: a finding (warn or crit) that appears in a node's report while it was absent from the
// node's previous report (the first report of a node counts as an onset too). A fault that
// stays across twenty reports is one onset, not twenty, and a finding repeated within one report
// is one finding. Findings about gpudoctor itself (gpudoctor.*) are tool trouble, not faults, and
// are left out. Also the root-cause category of a finding id (the Llama 3 table's categories),
// the hardware class, incidents, and the card a finding is about. Pure functions.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

// "gpu", "gpu_memory", "nvlink_pcie", "network", "host", "software".
const char* CategoryOf(const FindingEvent& e);
extern const char* const kCategories[6];

// Indices into data.findings, in time order per node.
std::vector<size_t> FindOnsets(const FleetData& data);

// Finds the card a finding is about among the cards of its node: by pci bus id, else uuid,
// else index; where a slot held several cards over time (a swap), the one whose reports span
// the finding's time (else the nearest). Built once (O(cards + samples)); lookups O(1) per
// candidate. Keeps a reference: `data` must outlive it and not change meanwhile.
class CardIndex {
 public:
  explicit CardIndex(const FleetData& data);
  const Card* Find(const FindingEvent& e) const;

 private:
  // Cards of `node` whose identity of `kind` ('b' bus id, 'u' uuid, 'i' index) is `value`.
  const Card* Pick(const std::string& node, char kind, const std::string& value,
                   int64_t time_s) const;
  const FleetData& data_;
  // (hash of node, kind and value; card), sorted: one flat array instead of a string key and a
  // list per identity (three per card, built by every analysis step that looks cards up).
  // Equal hashes are told apart by comparing the card's fields.
  std::vector<std::pair<uint64_t, uint32_t>> by_key_;
  std::vector<std::pair<int64_t, int64_t>> span_;  // per card: first, last
};

// The card a finding is about, filled from the report's GPU facts when the finding lacks the
// serial ("" when unknown). Key: node + bus id or uuid or index.
std::string SerialOf(const CardIndex& cards, const FindingEvent& e);
std::string SerialOf(const FleetData& data, const FindingEvent& e);
// The slot (pci bus id) a finding is about, from the finding or the report's GPU facts.
std::string BusOf(const CardIndex& cards, const FindingEvent& e);
std::string BusOf(const FleetData& data, const FindingEvent& e);

// Hardware-class: the finding's action is evidence against the hardware (IsHardwareAction:
// reset_gpu, drain_reset, inspect_hardware) and its severity is warn or crit. An application
// Xid (restart_app), a busy host (watch) or a configuration finding is not.
bool IsHardwareClass(const FindingEvent& e);

// Incidents: hardware-class onsets of one node (or card) belong to one incident while each
// follows the previous one within `gap_s` (one event often raises several findings: Xid 48
// and gpu.ecc.dbe; a flapping finding re-opens within minutes). Returns the start time of
// each incident, ascending. `times` need not be sorted.
inline constexpr int64_t kIncidentGapS = 3600;
std::vector<int64_t> IncidentStarts(std::vector<int64_t> times, int64_t gap_s);

}  // namespace gpudoctor::fleet
