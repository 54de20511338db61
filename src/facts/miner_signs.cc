#include "facts/miner_signs.h"

#include <array>
#include <cctype>
#include <string>
#include <utility>

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

namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The first path component of `rest` (a path below a temporary directory) and what follows it.
std::pair<std::string_view, std::string_view> FirstComponent(std::string_view rest) {
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return {rest, {}};
  return {rest.substr(0, slash), rest.substr(slash + 1)};
}

// /tmp/systemd-private-<32 hex>-<unit>-<suffix>/tmp/REST -> REST (the service's own /tmp).
std::string_view StripPrivateTmp(std::string_view rest) {
  auto [first, after] = FirstComponent(rest);
  if (!StartsWith(first, "systemd-private-")) return rest;
  if (!StartsWith(after, "tmp/")) return rest;
  return after.substr(4);
}

bool BuildOrRuntimeDir(std::string_view first) {
  // go: $TMPDIR/go-build<digits>/b<NNN>/exe/<name> (go run), .../b<NNN>/<pkg>.test (go test).
  if (StartsWith(first, "go-build") && AllDigits(first.substr(8))) return true;
  // AppImage type 2 runtime: mounts its squashfs at $TMPDIR/.mount_<name><6 random> and runs
  // AppRun from there.
  if (StartsWith(first, ".mount_") && first.size() > 7) return true;
  // pip: isolated build environments and unpacked sources (cmake/ninja wheels run from there).
  for (std::string_view p : {"pip-build-env-", "pip-install-", "pip-req-build-"}) {
    if (StartsWith(first, p) && first.size() > p.size()) return true;
  }
  return false;
}

}  // namespace

TempExe ClassifyTempExe(std::string_view exe) {
  constexpr std::string_view kDeleted = " (deleted)";
  if (EndsWith(exe, kDeleted)) exe.remove_suffix(kDeleted.size());
  if (StartsWith(exe, "/dev/shm/")) return TempExe::kHidden;  // memory only: never exempt
  std::string_view rest;
  if (StartsWith(exe, "/tmp/")) {
    rest = exe.substr(5);
  } else if (StartsWith(exe, "/var/tmp/")) {
    rest = exe.substr(9);
  } else {
    return TempExe::kNotTemp;
  }
  rest = StripPrivateTmp(rest);
  if (BuildOrRuntimeDir(FirstComponent(rest).first)) return TempExe::kBuildOrRuntime;
  for (std::string_view part : Split(rest, "/", /*skip_empty=*/true)) {
    if (!part.empty() && part[0] == '.') return TempExe::kHidden;
  }
  return TempExe::kPlain;
}

}  // namespace gpudoctor
