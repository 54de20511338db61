// Network layer rules: per-target latency and loss, localisation (local / target /
// bandwidth), NIC saturation, errors and link state, InfiniBand ports, heavy senders and
// processes worth inspecting. Pure functions of the Snapshot.
#include <algorithm>
#include <array>
#include <string>

#include "core/strings.h"
#include "facts/miner_signs.h"
#include "rules/engine.h"
#include "rules/grade.h"

namespace gpudoctor {
namespace {

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string s;
  for (const auto& p : parts) {
    if (!s.empty()) s += sep;
    s += p;
  }
  return s;
}

// Inconclusive hosts (the implicit gateway, TCP fallback unanswered) count as not probed.
bool Probed(const TargetProbeFacts& h) {
  return h.sent > 0 && h.loss_pct.has_value() && !h.inconclusive;
}

// Slow or lossy by the warn thresholds. A reference is judged like the targets it is compared
// with (warn_rtt_ms) unless reference_warn_rtt_ms sets its own bar: a fixed bar of its own would
// call a 250 ms reference fine while a 150 ms target is slow, and blame the target.
bool HostBad(const TargetProbeFacts& h, const Thresholds& t) {
  if (!Probed(h)) return false;
  if (*h.loss_pct >= t.Get("net.loss", "warn_loss_pct")) return true;
  double warn_rtt = t.Get("net.latency.high", "warn_rtt_ms");
  if (h.group == TargetGroup::kReference) {
    if (double own = t.Get("net.latency.high", "reference_warn_rtt_ms"); own > 0) warn_rtt = own;
  }
  return h.rtt_median_ms && *h.rtt_median_ms >= warn_rtt;
}

void AddRtt(Finding& f, const TargetProbeFacts& h) {
  f.Add("target", h.name).Add("group", TargetGroupName(h.group));
  if (!h.address.empty()) f.Add("address", h.address);
  if (!h.method.empty()) f.Add("method", h.method);
  f.Add("sent", h.sent).Add("received", h.received);
  if (h.loss_pct) f.Add("loss_pct", *h.loss_pct);
  if (h.rtt_min_ms) f.Add("rtt_min_ms", *h.rtt_min_ms);
  if (h.rtt_median_ms) f.Add("rtt_median_ms", *h.rtt_median_ms);
  if (h.rtt_p95_ms) f.Add("rtt_p95_ms", *h.rtt_p95_ms);
  if (h.jitter_ms) f.Add("jitter_ms", *h.jitter_ms);
  if (h.port_closed) f.AddBool("port_closed", true);
  if (h.arp_resolved) f.AddBool("arp_resolved", *h.arp_resolved).Add("arp_device", h.arp_device);
}

void HostRulesFor(const TargetProbeFacts& h, const Thresholds& t, std::vector<Finding>& out) {
  if (h.group == TargetGroup::kReference) return;  // references only feed net.localize
  if (!Probed(h)) {
    if (h.unfinished) {
      Finding f = MakeFinding("net.target.unfinished", Severity::kInfo,
                              TargetGroupName(h.group) + std::string(" '") + h.name +
                                  "' was not measured: its probe series did not finish in time");
      f.subject = h.name;
      f.Add("target", h.name).Add("group", TargetGroupName(h.group)).Add("error", h.error);
      out.push_back(std::move(f));
      return;
    }
    if (h.address.empty() && !h.error.empty() && !h.inconclusive) {
      Finding f = MakeFinding(
          "net.target.unresolved", Severity::kWarn,
          TargetGroupName(h.group) + std::string(" '") + h.name + "' could not be resolved");
      f.subject = h.name;
      f.Add("target", h.name).Add("group", TargetGroupName(h.group)).Add("error", h.error);
      out.push_back(std::move(f));
    }
    return;
  }
  const char* loss_id = "net.loss";
  if (auto sev = GradeHigh(*h.loss_pct, t.Get(loss_id, "warn_loss_pct"),
                           t.Get(loss_id, "crit_loss_pct"))) {
    std::string summary =
        h.received == 0 ? TargetGroupName(h.group) + std::string(" '") + h.name +
                              "' unreachable: " + std::to_string(h.sent) + " of " +
                              std::to_string(h.sent) + " probes lost" +
                              (h.arp_resolved == false
                                   ? ", and it does not answer ARP on " + h.arp_device + " either"
                                   : std::string())
                        : FormatDouble(*h.loss_pct, 0) + "% of probes to '" + h.name + "' lost";
    Finding f = MakeFinding(loss_id, *sev, summary);
    f.subject = h.name;
    AddRtt(f, h);
    out.push_back(std::move(f));
  }
  const char* jitter_id = "net.target.jitter";
  if (h.jitter_ms && h.received >= t.Get(jitter_id, "min_replies")) {
    if (auto sev = GradeHigh(*h.jitter_ms, t.Get(jitter_id, "warn_jitter_ms"),
                             t.Get(jitter_id, "crit_jitter_ms"))) {
      std::string summary = "RTT to '" + h.name + "' varies by " + FormatDouble(*h.jitter_ms, 1) +
                            " ms from one probe to the next";
      if (h.rtt_median_ms) summary += " (median " + FormatDouble(*h.rtt_median_ms, 1) + " ms)";
      Finding f = MakeFinding(jitter_id, *sev, summary);
      f.subject = h.name;
      AddRtt(f, h);
      if (h.rtt_max_ms) f.Add("rtt_max_ms", *h.rtt_max_ms);
      out.push_back(std::move(f));
    }
  }
  const char* rtt_id = "net.latency.high";
  if (h.rtt_median_ms) {
    if (auto sev = GradeHigh(*h.rtt_median_ms, t.Get(rtt_id, "warn_rtt_ms"),
                             t.Get(rtt_id, "crit_rtt_ms"))) {
      Finding f = MakeFinding(
          rtt_id, *sev,
          "median RTT to '" + h.name + "' is " + FormatDouble(*h.rtt_median_ms, 1) + " ms");
      f.subject = h.name;
      AddRtt(f, h);
      out.push_back(std::move(f));
    }
  }
}

// The capacity a NIC is judged against: the bandwidth plan of that NIC, else the global plan,
// else the link speed (physical NICs only: a virtual NIC's nominal speed says nothing).
struct Capacity {
  double mbps = 0;
  const char* source = "link";  // "plan" or "link"
  // "the 20 Mb/s plan" / "the 10000 Mb/s link speed": what a percentage is a share of.
  std::string Describe() const {
    return "the " + FormatDouble(mbps, 0) + " Mb/s " +
           (std::string_view(source) == "plan" ? "plan" : "link speed");
  }
};
struct Saturation {
  const NicFacts* nic = nullptr;
  double util_pct = 0;
  double bytes_per_s = 0;
  const char* direction = "tx";
  Capacity capacity;  // what util_pct is a share of
};

std::optional<Capacity> NicCapacity(const NicFacts& n, const Thresholds& t) {
  const char* id = "net.nic.saturated";
  if (auto v = t.Find(id, "plan_mbps." + n.name); v && *v > 0) return Capacity{*v, "plan"};
  if (double plan = t.Get(id, "plan_mbps");
      plan > 0 && n.name != "lo" && (n.physical || !n.speed_mbps)) {
    return Capacity{plan, "plan"};
  }
  if (n.physical && n.speed_mbps && *n.speed_mbps > 0) {
    return Capacity{static_cast<double>(*n.speed_mbps), "link"};
  }
  return std::nullopt;
}

std::optional<Saturation> NicUtilisation(const NicFacts& n, const Thresholds& t,
                                         Capacity* capacity = nullptr) {
  // Virtual interfaces (tun, veth, bridges, bonds' slaves aside) report a nominal speed that
  // says nothing about a wire: tun claims 10 Mb/s or 10000 Mb/s whatever it carries.
  if (n.name == "lo") return std::nullopt;
  auto cap = NicCapacity(n, t);
  if (!cap) return std::nullopt;
  if (capacity != nullptr) *capacity = *cap;
  if (!n.rx_bytes_per_s && !n.tx_bytes_per_s) return std::nullopt;
  double rx = n.rx_bytes_per_s.value_or(0), tx = n.tx_bytes_per_s.value_or(0);
  Saturation s;
  s.nic = &n;
  s.direction = rx > tx ? "rx" : "tx";
  s.bytes_per_s = std::max(rx, tx);
  s.util_pct = s.bytes_per_s * 8 / (cap->mbps * 1e6) * 100;
  s.capacity = *cap;
  return s;
}

std::vector<Saturation> SaturatedNics(const Snapshot& snap, const Thresholds& t) {
  std::vector<Saturation> out;
  if (!snap.network.nics) return out;
  for (const auto& n : *snap.network.nics) {
    auto s = NicUtilisation(n, t);
    if (s && s->util_pct >= t.Get("net.nic.saturated", "warn_util_pct")) out.push_back(*s);
  }
  return out;
}

void LocalizeRule(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "net.localize";
  std::vector<Saturation> saturated = SaturatedNics(snap, t);
  int targets = 0, targets_bad = 0, refs = 0, refs_bad = 0;
  std::vector<std::string> bad_names;
  if (snap.network.reachability) {
    for (const auto& h : snap.network.reachability->hosts) {
      if (!Probed(h)) continue;
      bool bad = HostBad(h, t);
      if (h.group == TargetGroup::kReference) {
        ++refs;
        refs_bad += bad;
      } else {
        ++targets;
        targets_bad += bad;
        if (bad) bad_names.push_back(h.name);
      }
    }
  }
  auto add_counts = [&](Finding& f) {
    f.Add("targets_probed", targets).Add("targets_slow_or_lossy", targets_bad);
    f.Add("references_probed", refs).Add("references_slow_or_lossy", refs_bad);
    if (!bad_names.empty()) {
      f.Add("slow_targets", Join(bad_names, ", "));
    }
  };
  if (!saturated.empty()) {
    const Saturation& worst = *std::max_element(
        saturated.begin(), saturated.end(),
        [](const Saturation& a, const Saturation& b) { return a.util_pct < b.util_pct; });
    Severity sev = worst.util_pct >= t.Get("net.nic.saturated", "crit_util_pct") ? Severity::kCrit
                                                                                 : Severity::kWarn;
    Finding f =
        MakeFinding(id, sev,
                    "this host's NIC " + worst.nic->name + " is saturated (" +
                        FormatDouble(worst.util_pct, 0) + "% of " + worst.capacity.Describe() +
                        ", " + worst.direction + "): everything it talks to is slowed");
    f.Add("verdict", "bandwidth").Add("nic", worst.nic->name).Add("util_pct", worst.util_pct);
    f.Add("capacity_mbps", worst.capacity.mbps).Add("capacity_source", worst.capacity.source);
    f.Add("direction", worst.direction);
    if (snap.network.sockets && !snap.network.sockets->processes.empty()) {
      const auto& top = snap.network.sockets->processes.front();
      f.Add("top_sender_pid", top.pid).Add("top_sender_comm", top.comm);
      if (top.tx_bytes_per_s) f.Add("top_sender_tx_bytes_per_s", *top.tx_bytes_per_s);
      if (snap.network.sockets->process_scan_truncated) {
        f.AddBool("process_scan_truncated", true);
      }
    }
    add_counts(f);
    KeepStepsFor(f, "bandwidth");
    out.push_back(std::move(f));
    return;
  }
  if (targets_bad == 0) return;
  bool all_targets_bad = targets_bad == targets;
  bool local = all_targets_bad && (refs > 0 ? refs_bad == refs : targets >= 2);
  if (all_targets_bad && targets == 1 && refs == 0) {
    // One target and nothing to compare it with: this host's network and the target's path
    // look the same from here. Say so instead of inventing "other targets".
    Finding f = MakeFinding(id, Severity::kWarn,
                            "target '" + bad_names.front() +
                                "' is slow or lossy and there is nothing to compare it with (no "
                                "reference, no other target): this host's network or the "
                                "target's path, undecided");
    f.Add("verdict", "undecided");
    add_counts(f);
    KeepStepsFor(f, "undecided");
    out.push_back(std::move(f));
    return;
  }
  Finding f = local ? MakeFinding(id, Severity::kCrit,
                                  refs > 0 ? "all targets and all references are slow or lossy: "
                                             "the problem is this host's network or uplink"
                                           : "all targets are slow or lossy: likely this host's "
                                             "network or uplink (no references to compare)")
                    : MakeFinding(id, Severity::kWarn,
                                  std::to_string(targets_bad) + " of " + std::to_string(targets) +
                                      " targets slow or lossy while " +
                                      (refs > refs_bad ? std::string("references are fine")
                                                       : std::string("other targets are fine")) +
                                      ": look at those targets or their path");
  f.Add("verdict", local ? "local" : "target");
  add_counts(f);
  KeepStepsFor(f, local ? "local" : "target");
  out.push_back(std::move(f));
}

void NicRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (!snap.network.nics) return;
  for (const auto& n : *snap.network.nics) {
    if (n.name == "lo") continue;
    Capacity cap;
    if (auto s = NicUtilisation(n, t, &cap)) {
      const char* id = "net.nic.saturated";
      if (auto sev =
              GradeHigh(s->util_pct, t.Get(id, "warn_util_pct"), t.Get(id, "crit_util_pct"))) {
        Finding f = MakeFinding(id, *sev,
                                n.name + " at " + FormatDouble(s->util_pct, 0) + "% of " +
                                    cap.Describe() + " (" + s->direction + ")");
        f.subject = n.name;
        f.Add("nic", n.name).Add("capacity_mbps", cap.mbps).Add("capacity_source", cap.source);
        if (n.speed_mbps) f.Add("speed_mbps", *n.speed_mbps);
        f.Add("util_pct", s->util_pct);
        if (n.rx_bytes_per_s) f.Add("rx_bytes_per_s", *n.rx_bytes_per_s);
        if (n.tx_bytes_per_s) f.Add("tx_bytes_per_s", *n.tx_bytes_per_s);
        if (n.window_s) f.Add("window_s", *n.window_s);
        out.push_back(std::move(f));
      }
    }
    // Traffic on a NIC whose capacity nobody knows (virtio reports no speed, no plan set).
    if (!NicCapacity(n, t) && (n.rx_bytes_per_s || n.tx_bytes_per_s) &&
        (n.physical || !n.speed_mbps) && n.operstate == "up" &&
        std::max(n.rx_bytes_per_s.value_or(0), n.tx_bytes_per_s.value_or(0)) > 0) {
      Finding f = MakeFinding("net.nic.capacity_unknown", Severity::kInfo,
                              n.name +
                                  " reports no link speed and no bandwidth plan is set: "
                                  "saturation cannot be judged");
      f.subject = n.name;
      f.Add("nic", n.name);
      if (n.rx_bytes_per_s) f.Add("rx_bytes_per_s", *n.rx_bytes_per_s);
      if (n.tx_bytes_per_s) f.Add("tx_bytes_per_s", *n.tx_bytes_per_s);
      out.push_back(std::move(f));
    }
    {
      const char* id = "net.nic.errors";
      uint64_t errors = n.rx_errors_delta.value_or(0) + n.tx_errors_delta.value_or(0);
      uint64_t drops = n.rx_dropped_delta.value_or(0) + n.tx_dropped_delta.value_or(0);
      double drops_per_s = n.window_s && *n.window_s > 0 ? drops / *n.window_s : 0;
      bool err_hit = (n.rx_errors_delta || n.tx_errors_delta) &&
                     static_cast<double>(errors) >= t.Get(id, "warn_errors");
      bool drop_hit = drops > 0 && drops_per_s >= t.Get(id, "warn_drops_per_s");
      if (err_hit || drop_hit) {
        Finding f = MakeFinding(id, Severity::kWarn,
                                n.name + ": " + std::to_string(errors) + " errors and " +
                                    std::to_string(drops) + " drops during the window");
        f.subject = n.name;
        f.Add("nic", n.name);
        if (n.rx_errors_delta) f.Add("rx_errors_delta", *n.rx_errors_delta);
        if (n.tx_errors_delta) f.Add("tx_errors_delta", *n.tx_errors_delta);
        if (n.rx_dropped_delta) f.Add("rx_dropped_delta", *n.rx_dropped_delta);
        if (n.tx_dropped_delta) f.Add("tx_dropped_delta", *n.tx_dropped_delta);
        f.Add("drops_per_s", drops_per_s);
        if (n.window_s) f.Add("window_s", *n.window_s);
        out.push_back(std::move(f));
      }
    }
    if (n.physical && n.admin_up.value_or(false)) {
      const char* id = "net.link";
      bool down = n.carrier == false || n.operstate == "down" || n.operstate == "lowerlayerdown";
      bool flapping = n.carrier_changes_delta && static_cast<double>(*n.carrier_changes_delta) >=
                                                     t.Get(id, "warn_carrier_changes");
      // Admin-up without carrier and not one carrier change since boot: a spare port that never
      // had a cable, left up as operators do. Worth a note, not an alarm.
      bool never_linked = down && !flapping && n.carrier_changes && *n.carrier_changes == 0;
      if (down || flapping) {
        std::string state = n.operstate.empty() ? std::string("unknown") : n.operstate;
        Severity sev = never_linked ? Severity::kInfo : down ? Severity::kCrit : Severity::kWarn;
        std::string summary =
            never_linked
                ? n.name + " is up but has never had a link since boot (unused port? operstate " +
                      state + ")"
            : down ? n.name + " is up but has no link (operstate " + state + ")"
                   : n.name + " link flapped " + std::to_string(*n.carrier_changes_delta) +
                         " times during the check";
        Finding f = MakeFinding(id, sev, summary);
        f.subject = n.name;
        f.Add("nic", n.name).Add("operstate", n.operstate).Add("source", "sysfs");
        if (n.carrier) f.AddBool("carrier", *n.carrier);
        if (n.carrier_changes) f.Add("carrier_changes", *n.carrier_changes);
        if (n.carrier_changes_delta) f.Add("carrier_changes_delta", *n.carrier_changes_delta);
        out.push_back(std::move(f));
      }
    }
  }
}

std::string Gbps(double v) { return FormatDouble(v, v == static_cast<int64_t>(v) ? 0 : 1); }

void IbRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (!snap.network.ib_ports) return;
  static constexpr std::array<const char*, 7> kErrorCounters = {"symbol_error",
                                                                "link_error_recovery",
                                                                "port_rcv_errors",
                                                                "local_link_integrity_errors",
                                                                "excessive_buffer_overrun_errors",
                                                                "port_xmit_discards",
                                                                "port_rcv_remote_physical_errors"};
  for (const auto& p : *snap.network.ib_ports) {
    std::string subject = p.device + "/" + std::to_string(p.port);
    bool state_bad = !p.state.empty() && p.state != "ACTIVE";
    bool phys_bad = !p.phys_state.empty() && p.phys_state != "LinkUp";
    if (state_bad || phys_bad) {
      // DOWN with no physical link (Polling/Disabled) is often an unused port: warn only.
      bool unplugged = p.state == "DOWN" && p.phys_state != "LinkUp";
      Finding f =
          MakeFinding("net.ib.port", unplugged ? Severity::kWarn : Severity::kCrit,
                      "InfiniBand port " + subject + " is " + (p.state.empty() ? "?" : p.state) +
                          " (physical " + (p.phys_state.empty() ? "?" : p.phys_state) + ")");
      f.subject = subject;
      f.Add("device", p.device).Add("port", p.port).Add("state", p.state);
      f.Add("phys_state", p.phys_state);
      if (p.rate_gbps) f.Add("rate_gbps", *p.rate_gbps);
      out.push_back(std::move(f));
    }
    // Configured minimum rate ([network] ib_min_rate_gbps): InfiniBand ports only (RoCE ports
    // are Ethernet NICs), and only ACTIVE ones (a port that is down is net.ib.port's).
    double min_rate = t.Get("net.ib.rate", "min_rate_gbps");
    bool ib_layer = !p.link_layer || *p.link_layer == "InfiniBand";
    if (min_rate > 0 && ib_layer && p.state == "ACTIVE" && p.rate_gbps && *p.rate_gbps < min_rate) {
      Finding f = MakeFinding("net.ib.rate", Severity::kWarn,
                              "InfiniBand port " + subject + " runs at " + Gbps(*p.rate_gbps) +
                                  " Gb/s, below the " + Gbps(min_rate) + " Gb/s expected");
      f.subject = subject;
      f.Add("device", p.device).Add("port", p.port).Add("rate_gbps", *p.rate_gbps);
      f.Add("min_rate_gbps", min_rate);
      out.push_back(std::move(f));
    }
    uint64_t errors = 0;
    for (const char* c : kErrorCounters) {
      if (auto it = p.counters_delta.find(c); it != p.counters_delta.end()) errors += it->second;
    }
    uint64_t downed = 0;
    if (auto it = p.counters_delta.find("link_downed"); it != p.counters_delta.end()) {
      downed = it->second;
    }
    const char* id = "net.ib.errors";
    bool crit = downed > 0 && static_cast<double>(downed) >= t.Get(id, "crit_link_downed");
    if (crit || (errors > 0 && static_cast<double>(errors) >= t.Get(id, "warn_errors"))) {
      Finding f =
          MakeFinding(id, crit ? Severity::kCrit : Severity::kWarn,
                      "InfiniBand port " + subject + ": " + std::to_string(errors) + " errors, " +
                          std::to_string(downed) + " link-down events during the window");
      f.subject = subject;
      f.Add("device", p.device).Add("port", p.port);
      for (const auto& [name, v] : p.counters_delta) {
        if (v > 0) f.Add(name + "_delta", v);
      }
      if (p.window_s) f.Add("window_s", *p.window_s);
      out.push_back(std::move(f));
    }
  }
}

std::string PeerList(const std::vector<PeerTraffic>& peers) {
  std::string s;
  for (const auto& p : peers) {
    if (!s.empty()) s += ", ";
    s += p.peer + " (" + FormatBytes(p.tx_bytes) + " sent)";
  }
  return s;
}

// "Is it everyone, or only some users?" from the server's own connections.
void ClientNetworkRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (!snap.network.sockets) return;
  const auto& groups = snap.network.sockets->client_networks;
  const char* id = "net.clients.degraded";
  std::vector<const ClientNetworkFacts*> judged, degraded;
  for (const auto& g : groups) {
    if (!g.rtt_median_ms && !g.retrans_pct) continue;
    judged.push_back(&g);
    bool slow = g.rtt_median_ms && *g.rtt_median_ms >= t.Get(id, "warn_rtt_ms");
    bool lossy = g.retrans_pct && *g.retrans_pct >= t.Get(id, "warn_retrans_pct");
    if (slow || lossy) degraded.push_back(&g);
  }
  if (degraded.empty() || static_cast<double>(judged.size()) < t.Get(id, "min_networks")) return;
  double share = 100.0 * degraded.size() / judged.size();
  bool everyone = share >= t.Get(id, "everyone_pct");
  std::string worst;
  for (size_t i = 0; i < degraded.size() && i < 5; ++i) {
    const auto* g = degraded[i];
    if (!worst.empty()) worst += ", ";
    worst += g->network;
    if (g->rtt_median_ms) worst += " rtt " + FormatDouble(*g->rtt_median_ms, 0) + " ms";
    if (g->retrans_pct) worst += " retrans " + FormatDouble(*g->retrans_pct, 1) + "%";
  }
  std::string summary =
      everyone ? std::to_string(degraded.size()) + " of " + std::to_string(judged.size()) +
                     " client networks see a slow server: it points at this server or its uplink"
               : std::to_string(degraded.size()) + " of " + std::to_string(judged.size()) +
                     " client networks see high latency or retransmissions while " +
                     FormatDouble(100 - share, 0) + "% are fine: their path, not this server";
  Finding f = MakeFinding(id, Severity::kWarn, summary);
  f.Add("degraded_networks", static_cast<int64_t>(degraded.size()))
      .Add("client_networks", static_cast<int64_t>(judged.size()))
      .Add("healthy_pct", 100 - share)
      .Add("worst", worst)
      .Add("verdict", everyone ? "everyone" : "some");
  KeepStepsFor(f, everyone ? "everyone" : "some");
  out.push_back(std::move(f));
}

void OutboundRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (!snap.network.sockets) return;
  const char* id = "net.outbound.heavy";
  // With a bandwidth plan, "heavy" is a share of what the host may send, not an absolute rate:
  // 50 MB/s is nothing on 100 Gb/s and four times a 100 Mb/s plan.
  double limit = t.Get(id, "warn_tx_bytes_per_s");
  double plan = t.Get("net.nic.saturated", "plan_mbps");
  if (plan > 0) limit = std::min(limit, plan * 1e6 / 8 * t.Get(id, "warn_plan_share_pct") / 100);
  for (const auto& p : snap.network.sockets->processes) {
    if (!p.tx_bytes_per_s || *p.tx_bytes_per_s < limit) continue;
    Finding f =
        MakeFinding(id, Severity::kWarn,
                    "process " + p.comm + " (pid " + std::to_string(p.pid) + ") sent " +
                        FormatBytes(static_cast<uint64_t>(*p.tx_bytes_per_s)) + "/s over TCP");
    f.subject = std::to_string(p.pid);
    f.Add("pid", p.pid).Add("comm", p.comm);
    if (p.uid) f.Add("uid", static_cast<int64_t>(*p.uid));
    f.Add("tx_bytes_per_s", *p.tx_bytes_per_s).Add("tx_bytes", p.tx_bytes);
    if (plan > 0)
      f.Add("plan_mbps", plan).Add("plan_share_pct", *p.tx_bytes_per_s * 8 / (plan * 1e6) * 100);
    if (p.rx_bytes_per_s) f.Add("rx_bytes_per_s", *p.rx_bytes_per_s);
    f.Add("window_s", snap.network.sockets->window_s);
    if (!p.peers.empty()) f.Add("peers", PeerList(p.peers));
    if (snap.network.sockets->process_scan_truncated) {
      // The scan stopped at the check deadline: other processes may send more.
      f.AddBool("process_scan_truncated", true);
      f.Add("processes_scanned", snap.network.sockets->processes_scanned);
    }
    out.push_back(std::move(f));
  }
}

std::string SenderName(const UdpSender& s) {
  return s.comm + " (pid " + std::to_string(s.pid) + ")";
}

// A UDP (or raw/ICMP) flood: the namespace sends many datagrams per second; the kernel counts
// no bytes per UDP socket, so the sender is named by socket ownership, peers and queue sizes.
void UdpFloodRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (!snap.network.sockets || !snap.network.sockets->udp) return;
  const UdpTrafficFacts& u = *snap.network.sockets->udp;
  const char* id = "net.outbound.udp";
  struct Kind {
    const char* what;
    std::optional<double> rate;
    double limit;
    bool udp;
  };
  for (const Kind& k :
       {Kind{"UDP datagrams", u.udp_out_datagrams_per_s, t.Get(id, "warn_datagrams_per_s"), true},
        Kind{"raw/ICMP packets", u.other_out_packets_per_s, t.Get(id, "warn_other_packets_per_s"),
             false}}) {
    if (!k.rate || *k.rate < k.limit) continue;
    std::vector<const UdpSender*> owners;
    for (const auto& s : u.senders) {
      if ((k.udp ? s.udp_sockets : s.raw_sockets) > 0) owners.push_back(&s);
    }
    std::string rate = FormatDouble(*k.rate, 0) + " " + k.what + "/s";
    std::string summary =
        owners.empty()
            ? "this host sends " + rate + "; no visible process holds such a socket"
            : "process " + SenderName(*owners.front()) + " is behind " + rate + " sent out";
    Finding f = MakeFinding(id, Severity::kWarn, summary);
    f.Add("protocol", k.udp ? "udp" : "raw");
    f.Add(k.udp ? "udp_out_datagrams_per_s" : "other_out_packets_per_s", *k.rate);
    f.Add("window_s", u.window_s);
    f.Add("method", u.method);
    if (!k.udp && !u.raw_supported) f.Add("raw_sockets", "not listed: kernel without raw_diag");
    if (!owners.empty()) {
      const UdpSender& s = *owners.front();
      f.subject = std::to_string(s.pid);
      f.Add("pid", s.pid).Add("comm", s.comm);
      if (s.uid) f.Add("uid", static_cast<int64_t>(*s.uid));
      f.Add("udp_sockets", s.udp_sockets).Add("raw_sockets_held", s.raw_sockets);
      f.Add("peer_count", s.peer_count);
      if (!s.peers.empty()) f.Add("peers", Join(s.peers, ", "));
      f.Add("send_queue_bytes", s.send_queue_bytes).Add("recv_queue_bytes", s.recv_queue_bytes);
      if (owners.size() > 1) {
        std::vector<std::string> others;
        for (size_t i = 1; i < owners.size() && i < 6; ++i)
          others.push_back(SenderName(*owners[i]));
        f.Add("other_socket_owners", Join(others, ", "));
      }
    }
    if (snap.network.sockets->process_scan_truncated) f.AddBool("process_scan_truncated", true);
    out.push_back(std::move(f));
  }
}

void SuspiciousRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (!snap.network.process_signs) return;
  const char* id = "proc.suspicious";
  for (const auto& p : snap.network.process_signs->processes) {
    std::vector<std::string> reasons;
    bool strong = false;
    if (MinerName(p.comm)) {
      reasons.push_back("name '" + p.comm + "' matches a known miner");
      strong = true;
    }
    std::vector<int> stratum;
    for (int port : p.remote_ports) {
      if (StratumPort(port)) stratum.push_back(port);
    }
    if (!stratum.empty()) {
      std::vector<std::string> ports;
      for (int port : stratum) ports.push_back(std::to_string(port));
      reasons.push_back("connected to common stratum port(s) " + Join(ports, ","));
      strong = true;
    }
    std::vector<std::string> listening;
    for (int port : p.listen_ports) {
      if (StratumPort(port)) listening.push_back(std::to_string(port));
    }
    if (!listening.empty()) {
      reasons.push_back("listens on common stratum port(s) " + Join(listening, ",") +
                        " (a mining proxy)");
      strong = true;
    }
    // A temporary directory: a hidden path or /dev/shm is a sign alone; a plain one (a test
    // build in /tmp looks the same as a dropped binary) is a note alone and warns next to any
    // other sign; what go, AppImage and pip build and run there is no sign (facts/miner_signs.h).
    switch (ClassifyTempExe(p.exe)) {
      case TempExe::kHidden:
        reasons.push_back("runs from a hidden or memory-only temporary path (" + p.exe + ")");
        strong = true;
        break;
      case TempExe::kPlain:
        reasons.push_back("runs from a temporary directory (" + p.exe + ")");
        break;
      case TempExe::kBuildOrRuntime:
      case TempExe::kNotTemp:
        break;
    }
    // High CPU with long-lived outbound connections is also what every rank of a multi-node
    // training job (to the master port) and every data loader streaming from S3 looks like:
    // a weak sign that only counts next to another one.
    bool busy_and_connected =
        p.cpu_pct && *p.cpu_pct >= t.Get(id, "warn_cpu_pct") && !p.outbound_peers.empty();
    if (busy_and_connected) {
      reasons.push_back("high CPU (" + FormatDouble(*p.cpu_pct, 0) +
                        "% of a core) with persistent outbound connections");
    }
    if (p.exe_deleted) reasons.push_back("its executable was deleted from disk");
    if (p.gpu_device_open && p.gpu_user_known == false) {
      reasons.push_back("uses a GPU as user '" + (p.user.empty() ? std::string("?") : p.user) +
                        "', not one of the known GPU users");
    }
    // A deleted executable alone is everyday noise (binaries replaced by a package upgrade,
    // runc and systemd executing from sealed memfds): it only counts next to another sign.
    // So does busy_and_connected (see above).
    if (reasons.empty() || (reasons.size() == 1 && (p.exe_deleted || busy_and_connected))) {
      continue;
    }
    std::string joined = Join(reasons, "; ");
    Severity sev = strong || reasons.size() >= 2 ? Severity::kWarn : Severity::kInfo;
    Finding f = MakeFinding(
        id, sev, "worth inspecting: " + p.comm + " (pid " + std::to_string(p.pid) + "): " + joined);
    f.subject = std::to_string(p.pid);
    f.Add("pid", p.pid).Add("comm", p.comm).Add("reasons", joined);
    if (!p.user.empty()) f.Add("user", p.user);
    if (p.uid) f.Add("uid", static_cast<int64_t>(*p.uid));
    if (!p.exe.empty()) f.Add("exe", p.exe);
    if (p.cpu_pct) f.Add("cpu_pct", *p.cpu_pct);
    if (!p.outbound_peers.empty()) {
      f.Add("outbound_peers", Join(p.outbound_peers, ", "));
    }
    if (p.gpu_device_open) f.AddBool("gpu_device_open", true);
    if (snap.network.process_signs->truncated) {
      // The scan stopped at the check deadline: not every process was looked at.
      f.AddBool("process_scan_truncated", true);
      f.Add("processes_scanned", snap.network.process_signs->scanned);
    }
    out.push_back(std::move(f));
  }
}

}  // namespace

void NetRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (snap.network.reachability) {
    for (const auto& h : snap.network.reachability->hosts) HostRulesFor(h, t, out);
  }
  LocalizeRule(snap, t, out);
  NicRules(snap, t, out);
  IbRules(snap, t, out);
  OutboundRules(snap, t, out);
  UdpFloodRules(snap, t, out);
  ClientNetworkRules(snap, t, out);
  SuspiciousRules(snap, t, out);
}

}  // namespace gpudoctor
