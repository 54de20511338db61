#include "fleet/fleet_model.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>

#include "facts/pci_bus_id.h"

namespace gpudoctor::fleet {

std::string CanonicalBusId(std::string_view text) {
  std::string norm = NormalizePciBusId(text);
  return norm.empty() ? std::string(text) : norm;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> NearestNames(std::string_view query,
                                      const std::vector<std::string>& candidates, size_t max) {
  std::set<std::pair<size_t, std::string>> ranked;
  // Bounded work on hostile input: names are compared by their first 256 characters.
  std::string_view q = query.substr(0, 256);
  for (const auto& c : candidates) {
    if (c.empty()) continue;
    ranked.emplace(EditDistance(q, std::string_view(c).substr(0, 256)), c);
    if (ranked.size() > max) ranked.erase(std::prev(ranked.end()));
  }
  std::vector<std::string> out;
  for (const auto& [d, name] : ranked) out.push_back(name);
  return out;
}

std::string CardKey(const std::string& node, const std::string& serial, const std::string& uuid,
                    const std::string& pci_bus_id) {
  if (!serial.empty()) return serial;
  if (!uuid.empty()) return uuid;
  return node + ":" + pci_bus_id;
}

uint32_t FleetData::InternCard(const Card& c) {
  // The key is built in a buffer kept from call to call: most calls find a card already seen
  // (one per GPU per report), and a new string each time was a measurable part of a fleet read.
  thread_local std::string key;
  key.clear();
  key.append(c.node).append(1, '\x1f').append(c.pci_bus_id).append(1, '\x1f');
  key.append(c.serial).append(1, '\x1f').append(c.uuid);
  auto it = card_index.lower_bound(key);
  if (it == card_index.end() || it->first != key) {
    it = card_index.emplace_hint(it, key, static_cast<uint32_t>(cards.size()));
    cards.push_back(c);
  } else {
    Card& known = cards[it->second];
    if (known.model.empty()) known.model = c.model;
    if (!known.max_sm_clock_mhz) known.max_sm_clock_mhz = c.max_sm_clock_mhz;
    if (!known.power_limit_w) known.power_limit_w = c.power_limit_w;
    if (!known.index) known.index = c.index;
  }
  return it->second;
}

}  // namespace gpudoctor::fleet
