// InfiniBand / RoCE ports from sysfs: /sys/class/infiniband/<dev>/ports/<n>/{state,phys_state,
// rate,link_layer} and counters/* (link_downed, link_error_recovery, symbol_error,
// port_rcv_errors, ... see Documentation/ABI/stable/sysfs-class-infiniband). Two samples give
// counter growth over the window. Pure parsing helpers; reading is thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/root_fs.h"
#include "core/status.h"
#include "facts/net_facts.h"

namespace gpudoctor {

struct IbPortSample {
  std::string device;
  int port = 0;
  std::string state, phys_state;
  std::optional<double> rate_gbps;
  std::optional<std::string> link_layer;
  std::map<std::string, uint64_t> counters;
};

// Errors: not_found when class/infiniband is absent (no RDMA devices: the caller skips).
Result<std::vector<IbPortSample>> ReadIbPorts(const RootFs& fs);

std::vector<IbPortFacts> IbPortFactsBetween(const std::vector<IbPortSample>& before,
                                            const std::vector<IbPortSample>& after,
                                            double window_s);

// "4: ACTIVE" → "ACTIVE", "5: LinkUp" → "LinkUp"; text without a number is kept; "" on garbage.
std::string ParseIbStateName(std::string_view text);
// "100 Gb/sec (4X EDR)" → 100, "2.5 Gb/sec (1X SDR)" → 2.5; nullopt on garbage.
std::optional<double> ParseIbRateGbps(std::string_view text);

}  // namespace gpudoctor
