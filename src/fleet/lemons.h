// Lemon nodes and cards: repeat offenders over the history. A node (or a card, by serial,
// wherever it sat) is a lemon when it has at least `min_onsets` hardware-class onsets
// (IsHardwareAction: reset_gpu, drain_reset, inspect_hardware; onsets.h) at
// distinct times. Sorted by onsets, most first. Pure function.
#pragma once

#include <string>
#include <vector>

#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct Lemon {
  std::string kind;  // "node" | "card"
  std::string name;  // node name or serial
  int onsets = 0;
  int crit_onsets = 0;
  int64_t first_s = 0, last_s = 0;
  std::vector<std::string> ids;    // distinct finding ids
  std::vector<std::string> nodes;  // cards: where the onsets happened
};

std::vector<Lemon> FindLemons(const FleetData& data, const std::vector<size_t>& onsets,
                              int min_onsets);

}  // namespace gpudoctor::fleet
