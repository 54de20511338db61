#include "facts/miner_signs.h"

#include <array>
#include <cctype>
#include <string>

#include "core/strings.h"

namespace gpudoctor {

bool MinerName(std::string_view comm) {
  static constexpr std::array<std::string_view, 26> kNames = {
      "xmrig",       "xmr-stak",   "minerd",    "cpuminer",  "ethminer",     "nbminer", "t-rex",
      "phoenixmine", "lolminer",   "gminer",    "nanominer", "teamredminer", "ccminer", "cgminer",
      "bfgminer",    "kdevtmpfsi", "kinsing",   "srbminer",  "bzminer",      "rigel",   "xmr",
      "cryptonight", "nicehash",   "excavator", "c3pool",    "moneroocean"};
  std::string lower;
  for (char c : comm) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto n : kNames) {
    if (StartsWith(lower, n)) return true;
  }
  return false;
}

bool StratumPort(int port) {
  switch (port) {
    case 3333:
    case 4444:
    case 5555:
    case 7777:
    case 14433:
    case 14444:
    case 45560:
    case 45700:
      return true;
    default:
      return false;
  }
}

bool ExeInTempDir(std::string_view exe) {
  for (std::string_view dir : {"/tmp/", "/var/tmp/", "/dev/shm/"}) {
    if (StartsWith(exe, dir)) return true;
  }
  return false;
}

}  // namespace gpudoctor
