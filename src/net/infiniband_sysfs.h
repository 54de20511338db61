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

#include "core/kept_file.h"
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
// Every file opened and closed (IbReader with keep_files = false).
Result<std::vector<IbPortSample>> ReadIbPorts(const RootFs& fs);

// The same read, with the port files (state, phys_state, rate, link_layer, counters/*) kept open
// from read to read (core/kept_file.h: pread at offset 0; a fixture tree is opened afresh), for
// `watch`, which reads them every tick. Each Read lists class/infiniband (one directory read); the
// ports and counters below are listed again only when that list changed or a kept file's path is
// gone (not_found: then the ports are listed again and read afresh, the same Read), so a device
// that appears or goes is seen on the Read after, as ReadIbPorts sees it. A device re-created
// under the same name (a driver reload) is read through fresh descriptors (KeptFile: ENODEV).
// Errors: as ReadIbPorts. Thread-safety: none; one owner (the probe's carry).
class IbReader {
 public:
  explicit IbReader(bool keep_files) : keep_(keep_files) {}
  Result<std::vector<IbPortSample>> Read(const RootFs& fs);
  // Descriptors held between reads (0 under check or on a fixture tree).
  size_t open_files() const;

 private:
  struct Port {
    std::string device;  // sanitized
    int port = 0;
    // Absent when the file was not there at the listing (an older kernel's port has no
    // link_layer): not read, as a file that cannot be read.
    std::optional<KeptFile> state, phys_state, rate, link_layer;
    std::vector<std::pair<std::string, KeptFile>> counters;  // sanitized name, file
  };
  void List(const std::string& base, const std::vector<std::string>& devices);
  // One port's sample; false when a file's path is gone (the listing is stale).
  bool ReadPort(Port& p, IbPortSample& out);

  bool keep_;
  bool listed_ = false;
  std::vector<std::string> devices_;  // the listing ports_ was built from
  std::vector<Port> ports_;
  std::string text_;  // read buffer, reused
};

std::vector<IbPortFacts> IbPortFactsBetween(const std::vector<IbPortSample>& before,
                                            const std::vector<IbPortSample>& after,
                                            double window_s);

// "4: ACTIVE" → "ACTIVE", "5: LinkUp" → "LinkUp"; text without a number is kept; "" on garbage.
std::string ParseIbStateName(std::string_view text);
// "100 Gb/sec (4X EDR)" → 100, "2.5 Gb/sec (1X SDR)" → 2.5; nullopt on garbage.
std::optional<double> ParseIbRateGbps(std::string_view text);

}  // namespace gpudoctor
