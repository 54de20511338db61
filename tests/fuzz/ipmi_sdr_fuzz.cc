// Fuzzes the `ipmitool sdr type Temperature` parser and the sensor-label classifier: bounded
// output, plausible readings only, and printable names.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/temperature_sensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto sensors = gpudoctor::ParseIpmiTemperatures(text);
  if (sensors.size() > gpudoctor::kMaxIpmiSensors) __builtin_trap();
  for (const auto& s : sensors) {
    // Sanitize caps at 64 bytes but finishes a UTF-8 sequence it started (up to 3 more).
    if (s.name.empty() || s.name.size() > 64 + 3) __builtin_trap();
    if (s.temp_c && (*s.temp_c < -60 || *s.temp_c > 200)) __builtin_trap();
    (void)gpudoctor::ClassifyTemperatureLabel(s.name);
  }
  auto milli = gpudoctor::ParseHwmonMillidegrees(text);
  if (milli && (*milli < -60 || *milli > 200)) __builtin_trap();
  return 0;
}
