#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

std::string CardKey(const std::string& node, const std::string& serial, const std::string& uuid,
                    const std::string& pci_bus_id) {
  if (!serial.empty()) return serial;
  if (!uuid.empty()) return uuid;
  return node + ":" + pci_bus_id;
}

uint32_t FleetData::InternCard(const Card& c) {
  std::string key = c.node + '\x1f' + c.pci_bus_id + '\x1f' + c.serial + '\x1f' + c.uuid;
  auto [it, inserted] = card_index.emplace(std::move(key), static_cast<uint32_t>(cards.size()));
  if (inserted) {
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
