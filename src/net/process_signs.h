// Gathers the signs the suspicious-process rule judges: deleted executable, CPU share over the
// window, persistent outbound TCP connections (established to a non-loopback peer in both
// dumps, from a local port that is not a listening port), the remote ports of every outbound
// connection at the end of the window, the ports of its listening TCP sockets and an open NVIDIA
// GPU device. Keeps only processes with at least one such sign or a static sign (miner name,
// stratum port, executable under /tmp, /var/tmp, /dev/shm: facts/miner_signs.h) even when idle,
// plus the busiest by CPU (so a miner that hides its connections is still looked at by name). A
// truncated scan (either one) makes the facts truncated. Pure function; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "facts/net_facts.h"
#include "net/proc_scan.h"
#include "net/sock_diag.h"

namespace gpudoctor {

struct ProcessSignInputs {
  const ProcessScan* before = nullptr;  // CPU ticks at the start of the window
  const ProcessScan* after = nullptr;   // fds, exe, ticks at the end
  const std::vector<TcpSocketInfo>* sockets_before = nullptr;
  const std::vector<TcpSocketInfo>* sockets_after = nullptr;
  const std::map<uint32_t, std::string>* users = nullptr;  // may be null
  double window_s = 0;
  double ticks_per_s = 100;
  size_t top_cpu = 20;
};

ProcessSignFacts CollectProcessSigns(const ProcessSignInputs& in);

}  // namespace gpudoctor
