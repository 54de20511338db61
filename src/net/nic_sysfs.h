// NICs from sysfs: /sys/class/net/<if>/{operstate,carrier,carrier_changes,speed,flags,device}
// and statistics/{rx,tx}_{bytes,packets,errors,dropped}. A sample is one read of all of them;
// NicFactsBetween turns two samples into rates and deltas (pure, so tests feed two fixture
// states). Unreadable attributes are absent (carrier and speed read EINVAL on a down link;
// speed is -1 on virtual devices): never 0. Thread-safe.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "core/status.h"
#include "facts/net_facts.h"

namespace gpudoctor {

// The counters of statistics/<name> a sample holds, by their index in NicSample::stats.
enum NicStat : size_t {
  kRxBytes,
  kTxBytes,
  kRxPackets,
  kTxPackets,
  kRxErrors,
  kTxErrors,
  kRxDropped,
  kTxDropped,
  kNicStatCount
};

struct NicSample {
  std::string name;
  bool physical = false;
  std::optional<uint64_t> flags;
  std::string operstate;
  std::optional<bool> carrier;
  std::optional<int64_t> speed_mbps;
  std::optional<uint64_t> carrier_changes;
  // statistics/<name> by NicStat (absent: unreadable). A fixed array, not a map keyed by name:
  // `watch` builds one per interface per tick (120 interfaces on a Kubernetes node).
  std::array<std::optional<uint64_t>, kNicStatCount> stats{};
};

// Errors: not_found when class/net is absent or unreadable.
Result<std::vector<NicSample>> ReadNicSamples(const RootFs& fs);

class LinkDumper;

// Reads samples again and again at the lowest cost, for `watch` (one reader in the NIC probe's
// carry). On the running host (sysfs at its usual place) the state and counters of every
// interface come from one rtnetlink dump (net/link_netlink.h: the same kernel values sysfs
// prints, same words for operstate, carrier absent on an interface that is not up); elsewhere
// (fixture trees, --path.sysfs) or when netlink fails, from sysfs: each interface's attribute
// files stay open and are re-read with pread (KeptFile), for the first kMaxKeptInterfaces
// interfaces (13 descriptors each). What an interface is (a
// directory, physical) is looked up once per name; the link speed (for many drivers an ethtool
// query, some of them a firmware command) is re-read only when the interface's flags, operstate,
// carrier or carrier_changes moved since the last read (a renegotiated link flaps its carrier),
// or kSpeedRereadEvery has passed. Samples equal ReadNicSamples's otherwise. The dump is
// LinkDumper::Links: between announced link changes, only the counters are dumped.
// Thread-safety: none (one probe run at a time owns it).
class NicReader {
 public:
  static constexpr size_t kMaxKeptInterfaces = 16;
  static constexpr std::chrono::seconds kSpeedRereadEvery{30};

  // keep_files false: sysfs files are opened for each read and closed after (a check, which
  // reads twice, or a tree whose files are replaced between reads).
  explicit NicReader(bool keep_files = true);
  ~NicReader();
  NicReader(const NicReader&) = delete;
  NicReader& operator=(const NicReader&) = delete;

  // now: the caller's clock (tests pass a fake one). Errors: as ReadNicSamples.
  Result<std::vector<NicSample>> Read(const RootFs& fs, TimePoint now);

  // Speed reads so far (for tests of the cadence).
  uint64_t speed_reads() const { return speed_reads_; }

 private:
  struct Interface;
  std::vector<std::unique_ptr<Interface>> interfaces_;  // by name, sorted
  std::unique_ptr<LinkDumper> dumper_;
  std::string text_;  // read buffer, reused
  bool keep_files_ = true;
  uint64_t speed_reads_ = 0;
};

// Interfaces present in `after`; rates and deltas where `before` has the same interface and the
// counter did not go backwards (reset, wrap). window_s <= 0 gives no rates.
std::vector<NicFacts> NicFactsBetween(const std::vector<NicSample>& before,
                                      const std::vector<NicSample>& after, double window_s);

// "10000\n" → 10000; "-1", garbage, 0 or absurd values → nullopt.
std::optional<int64_t> ParseLinkSpeedMbps(std::string_view text);

}  // namespace gpudoctor
