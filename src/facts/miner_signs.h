// Static signs of mining or dropped malware, judged without CPU or traffic (so an idle process
// is caught too): a known miner name, a mining-pool (stratum) port, an executable under a
// world-writable temporary directory (and how much its path says). Pure functions; thread-safe.
#pragma once

#include <string_view>

namespace gpudoctor {

// comm (or executable base name) starts with a known miner's name, case-insensitive.
bool MinerName(std::string_view comm);
// Ports mining pools commonly serve stratum on: 3333, 4444, 5555, 7777, 14433/14444 (TLS and
// plain), 45560 and 45700 (Monero/Ethereum pools). 8888/9999 are left out on purpose: Jupyter
// and many dev servers listen there.
bool StratumPort(int port);
// The exe link target lies under /tmp, /var/tmp or /dev/shm (" (deleted)" suffix allowed).
bool ExeInTempDir(std::string_view exe);

// How much an executable's temporary-directory path says (proc.suspicious: the catalogue entry
// gives the rule; tests/unit/suspicious_fixture_test.cc the real paths it was made from).
enum class TempExe {
  kNotTemp,  // not under /tmp, /var/tmp or /dev/shm
  // A path that a build tool or runtime creates, names and runs from, and nothing else: `go
  // run`/`go test` (/tmp/go-build<digits>/...), an AppImage's own mount (/tmp/.mount_<name>...),
  // pip's isolated build environments (/tmp/pip-build-env-*, pip-install-*, pip-req-build-*).
  // Not a sign: the process is judged by its other signs, as one under /usr/bin would be.
  kBuildOrRuntime,
  // Under /dev/shm (memory only; nothing installs there), or below a hidden (dot) directory or
  // file in a temporary directory (/tmp/.x/..., /tmp/.ICE-unix/...): where dropped malware
  // hides. A sign on its own (warn).
  kHidden,
  // Any other temporary path (/tmp/a.out, /var/tmp/tool): a developer's test build looks the
  // same as a dropped binary, so it is a sign that alone is only worth a note (info) and warns
  // next to any other sign.
  kPlain,
};
// A systemd PrivateTmp prefix (/tmp/systemd-private-<id>-<unit>-<suffix>/tmp/) is removed first:
// the path is judged as the service sees it.
TempExe ClassifyTempExe(std::string_view exe);

}  // namespace gpudoctor
