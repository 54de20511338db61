// Calendar arithmetic shared by the time parsers (kernel-log stamps, `history --since`, fleet
// reports): days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
// Pure; thread-safe.
#pragma once

#include <cstdint>

namespace gpudoctor {

// y: any year; m: 1-12; d: 1-31 (not validated).
inline int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace gpudoctor
