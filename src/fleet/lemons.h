// Lemon nodes and cards: repeat offenders over the history. A node (or a card, by serial,
// wherever it sat) is a lemon when it has at least `min_incidents` incidents: hardware-class
// onsets (IsHardwareClass, onsets.h: by the finding's action, never its id) deduplicated per
// incident (IncidentStarts with `incident_gap_s`: the Xid and the ECC finding of one event,
// or a finding that flaps, are one incident). A thermal blip plus a host load warning is not
// a lemon; three separate GPU faults are. Serials seen in two slots at once
// (ConflictingSerials, ledger.h) are no identity and make no card lemon. Sorted by incidents,
// most first. Pure function.
#pragma once

#include <string>
#include <vector>

#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct Lemon {
  std::string kind;   // "node" | "card"
  std::string name;   // node name or serial
  int incidents = 0;  // deduplicated hardware-class incidents
  int onsets = 0;     // hardware-class onsets, before deduplication
  int crit_onsets = 0;
  int64_t first_s = 0, last_s = 0;
  std::vector<std::string> ids;    // distinct finding ids
  std::vector<std::string> nodes;  // cards: where the onsets happened
};

std::vector<Lemon> FindLemons(const FleetData& data, const std::vector<size_t>& onsets,
                              int min_incidents, int64_t incident_gap_s = 3600);

}  // namespace gpudoctor::fleet
