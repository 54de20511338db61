#include "fleet/ledger.h"

#include <algorithm>
#include <map>
#include <set>

#include "fleet/onsets.h"

namespace gpudoctor::fleet {
namespace {

std::string Slot(const std::string& node, const std::string& bus) { return node + ":" + bus; }

const char* kSwapSteps[] = {
    "Swap test: move the suspect card to a healthy server (a slot with a clean history) and put "
    "a healthy card into the suspect slot; run the same workload on both for a day.",
    "If the fault follows the card to the healthy server: the card is bad (RMA it, quote the "
    "serial and the findings below).",
    "If the fault stays in the slot with the healthy card: the slot is bad (reseat, then replace "
    "riser, cable or baseboard; check the PSU/power rail).",
    "If neither shows the fault again: it was transient or seating; keep both on watch "
    "(`gpudoctor fleet card SERIAL` again after more history).",
};

void SortFaults(std::vector<Fault>& f) {
  std::sort(f.begin(), f.end(), [](const Fault& a, const Fault& b) { return a.time_s < b.time_s; });
}

}  // namespace

std::vector<Tenure> BuildLedger(const FleetData& data) {
  std::map<std::tuple<std::string, std::string, std::string>, Tenure> m;
  for (const auto& s : data.samples) {
    const Card& c = data.cards[s.card];
    if (c.serial.empty()) continue;
    auto [it, inserted] = m.try_emplace({c.serial, c.node, c.pci_bus_id});
    Tenure& t = it->second;
    if (inserted) {
      t.serial = c.serial;
      t.node = c.node;
      t.pci_bus_id = c.pci_bus_id;
      t.first_s = t.last_s = s.time_s;
    }
    t.first_s = std::min(t.first_s, s.time_s);
    t.last_s = std::max(t.last_s, s.time_s);
    ++t.reports;
  }
  std::vector<Tenure> out;
  for (auto& [k, t] : m) out.push_back(std::move(t));
  std::sort(out.begin(), out.end(),
            [](const Tenure& a, const Tenure& b) { return a.first_s < b.first_s; });
  return out;
}

std::vector<Fault> HardwareFaults(const FleetData& data, const std::vector<size_t>& onsets) {
  std::vector<Fault> out;
  for (size_t i : onsets) {
    const auto& e = data.findings[i];
    // Only evidence against the hardware: an application Xid or a thermal warning is not.
    if (e.layer != Layer::kHardware || e.severity == Severity::kInfo) continue;
    if (!IsHardwareAction(e.action)) continue;
    std::string bus = BusOf(data, e);
    if (bus.empty()) continue;
    out.push_back(
        {e.id, SeverityName(e.severity), SerialOf(data, e), e.node, bus, e.summary, e.time_s});
  }
  SortFaults(out);
  return out;
}

Verdict JudgeCard(const std::string& serial, const std::vector<Tenure>& ledger,
                  const std::vector<Fault>& faults) {
  Verdict v;
  v.subject = "card " + serial;
  for (const auto& t : ledger) {
    if (t.serial == serial) v.tenures.push_back(t);
  }
  std::set<std::string> fault_slots, slot_other_serials;
  for (const auto& f : faults) {
    if (f.serial == serial) {
      v.faults.push_back(f);
      fault_slots.insert(Slot(f.node, f.pci_bus_id));
    }
  }
  for (const auto& f : faults) {
    if (f.serial != serial && !f.serial.empty() &&
        fault_slots.count(Slot(f.node, f.pci_bus_id)) != 0) {
      v.faults.push_back(f);
      slot_other_serials.insert(f.serial);
    }
  }
  SortFaults(v.faults);
  if (v.tenures.empty() && v.faults.empty()) {
    v.verdict = "undecided";
    v.reason = "serial " + serial + " does not appear in the data";
    v.next_steps = {"Check the serial (nvidia-smi -q | grep Serial) and the report inputs."};
    return v;
  }
  if (fault_slots.size() >= 2 && slot_other_serials.empty()) {
    v.verdict = "card";
    v.reason = "the card faulted in " + std::to_string(fault_slots.size()) +
               " different slots: the fault follows the card";
    v.next_steps = {"Drain the card's node, RMA the card (serial " + serial +
                        ") with the findings below as evidence.",
                    "Check the slots it left with `gpudoctor fleet slot NODE:BUS`: other cards "
                    "there should stay clean."};
    return v;
  }
  if (fault_slots.size() == 1 && !slot_other_serials.empty()) {
    bool moved_clean = v.tenures.size() >= 2;
    if (moved_clean) {
      v.verdict = "slot";
      v.reason = "other cards (" + std::to_string(slot_other_serials.size()) +
                 ") faulted in the same slot " + *fault_slots.begin() +
                 ", and this card was clean elsewhere: the fault stays with the slot";
      v.next_steps = {"The card is likely fine; service the slot " + *fault_slots.begin() +
                      ": reseat, then riser, cable, baseboard, power."};
      return v;
    }
  }
  v.verdict = "undecided";
  if (fault_slots.empty()) {
    v.reason = "no hardware fault recorded for this card";
  } else if (fault_slots.size() >= 2) {
    v.reason = "the card faulted in several slots, but other cards faulted there too";
  } else {
    v.reason = "faults in one slot only (" + *fault_slots.begin() +
               "); the data cannot tell card from slot yet";
  }
  v.next_steps.assign(std::begin(kSwapSteps), std::end(kSwapSteps));
  return v;
}

Verdict JudgeSlot(const std::string& slot, const std::vector<Tenure>& ledger,
                  const std::vector<Fault>& faults) {
  Verdict v;
  v.subject = "slot " + slot;
  std::string node = slot.substr(0, slot.find(':'));
  std::string bus = slot.find(':') == std::string::npos ? "" : slot.substr(slot.find(':') + 1);
  for (const auto& t : ledger) {
    if (t.node == node && t.pci_bus_id == bus) v.tenures.push_back(t);
  }
  std::set<std::string> serials_faulted;
  for (const auto& f : faults) {
    if (f.node == node && f.pci_bus_id == bus) {
      v.faults.push_back(f);
      if (!f.serial.empty()) serials_faulted.insert(f.serial);
    }
  }
  // Did a faulting card also fault elsewhere?
  std::set<std::string> elsewhere;
  for (const auto& f : faults) {
    if (serials_faulted.count(f.serial) != 0 && (f.node != node || f.pci_bus_id != bus)) {
      v.faults.push_back(f);
      elsewhere.insert(f.serial);
    }
  }
  SortFaults(v.faults);
  if (v.tenures.empty() && v.faults.empty()) {
    v.verdict = "undecided";
    v.reason = "slot " + slot +
               " does not appear in the data (expected NODE:BUS, e.g. "
               "node07:0000:2a:00.0)";
    return v;
  }
  if (serials_faulted.size() >= 2 && elsewhere.empty()) {
    v.verdict = "slot";
    v.reason = std::to_string(serials_faulted.size()) +
               " different cards faulted in this slot and nowhere else: the fault stays with "
               "the slot";
    v.next_steps = {
        "Service the slot: reseat, then replace riser, cable or baseboard; check the "
        "power rail. Do not RMA the cards for this.",
        "Keep the slot empty or drained until fixed."};
    return v;
  }
  if (serials_faulted.size() == 1 && !elsewhere.empty()) {
    v.verdict = "card";
    v.reason = "the one card that faulted here (" + *serials_faulted.begin() +
               ") also faulted in another slot: the fault follows the card";
    v.next_steps = {"RMA card " + *serials_faulted.begin() + "; the slot can stay in service."};
    return v;
  }
  v.verdict = "undecided";
  v.reason = serials_faulted.empty() ? "no hardware fault recorded in this slot"
                                     : "faults here from one card only, seen nowhere else";
  v.next_steps.assign(std::begin(kSwapSteps), std::end(kSwapSteps));
  return v;
}

}  // namespace gpudoctor::fleet
