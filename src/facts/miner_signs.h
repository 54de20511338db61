// Static signs of mining or dropped malware, judged without CPU or traffic (so an idle process
// is caught too): a known miner name, a mining-pool (stratum) port, an executable under a
// world-writable temporary directory. Pure functions; thread-safe.
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

}  // namespace gpudoctor
