#include "fleet/onsets.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "rules/catalogue.h"

namespace gpudoctor::fleet {

const char* const kCategories[6] = {"gpu",     "gpu_memory", "nvlink_pcie",
                                    "network", "host",       "software"};

namespace {

bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// The hash of a GPU's identity on a node: 'b' bus id, 'u' uuid, 'i' index.
uint64_t SlotHash(const std::string& node, char kind, const std::string& value) {
  const uint64_t a = std::hash<std::string_view>()(node);
  const uint64_t b = std::hash<std::string_view>()(value);
  return (a * 0x9e3779b97f4a7c15ull) ^ (b + 0x632be59bd9b4e019ull + static_cast<uint64_t>(kind)) ^
         (b >> 17);
}

// Whether card `c` has identity `kind` = `value` on `node` (the hash is only a filter).
bool HasIdentity(const Card& c, const std::string& node, char kind, const std::string& value) {
  if (c.node != node) return false;
  switch (kind) {
    case 'b':
      return c.pci_bus_id == value;
    case 'u':
      return c.uuid == value;
    default:
      return c.index && std::to_string(*c.index) == value;
  }
}

}  // namespace

const char* CategoryOf(const FindingEvent& e) {
  const CatalogueEntry* entry = FindCatalogueEntry(e.id);
  return FleetClassName(entry != nullptr ? FleetClassOf(*entry) : LayerFleetClass(e.layer));
}

CardIndex::CardIndex(const FleetData& data)
    : data_(data), span_(data.cards.size(), {INT64_MAX, INT64_MIN}) {
  by_key_.reserve(data.cards.size() * 3);
  for (uint32_t i = 0; i < data.cards.size(); ++i) {
    const Card& c = data.cards[i];
    if (!c.pci_bus_id.empty()) by_key_.emplace_back(SlotHash(c.node, 'b', c.pci_bus_id), i);
    if (!c.uuid.empty()) by_key_.emplace_back(SlotHash(c.node, 'u', c.uuid), i);
    if (c.index) by_key_.emplace_back(SlotHash(c.node, 'i', std::to_string(*c.index)), i);
  }
  std::sort(by_key_.begin(), by_key_.end());  // by hash, then card (the order cards came in)
  for (const auto& s : data.samples) {
    auto& sp = span_[s.card];
    sp.first = std::min(sp.first, s.time_s);
    sp.second = std::max(sp.second, s.time_s);
  }
}

const Card* CardIndex::Pick(const std::string& node, char kind, const std::string& value,
                            int64_t t) const {
  const uint64_t h = SlotHash(node, kind, value);
  auto it = std::lower_bound(by_key_.begin(), by_key_.end(), std::make_pair(h, uint32_t{0}));
  // The matching cards in the order they came in; the one whose reports span t, else the
  // nearest one in time (the first on a tie); the only one when there is one.
  const Card* best = nullptr;
  int64_t best_distance = INT64_MAX;
  int matches = 0;
  for (; it != by_key_.end() && it->first == h; ++it) {
    const Card& c = data_.cards[it->second];
    if (!HasIdentity(c, node, kind, value)) continue;
    ++matches;
    auto [first, last] = span_[it->second];
    int64_t d = first > last ? INT64_MAX - 1 : t < first ? first - t : t > last ? t - last : 0;
    if (best == nullptr) best = &c;
    if (d < best_distance) {
      best = &c;
      best_distance = d;
    }
  }
  return matches == 0 ? nullptr : best;
}

const Card* CardIndex::Find(const FindingEvent& e) const {
  if (!e.gpu.pci_bus_id.empty()) {
    if (const Card* c = Pick(e.node, 'b', e.gpu.pci_bus_id, e.time_s)) return c;
  }
  if (!e.gpu.uuid.empty()) {
    if (const Card* c = Pick(e.node, 'u', e.gpu.uuid, e.time_s)) return c;
  }
  if (e.gpu.pci_bus_id.empty() && e.gpu.uuid.empty() && e.gpu.index) {
    return Pick(e.node, 'i', std::to_string(*e.gpu.index), e.time_s);
  }
  return nullptr;
}

std::string SerialOf(const CardIndex& cards, const FindingEvent& e) {
  if (!e.gpu.serial.empty()) return e.gpu.serial;
  const Card* c = cards.Find(e);
  return c ? c->serial : "";
}

std::string SerialOf(const FleetData& data, const FindingEvent& e) {
  return SerialOf(CardIndex(data), e);
}

std::string BusOf(const CardIndex& cards, const FindingEvent& e) {
  if (!e.gpu.pci_bus_id.empty()) return e.gpu.pci_bus_id;
  const Card* c = cards.Find(e);
  return c ? c->pci_bus_id : "";
}

std::string BusOf(const FleetData& data, const FindingEvent& e) {
  return BusOf(CardIndex(data), e);
}

bool IsHardwareClass(const FindingEvent& e) {
  return e.severity != Severity::kInfo && IsHardwareAction(e.action);
}

std::vector<int64_t> IncidentStarts(std::vector<int64_t> times, int64_t gap_s) {
  std::sort(times.begin(), times.end());
  std::vector<int64_t> starts;
  for (size_t i = 0; i < times.size(); ++i) {
    if (i == 0 || times[i] - times[i - 1] > gap_s) starts.push_back(times[i]);
  }
  return starts;
}

std::vector<size_t> FindOnsets(const FleetData& data) {
  // Per node: its report times in order, and the finding keys of each report.
  std::map<std::string, std::vector<int64_t>> times;
  for (const auto& r : data.reports) times[r.node].push_back(r.time_s);
  for (auto& [node, t] : times) std::sort(t.begin(), t.end());
  std::map<std::pair<std::string, int64_t>, std::set<std::string>> keys;
  auto key_of = [](const FindingEvent& e) {
    return e.id + "|" + e.gpu.pci_bus_id + "|" + e.gpu.uuid + "|" + e.subject;
  };
  for (const auto& e : data.findings) keys[{e.node, e.time_s}].insert(key_of(e));
  std::vector<size_t> onsets;
  // A finding repeated within one report is one finding.
  std::set<std::tuple<std::string, int64_t, std::string>> counted;
  for (size_t i = 0; i < data.findings.size(); ++i) {
    const FindingEvent& e = data.findings[i];
    if (e.severity == Severity::kInfo || StartsWith(e.id, "gpudoctor.")) continue;
    if (!counted.emplace(e.node, e.time_s, key_of(e)).second) continue;
    const auto& t = times[e.node];
    auto it = std::lower_bound(t.begin(), t.end(), e.time_s);
    if (it != t.begin()) {
      auto prev = keys.find({e.node, *(it - 1)});
      if (prev != keys.end() && prev->second.count(key_of(e)) != 0) continue;
    }
    onsets.push_back(i);
  }
  std::sort(onsets.begin(), onsets.end(), [&](size_t a, size_t b) {
    const auto &x = data.findings[a], &y = data.findings[b];
    if (x.node != y.node) return x.node < y.node;
    return x.time_s < y.time_s;
  });
  return onsets;
}

}  // namespace gpudoctor::fleet
