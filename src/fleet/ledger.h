// Card vs slot, the swap test done from data. The ledger says which card (serial) sat in which
// slot (node, pci bus id) and when, from the reports' GPU facts. Hardware faults are
// hardware-class onsets (IsHardwareClass, onsets.h: by the finding's action, so an application
// Xid 13/31/43/45 is never one) of hardware-layer findings about one GPU, deduplicated per
// incident (IncidentStarts) for each card in each slot, placed on both the card and the slot.
//   card: the serial faulted in >= 2 different slots (the fault followed the card), and no
//         other card faulted repeatedly (>= 2 incidents) in those slots;
//   slot: >= 2 different serials faulted in that slot (the fault stayed with the slot: riser,
//         cable, power, baseboard), and none of them faulted repeatedly anywhere else; for a
//         card: it faulted in one slot only, another card faulted there too, and it was clean
//         after it moved;
//   undecided: otherwise; next steps then guide the physical swap test.
// So every verdict rests on evidence on both sides of a move, and a one-off event of another
// card does not overturn it. A serial seen in two slots at the same time (a placeholder or
// copied serial) is no identity: ConflictingSerials names it, its faults count for the slot
// only, and its card verdict is undecided. Pure functions.
#pragma once

#include <set>
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
  std::string verdict;  // "card" | "slot" | "undecided" | "unknown" (no such serial or slot)
  std::string reason;
  std::vector<Tenure> tenures;  // the card's slots, or the slot's cards, in time order
  std::vector<Fault> faults;    // the evidence, in time order
  std::vector<std::string> next_steps;
  // For "unknown": the serials (or slots) in the data nearest to the one asked for.
  std::vector<std::string> nearest;
};

std::vector<Tenure> BuildLedger(const FleetData& data);
std::vector<Fault> HardwareFaults(const FleetData& data, const std::vector<size_t>& onsets,
                                  int64_t incident_gap_s);
// With the default incident gap (kIncidentGapS).
std::vector<Fault> HardwareFaults(const FleetData& data, const std::vector<size_t>& onsets);

// Serials that were in two different slots at overlapping times (from the samples).
std::set<std::string> ConflictingSerials(const FleetData& data);
// One input problem per conflicting serial, naming its slots.
std::vector<InputProblem> IdentityProblems(const FleetData& data);

// A serial that appears nowhere in the ledger or the faults is "unknown" ("no such serial"),
// with up to 3 nearest serials by edit distance in `nearest`.
Verdict JudgeCard(const std::string& serial, const std::vector<Tenure>& ledger,
                  const std::vector<Fault>& faults);
// slot: "NODE:BUS", e.g. "node07:0000:2a:00.0" (split at the first ':'); the bus id in any
// spelling (CanonicalBusId: "00000000:2A:00.0", "0000:2a:00.0", "2a:00.0"). A slot that appears
// nowhere is "unknown" ("no such slot"), with the nearest slots in `nearest`.
Verdict JudgeSlot(const std::string& slot, const std::vector<Tenure>& ledger,
                  const std::vector<Fault>& faults);

}  // namespace gpudoctor::fleet
