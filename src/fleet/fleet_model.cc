#include "fleet/fleet_model.h"

#include <cstdio>
#include <ctime>

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

std::optional<int64_t> ParseUtc(const std::string& text) {
  int y, mo, d, h, mi, s;
  char z = 0;
  if (text.size() != 20 ||
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &z) != 7 ||
      z != 'Z') {
    return std::nullopt;
  }
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 ||
      h < 0 || mi < 0 || s < 0) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm));
}

std::string FormatUtcSeconds(int64_t unix_s) {
  std::time_t tt = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace gpudoctor::fleet
