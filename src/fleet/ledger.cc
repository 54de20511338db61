#include "fleet/ledger.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "fleet/onsets.h"

namespace gpudoctor::fleet {
namespace {

std::string Slot(const std::string& node, const std::string& bus) { return node + ":" + bus; }

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

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

namespace {

struct Span {
  int64_t first = 0, last = 0;
  int reports = 0;
};

// Per card (index into data.cards): the first and last sample time and the sample count.
std::vector<Span> CardSpans(const FleetData& data) {
  std::vector<Span> spans(data.cards.size());
  for (const auto& s : data.samples) {
    Span& sp = spans[s.card];
    if (sp.reports == 0) sp.first = sp.last = s.time_s;
    sp.first = std::min(sp.first, s.time_s);
    sp.last = std::max(sp.last, s.time_s);
    ++sp.reports;
  }
  return spans;
}

// serial -> (slot -> merged span), from the card spans; only serials on two cards or more
// (a serial on one card has one slot).
std::map<std::string, std::map<std::string, Span>> SerialSlots(const FleetData& data) {
  std::unordered_map<std::string_view, int> cards_of;
  cards_of.reserve(data.cards.size());
  for (const Card& c : data.cards) {
    if (!c.serial.empty()) ++cards_of[c.serial];
  }
  std::map<std::string, std::map<std::string, Span>> m;
  bool shared = false;
  for (const auto& [serial, n] : cards_of) shared = shared || n >= 2;
  if (!shared) return m;
  std::vector<Span> spans = CardSpans(data);
  for (size_t i = 0; i < data.cards.size(); ++i) {
    const Card& c = data.cards[i];
    if (c.serial.empty() || spans[i].reports == 0 || cards_of[c.serial] < 2) continue;
    auto [it, inserted] = m[c.serial].try_emplace(Slot(c.node, c.pci_bus_id), spans[i]);
    if (!inserted) {
      it->second.first = std::min(it->second.first, spans[i].first);
      it->second.last = std::max(it->second.last, spans[i].last);
      it->second.reports += spans[i].reports;
    }
  }
  return m;
}

bool Overlap(const std::map<std::string, Span>& slots, std::vector<std::string>* names) {
  std::vector<std::pair<Span, std::string>> v;
  for (const auto& [slot, sp] : slots) v.push_back({sp, slot});
  std::sort(v.begin(), v.end(),
            [](const auto& a, const auto& b) { return a.first.first < b.first.first; });
  bool overlap = false;
  int64_t reach = INT64_MIN;
  std::string reach_slot;
  std::set<std::string> involved;
  for (const auto& [sp, slot] : v) {
    if (sp.first <= reach) {
      overlap = true;
      involved.insert(reach_slot);
      involved.insert(slot);
    }
    if (sp.last > reach) {
      reach = sp.last;
      reach_slot = slot;
    }
  }
  if (names) names->assign(involved.begin(), involved.end());
  return overlap;
}

}  // namespace

std::vector<Tenure> BuildLedger(const FleetData& data) {
  std::vector<Span> spans = CardSpans(data);
  std::map<std::tuple<std::string, std::string, std::string>, Tenure> m;
  for (size_t i = 0; i < data.cards.size(); ++i) {
    const Card& c = data.cards[i];
    const Span& sp = spans[i];
    if (c.serial.empty() || sp.reports == 0) continue;
    auto [it, inserted] = m.try_emplace({c.serial, c.node, c.pci_bus_id});
    Tenure& t = it->second;
    if (inserted) {
      t.serial = c.serial;
      t.node = c.node;
      t.pci_bus_id = c.pci_bus_id;
      t.first_s = sp.first;
      t.last_s = sp.last;
    }
    t.first_s = std::min(t.first_s, sp.first);
    t.last_s = std::max(t.last_s, sp.last);
    t.reports += sp.reports;
  }
  std::vector<Tenure> out;
  for (auto& [k, t] : m) out.push_back(std::move(t));
  std::stable_sort(out.begin(), out.end(),
                   [](const Tenure& a, const Tenure& b) { return a.first_s < b.first_s; });
  return out;
}

std::set<std::string> ConflictingSerials(const FleetData& data) {
  std::set<std::string> out;
  for (const auto& [serial, slots] : SerialSlots(data)) {
    if (slots.size() >= 2 && Overlap(slots, nullptr)) out.insert(serial);
  }
  return out;
}

std::vector<InputProblem> IdentityProblems(const FleetData& data) {
  std::vector<InputProblem> out;
  for (const auto& [serial, slots] : SerialSlots(data)) {
    std::vector<std::string> names;
    if (slots.size() < 2 || !Overlap(slots, &names)) continue;
    std::string list;
    for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
    if (names.size() > 5) list += " and " + std::to_string(names.size() - 5) + " more";
    out.push_back({"serial " + serial, "",
                   "serial " + serial + " seen in " + std::to_string(names.size()) +
                       " slots at the same time (" + list +
                       "): a placeholder or copied serial, not an identity; those cards are "
                       "judged by slot only"});
  }
  return out;
}

std::vector<Fault> HardwareFaults(const FleetData& data, const std::vector<size_t>& onsets,
                                  int64_t incident_gap_s) {
  const CardIndex index(data);
  const std::set<std::string> conflicting = ConflictingSerials(data);
  std::vector<Fault> all;
  for (size_t i : onsets) {
    const auto& e = data.findings[i];
    // Only evidence against the hardware: an application Xid or a host warning is not.
    if (e.layer != Layer::kHardware || !IsHardwareClass(e)) continue;
    std::string bus = BusOf(index, e);
    if (bus.empty()) continue;
    std::string serial = SerialOf(index, e);
    if (conflicting.count(serial) != 0) serial.clear();
    all.push_back({e.id, SeverityName(e.severity), serial, e.node, bus, e.summary, e.time_s});
  }
  SortFaults(all);
  // One incident per card in one slot: the first fault of it stands for the rest.
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> last_of;
  std::vector<Fault> out;
  for (auto& f : all) {
    auto [it, inserted] = last_of.try_emplace({f.serial, f.node, f.pci_bus_id}, f.time_s);
    bool same_incident = !inserted && f.time_s - it->second <= incident_gap_s;
    it->second = f.time_s;
    if (!same_incident) out.push_back(std::move(f));
  }
  return out;
}

std::vector<Fault> HardwareFaults(const FleetData& data, const std::vector<size_t>& onsets) {
  return HardwareFaults(data, onsets, kIncidentGapS);
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
  // Other cards' faults in those slots; repeated ones (>= 2 in one slot) speak for the slot.
  std::map<std::pair<std::string, std::string>, int> other_count;
  bool other_repeated = false;
  for (const auto& f : faults) {
    if (f.serial != serial && !f.serial.empty() &&
        fault_slots.count(Slot(f.node, f.pci_bus_id)) != 0) {
      v.faults.push_back(f);
      slot_other_serials.insert(f.serial);
      if (++other_count[{f.serial, Slot(f.node, f.pci_bus_id)}] >= 2) other_repeated = true;
    }
  }
  SortFaults(v.faults);
  if (v.tenures.empty() && v.faults.empty()) {
    std::vector<std::string> serials;
    for (const auto& t : ledger) serials.push_back(t.serial);
    for (const auto& f : faults) serials.push_back(f.serial);
    v.verdict = "unknown";
    v.nearest = NearestNames(serial, serials);
    v.reason = "no such serial " + serial + " in the data";
    if (!v.nearest.empty()) v.reason += " (nearest: " + Join(v.nearest, ", ") + ")";
    v.next_steps = {"Check the serial (nvidia-smi -q | grep Serial) and the report inputs."};
    return v;
  }
  {
    std::map<std::string, Span> slots;
    for (const auto& t : v.tenures) {
      Span& sp = slots[Slot(t.node, t.pci_bus_id)];
      sp.first = sp.reports ? std::min(sp.first, t.first_s) : t.first_s;
      sp.last = sp.reports ? std::max(sp.last, t.last_s) : t.last_s;
      sp.reports += std::max(1, t.reports);
    }
    std::vector<std::string> names;
    if (slots.size() >= 2 && Overlap(slots, &names)) {
      v.verdict = "undecided";
      v.reason = "serial " + serial + " was in " + std::to_string(names.size()) +
                 " slots at the same time: a placeholder or copied serial is not an identity";
      v.next_steps = {
          "Judge the slots instead (gpudoctor fleet slot NODE:BUS); read the board "
          "serials with nvidia-smi -q on each node."};
      return v;
    }
  }
  if (fault_slots.size() >= 2 && !other_repeated) {
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
  std::string bus =
      CanonicalBusId(slot.find(':') == std::string::npos ? "" : slot.substr(slot.find(':') + 1));
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
  // Did a faulting card also fault elsewhere (repeatedly: >= 2 incidents)?
  std::set<std::string> elsewhere, elsewhere_repeated;
  std::map<std::string, int> elsewhere_count;
  for (const auto& f : faults) {
    if (serials_faulted.count(f.serial) != 0 && (f.node != node || f.pci_bus_id != bus)) {
      v.faults.push_back(f);
      elsewhere.insert(f.serial);
      if (++elsewhere_count[f.serial] >= 2) elsewhere_repeated.insert(f.serial);
    }
  }
  SortFaults(v.faults);
  if (v.tenures.empty() && v.faults.empty()) {
    std::vector<std::string> slots;
    for (const auto& t : ledger) slots.push_back(Slot(t.node, t.pci_bus_id));
    for (const auto& f : faults) slots.push_back(Slot(f.node, f.pci_bus_id));
    v.verdict = "unknown";
    v.nearest = NearestNames(Slot(node, bus), slots);
    v.reason = "no such slot " + slot +
               " in the data (expected NODE:BUS, e.g. "
               "node07:0000:2a:00.0)";
    if (!v.nearest.empty()) v.reason += "; nearest: " + Join(v.nearest, ", ");
    return v;
  }
  if (serials_faulted.size() >= 2 && elsewhere_repeated.empty()) {
    v.verdict = "slot";
    v.reason = std::to_string(serials_faulted.size()) +
               " different cards faulted in this slot and none of them repeatedly elsewhere: "
               "the fault stays with the slot";
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
