#include "net/nic_sysfs.h"

#include <net/if.h>

#include <algorithm>
#include <array>
#include <iterator>

#include "core/kept_file.h"
#include "core/strings.h"
#include "net/link_netlink.h"

namespace gpudoctor {
namespace {

// In NicStat's order, which is also NetlinkLink::stats's.
constexpr const char* kStatNames[] = {"rx_bytes",  "tx_bytes",  "rx_packets", "tx_packets",
                                      "rx_errors", "tx_errors", "rx_dropped", "tx_dropped"};
static_assert(std::size(kStatNames) == kNicStatCount);

std::optional<uint64_t> Delta(const std::optional<uint64_t>& a, const std::optional<uint64_t>& b) {
  if (!a || !b || *b < *a) return std::nullopt;
  return *b - *a;
}

}  // namespace

std::optional<int64_t> ParseLinkSpeedMbps(std::string_view text) {
  auto v = ParseInt64(text);
  // 1.6 Tb/s is the fastest Ethernet in sight; anything above 10 Tb/s is garbage.
  if (!v || *v <= 0 || *v > 10'000'000) return std::nullopt;
  return v;
}

struct NicReader::Interface {
  std::string name;
  bool is_dir = false, physical = false, keep = false;
  KeptFile flags, operstate, carrier, carrier_changes, speed;
  std::array<KeptFile, std::size(kStatNames)> stats;
  // The speed and when it was read, and the link state it was read in.
  std::optional<int64_t> speed_mbps;
  std::optional<TimePoint> speed_at;
  // The link state at the speed read: IFF_UP, operstate, carrier, carrier_changes.
  struct LinkState {
    std::optional<bool> up;
    std::string operstate;
    std::optional<bool> carrier;
    std::optional<uint64_t> carrier_changes;
    bool operator==(const LinkState&) const = default;
  };
  LinkState speed_state;

  Interface(const std::string& dir, std::string n, bool keep_open)
      : name(std::move(n)), keep(keep_open) {
    Lookup(dir);
    if (!is_dir) return;
    flags = KeptFile(dir + "/flags", keep);
    operstate = KeptFile(dir + "/operstate", keep);
    carrier = KeptFile(dir + "/carrier", keep);
    carrier_changes = KeptFile(dir + "/carrier_changes", keep);
    speed = KeptFile(dir + "/speed", keep);
    for (size_t i = 0; i < stats.size(); ++i) {
      stats[i] = KeptFile(dir + "/statistics/" + kStatNames[i], keep);
    }
  }
  void Lookup(const std::string& dir) {
    // Interfaces are directories; the bonding driver adds a plain file (bonding_masters) here.
    auto st = RootFs::Stat(dir);
    is_dir = st.ok() && st->is_dir;
    physical = is_dir && RootFs::Exists(dir + "/device");
  }
};

NicReader::NicReader(bool keep_files) : keep_files_(keep_files) {}
NicReader::~NicReader() = default;

namespace {

std::optional<std::string_view> ReadKept(KeptFile& f, std::string& text) {
  if (!f.Read(&text, 4096).ok()) return std::nullopt;
  return Trim(text);
}

}  // namespace

Result<std::vector<NicSample>> NicReader::Read(const RootFs& fs, TimePoint now) {
  std::string base = fs.SysPath("class/net");
  // The running host's interfaces (sysfs at its usual place): one rtnetlink dump; a fixture or
  // another host's tree (--path.sysfs), or no netlink: sysfs.
  std::vector<NetlinkLink> links;
  bool from_netlink = false;
  if (fs.sysfs() == RootFs().sysfs()) {
    if (dumper_ == nullptr) dumper_ = std::make_unique<LinkDumper>();
    if (auto dump = dumper_->Links(now); dump.ok()) {
      links = std::move(*dump);
      std::sort(links.begin(), links.end(),
                [](const NetlinkLink& a, const NetlinkLink& b) { return a.name < b.name; });
      from_netlink = true;
    }
  }
  std::vector<std::string> names;
  if (from_netlink) {
    names.reserve(links.size());
    for (const auto& l : links) names.push_back(l.name);
  } else {
    auto listed = RootFs::ListDir(base);
    if (!listed.ok()) return listed.status();
    names = std::move(*listed);
  }
  // Both lists are sorted by name: keep the interfaces still listed, add the new ones.
  std::vector<std::unique_ptr<Interface>> next;
  next.reserve(names.size());
  size_t old = 0, kept = 0;
  for (const auto& name : names) {
    while (old < interfaces_.size() && interfaces_[old]->name < name) ++old;
    if (old < interfaces_.size() && interfaces_[old]->name == name) {
      next.push_back(std::move(interfaces_[old++]));
    } else {
      next.push_back(std::make_unique<Interface>(base + "/" + name, name,
                                                 keep_files_ && kept < kMaxKeptInterfaces));
    }
    if (next.back()->is_dir && next.back()->keep) ++kept;
  }
  interfaces_ = std::move(next);

  std::vector<NicSample> out;
  out.reserve(interfaces_.size());
  for (size_t i = 0; i < interfaces_.size(); ++i) {
    Interface* nic = interfaces_[i].get();
    // sysfs: interfaces are directories (the bonding driver adds a plain file there). netlink
    // lists interfaces only.
    if (!from_netlink && !nic->is_dir) continue;
    NicSample s;
    s.name = Sanitize(nic->name, 64);
    if (from_netlink) {
      const NetlinkLink& l = links[i];
      s.flags = l.flags;
      s.operstate = l.operstate;
      s.carrier = l.carrier;
      s.carrier_changes = l.carrier_changes;
      if (l.stats) {
        for (size_t k = 0; k < l.stats->size(); ++k) s.stats[k] = (*l.stats)[k];
      }
    } else {
      if (auto f = ReadKept(nic->flags, text_)) s.flags = ParseHex(*f);
      s.operstate = Sanitize(ReadKept(nic->operstate, text_).value_or(""), 32);
      if (auto c = ReadKept(nic->carrier, text_)) {
        if (*c == "1") s.carrier = true;
        if (*c == "0") s.carrier = false;
      }
      if (auto c = ReadKept(nic->carrier_changes, text_)) s.carrier_changes = ParseUint64(*c);
      for (size_t k = 0; k < nic->stats.size(); ++k) {
        if (auto v = ReadKept(nic->stats[k], text_)) {
          if (auto n = ParseUint64(*v)) s.stats[k] = *n;
        }
      }
    }
    // The link state the speed goes with: a change re-reads it (see the header).
    Interface::LinkState state{
        s.flags ? std::optional<bool>((*s.flags & IFF_UP) != 0) : std::nullopt, s.operstate,
        s.carrier, s.carrier_changes};
    if (!nic->speed_at || state != nic->speed_state || now - *nic->speed_at >= kSpeedRereadEvery) {
      if (nic->speed_at) nic->Lookup(base + "/" + nic->name);
      auto sp = ReadKept(nic->speed, text_);
      nic->speed_mbps = sp ? ParseLinkSpeedMbps(*sp) : std::nullopt;
      nic->speed_at = now;
      nic->speed_state = std::move(state);
      ++speed_reads_;
    }
    s.speed_mbps = nic->speed_mbps;
    s.physical = nic->physical;
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<NicSample>> ReadNicSamples(const RootFs& fs) {
  NicReader reader(/*keep_files=*/false);
  return reader.Read(fs, SteadyClock::now());
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
    f.rx_bytes = b.stats[kRxBytes];
    f.tx_bytes = b.stats[kTxBytes];
    f.rx_packets = b.stats[kRxPackets];
    f.tx_packets = b.stats[kTxPackets];
    f.rx_errors = b.stats[kRxErrors];
    f.tx_errors = b.stats[kTxErrors];
    f.rx_dropped = b.stats[kRxDropped];
    f.tx_dropped = b.stats[kTxDropped];
    // The same interface in `before`: at the same position when the list did not change (the
    // reader's samples are in name order), else looked for.
    const NicSample* a = nullptr;
    const size_t at = static_cast<size_t>(&b - after.data());
    if (at < before.size() && before[at].name == b.name) {
      a = &before[at];
    } else {
      for (const auto& cand : before) {
        if (cand.name == b.name) a = &cand;
      }
    }
    if (a != nullptr) {
      if (window_s > 0) f.window_s = window_s;
      f.carrier_changes_delta = Delta(a->carrier_changes, b.carrier_changes);
      f.rx_errors_delta = Delta(a->stats[kRxErrors], f.rx_errors);
      f.tx_errors_delta = Delta(a->stats[kTxErrors], f.tx_errors);
      f.rx_dropped_delta = Delta(a->stats[kRxDropped], f.rx_dropped);
      f.tx_dropped_delta = Delta(a->stats[kTxDropped], f.tx_dropped);
      if (window_s > 0) {
        if (auto d = Delta(a->stats[kRxBytes], f.rx_bytes)) f.rx_bytes_per_s = *d / window_s;
        if (auto d = Delta(a->stats[kTxBytes], f.tx_bytes)) f.tx_bytes_per_s = *d / window_s;
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpudoctor
