#include "net/nic_sysfs.h"

#include "core/strings.h"

namespace gpudoctor {
namespace {

constexpr const char* kStatNames[] = {"rx_bytes",  "tx_bytes",  "rx_packets", "tx_packets",
                                      "rx_errors", "tx_errors", "rx_dropped", "tx_dropped"};

std::optional<std::string> ReadTrimmed(const std::string& path) {
  auto text = RootFs::ReadFile(path, 4096);
  if (!text.ok()) return std::nullopt;
  return std::string(Trim(*text));
}

std::optional<uint64_t> ReadU64(const std::string& path) {
  auto t = ReadTrimmed(path);
  if (!t) return std::nullopt;
  return ParseUint64(*t);
}

std::optional<uint64_t> Delta(const std::optional<uint64_t>& a, const std::optional<uint64_t>& b) {
  if (!a || !b || *b < *a) return std::nullopt;
  return *b - *a;
}

std::optional<uint64_t> Stat(const NicSample& s, const std::string& name) {
  auto it = s.stats.find(name);
  if (it == s.stats.end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::optional<int64_t> ParseLinkSpeedMbps(std::string_view text) {
  auto v = ParseInt64(text);
  // 1.6 Tb/s is the fastest Ethernet in sight; anything above 10 Tb/s is garbage.
  if (!v || *v <= 0 || *v > 10'000'000) return std::nullopt;
  return v;
}

Result<std::vector<NicSample>> ReadNicSamples(const RootFs& fs) {
  std::string base = fs.SysPath("class/net");
  auto names = RootFs::ListDir(base);
  if (!names.ok()) return names.status();
  std::vector<NicSample> out;
  for (const auto& name : *names) {
    std::string dir = base + "/" + name;
    // Interfaces are directories; the bonding driver adds a plain file (bonding_masters) here.
    if (auto st = RootFs::Stat(dir); !st.ok() || !st->is_dir) continue;
    NicSample s;
    s.name = Sanitize(name, 64);
    s.physical = RootFs::Exists(dir + "/device");
    if (auto f = ReadTrimmed(dir + "/flags")) s.flags = ParseHex(*f);
    s.operstate = Sanitize(ReadTrimmed(dir + "/operstate").value_or(""), 32);
    if (auto c = ReadTrimmed(dir + "/carrier")) {
      if (*c == "1") s.carrier = true;
      if (*c == "0") s.carrier = false;
    }
    if (auto sp = ReadTrimmed(dir + "/speed")) s.speed_mbps = ParseLinkSpeedMbps(*sp);
    s.carrier_changes = ReadU64(dir + "/carrier_changes");
    for (const char* stat : kStatNames) {
      if (auto v = ReadU64(dir + "/statistics/" + stat)) s.stats[stat] = *v;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<NicFacts> NicFactsBetween(const std::vector<NicSample>& before,
                                      const std::vector<NicSample>& after, double window_s) {
  std::vector<NicFacts> out;
  for (const auto& b : after) {
    NicFacts f;
    f.name = b.name;
    f.physical = b.physical;
    if (b.flags) f.admin_up = (*b.flags & 0x1) != 0;
    f.operstate = b.operstate;
    f.carrier = b.carrier;
    f.speed_mbps = b.speed_mbps;
    f.carrier_changes = b.carrier_changes;
    f.rx_bytes = Stat(b, "rx_bytes");
    f.tx_bytes = Stat(b, "tx_bytes");
    f.rx_packets = Stat(b, "rx_packets");
    f.tx_packets = Stat(b, "tx_packets");
    f.rx_errors = Stat(b, "rx_errors");
    f.tx_errors = Stat(b, "tx_errors");
    f.rx_dropped = Stat(b, "rx_dropped");
    f.tx_dropped = Stat(b, "tx_dropped");
    const NicSample* a = nullptr;
    for (const auto& cand : before) {
      if (cand.name == b.name) a = &cand;
    }
    if (a != nullptr) {
      if (window_s > 0) f.window_s = window_s;
      f.carrier_changes_delta = Delta(a->carrier_changes, b.carrier_changes);
      f.rx_errors_delta = Delta(Stat(*a, "rx_errors"), f.rx_errors);
      f.tx_errors_delta = Delta(Stat(*a, "tx_errors"), f.tx_errors);
      f.rx_dropped_delta = Delta(Stat(*a, "rx_dropped"), f.rx_dropped);
      f.tx_dropped_delta = Delta(Stat(*a, "tx_dropped"), f.tx_dropped);
      if (window_s > 0) {
        if (auto d = Delta(Stat(*a, "rx_bytes"), f.rx_bytes)) f.rx_bytes_per_s = *d / window_s;
        if (auto d = Delta(Stat(*a, "tx_bytes"), f.tx_bytes)) f.tx_bytes_per_s = *d / window_s;
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpudoctor
