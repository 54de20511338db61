#include "parsers/temperature_sensors.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"

namespace gpudoctor {
namespace {

constexpr double kMinPlausibleC = -60, kMaxPlausibleC = 200;

bool Plausible(double c) { return c >= kMinPlausibleC && c <= kMaxPlausibleC; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

std::vector<IpmiTemperature> ParseIpmiTemperatures(std::string_view text) {
  std::vector<IpmiTemperature> out;
  for (std::string_view line : SplitLines(text)) {
    if (out.size() >= kMaxIpmiSensors) break;
    std::vector<std::string_view> f = Split(line, "|", /*skip_empty=*/false);
    if (f.size() != 5) continue;
    std::string_view name = Trim(f[0]);
    if (name.empty()) continue;
    IpmiTemperature t;
    t.name = Sanitize(name, 64);
    t.status = Sanitize(Trim(f[2]), 16);
    std::string_view reading = Trim(f[4]);
    constexpr std::string_view kUnit = "degrees C";
    if (t.status != "ns" && EndsWith(reading, kUnit)) {
      auto v = ParseDouble(reading.substr(0, reading.size() - kUnit.size()));
      if (v && Plausible(*v)) t.temp_c = *v;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<SensorKind> ClassifyTemperatureLabel(std::string_view label) {
  std::string l = Lower(label);
  if (Contains(l, "exhaust") || Contains(l, "outlet")) return std::nullopt;
  // A power supply's or a GPU's own inlet runs warmer than the room: not the room's air.
  for (std::string_view w : {"psu", "power supply", "gpu", "cpu", "pch", "dimm", "vr "}) {
    if (Contains(l, w)) return std::nullopt;
  }
  for (std::string_view w : {"inlet", "ambient", "intake", "room"}) {
    if (Contains(l, w)) return SensorKind::kInlet;
  }
  for (std::string_view w : {"board", "system"}) {
    if (Contains(l, w)) return SensorKind::kBoard;
  }
  return std::nullopt;
}

std::optional<double> ParseHwmonMillidegrees(std::string_view text) {
  auto v = ParseInt64(text);
  if (!v) return std::nullopt;
  double c = static_cast<double>(*v) / 1000.0;
  if (!Plausible(c)) return std::nullopt;
  return c;
}

}  // namespace gpudoctor
