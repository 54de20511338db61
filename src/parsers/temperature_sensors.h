// Parsers for room/inlet temperature sources. Pure functions; thread-safe.
//
// `ipmitool sdr type Temperature` prints one sensor per line, five '|'-separated fields:
//   Inlet Temp       | 04h | ok  |  7.1 | 23 degrees C
//   01-Inlet Ambient | 01h | ok  | 64.1 | 22 degrees C
//   Temp             | 0Fh | ns  |  3.2 | Disabled
// name, sensor number, status (ok, ns = no reading, cr/nc/nr = thresholds crossed), entity id,
// reading. Only readings in "degrees C" are kept. hwmon tempN_input holds millidegrees Celsius.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/upkeep_facts.h"

namespace gpudoctor {

struct IpmiTemperature {
  std::string name;              // trimmed, sanitised: "Inlet Temp"
  std::string status;            // "ok", "ns", "cr", ...
  std::optional<double> temp_c;  // absent: no reading ("Disabled", "No Reading", ns)
};

// At most kMaxIpmiSensors lines are returned; lines that are not five-field sensor lines
// (headers, blank lines, error text) are skipped. Readings outside [-60, 200] C are dropped.
inline constexpr size_t kMaxIpmiSensors = 256;
std::vector<IpmiTemperature> ParseIpmiTemperatures(std::string_view text);

// What a sensor label measures, case-insensitively: inlet, ambient, intake, room → inlet;
// board, system ("System Temp", "Board Temp") → board; exhaust/outlet and anything else (CPU,
// DIMM, VRM, PCH, GPU) → nullopt.
std::optional<SensorKind> ClassifyTemperatureLabel(std::string_view label);

// hwmon tempN_input ("23500\n" = 23.5 C); nullopt when not an integer or outside [-60, 200] C.
std::optional<double> ParseHwmonMillidegrees(std::string_view text);

}  // namespace gpudoctor
