// NICs from sysfs: /sys/class/net/<if>/{operstate,carrier,carrier_changes,speed,flags,device}
// and statistics/{rx,tx}_{bytes,packets,errors,dropped}. A sample is one read of all of them;
// NicFactsBetween turns two samples into rates and deltas (pure, so tests feed two fixture
// states). Unreadable attributes are absent (carrier and speed read EINVAL on a down link;
// speed is -1 on virtual devices): never 0. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/root_fs.h"
#include "core/status.h"
#include "facts/net_facts.h"

namespace gpudoctor {

struct NicSample {
  std::string name;
  bool physical = false;
  std::optional<uint64_t> flags;
  std::string operstate;
  std::optional<bool> carrier;
  std::optional<int64_t> speed_mbps;
  std::optional<uint64_t> carrier_changes;
  std::map<std::string, uint64_t> stats;  // statistics/<name>
};

// Errors: not_found when class/net is absent or unreadable.
Result<std::vector<NicSample>> ReadNicSamples(const RootFs& fs);

// Interfaces present in `after`; rates and deltas where `before` has the same interface and the
// counter did not go backwards (reset, wrap). window_s <= 0 gives no rates.
std::vector<NicFacts> NicFactsBetween(const std::vector<NicSample>& before,
                                      const std::vector<NicSample>& after, double window_s);

// "10000\n" → 10000; "-1", garbage, 0 or absurd values → nullopt.
std::optional<int64_t> ParseLinkSpeedMbps(std::string_view text);

}  // namespace gpudoctor
