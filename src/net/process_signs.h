// Gathers the signs the suspicious-process rule judges: deleted executable, CPU share over the
// window, persistent outbound TCP connections (established to a non-loopback peer in both
// dumps, from a local port that is not a listening port), the remote ports of every outbound
// connection at the end of the window, the ports of its listening TCP sockets and an open NVIDIA
// GPU device. Keeps only processes with at least one such sign or a static sign (miner name,
// stratum port, executable under /tmp, /var/tmp, /dev/shm: facts/miner_signs.h) even when idle,
// plus the busiest by CPU (so a miner that hides its connections is still looked at by name).
// Kernel threads (PF_KTHREAD: no files, no executable, set by the kernel only) are never kept. A
// truncated scan (either one) makes the facts truncated. Pure functions; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "facts/net_facts.h"
#include "net/proc_scan.h"
#include "net/sock_diag.h"

namespace gpudoctor {

// What the start of the window contributes: each process's CPU ticks with its start time (a pid
// reused by a new task within the window is not the same process), whether that /proc walk was
// cut short, and which TCP sockets were established (inodes; nullopt: no socket table). `watch`
// keeps only this between the runs of its slow round instead of the walk and the socket table
// (on a host with thousands of processes and connections, megabytes held for minutes).
struct ProcessSignsBaseline {
  struct Ticks {
    int pid = 0;
    uint64_t cpu_ticks = 0;  // utime + stime
    std::optional<uint64_t> start_ticks;
  };
  std::vector<Ticks> ticks;
  bool truncated = false;
  std::optional<std::vector<uint64_t>> established;  // sorted, unique
};
ProcessSignsBaseline MakeProcessSignsBaseline(const ProcessScan& scan,
                                              const std::vector<TcpSocketInfo>* sockets);

struct ProcessSignInputs {
  const ProcessSignsBaseline* before = nullptr;  // the start of the window; may be null
  const ProcessScan* after = nullptr;            // fds, exe, ticks at the end
  // The socket table at the end; null: no connection signs (and `before`'s table is not used).
  const std::vector<TcpSocketInfo>* sockets_after = nullptr;
  const std::map<uint32_t, std::string>* users = nullptr;  // may be null
  double window_s = 0;
  double ticks_per_s = 100;
  size_t top_cpu = 20;
};

ProcessSignFacts CollectProcessSigns(const ProcessSignInputs& in);

}  // namespace gpudoctor
