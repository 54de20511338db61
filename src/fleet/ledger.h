// Card vs slot, the swap test done from data. The ledger says which card (serial) sat in which
// slot (node, pci bus id) and when, from the reports' GPU facts. Hardware faults (warn/crit
// onsets of hardware-layer findings about one GPU) are placed on both the card and the slot.
//   card: the serial faulted in >= 2 different slots (the fault followed the card);
//   slot: >= 2 different serials faulted in that slot (the fault stayed with the slot: riser,
//         cable, power, baseboard);
//   undecided: otherwise, or when both hold; next steps then guide the physical swap test.
// Pure functions.
#pragma once

#include <string>
#include <vector>

#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct Tenure {  // one card in one slot
  std::string serial, node, pci_bus_id;
  int64_t first_s = 0, last_s = 0;
  int reports = 0;
};

struct Fault {
  std::string id, severity, serial, node, pci_bus_id, summary;
  int64_t time_s = 0;
};

struct Verdict {
  std::string subject;  // "card SERIAL" or "slot NODE:BUS"
  std::string verdict;  // "card" | "slot" | "undecided"
  std::string reason;
  std::vector<Tenure> tenures;  // the card's slots, or the slot's cards, in time order
  std::vector<Fault> faults;    // the evidence, in time order
  std::vector<std::string> next_steps;
};

std::vector<Tenure> BuildLedger(const FleetData& data);
std::vector<Fault> HardwareFaults(const FleetData& data, const std::vector<size_t>& onsets);

Verdict JudgeCard(const std::string& serial, const std::vector<Tenure>& ledger,
                  const std::vector<Fault>& faults);
// slot: "NODE:BUS", e.g. "node07:0000:2a:00.0" (split at the first ':').
Verdict JudgeSlot(const std::string& slot, const std::vector<Tenure>& ledger,
                  const std::vector<Fault>& faults);

}  // namespace gpudoctor::fleet
