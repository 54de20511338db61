#include "kmsg/kernel_signals.h"

#include <optional>
#include <string>

#include "core/strings.h"
#include "facts/pci_tuple.h"

namespace gpudoctor {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Digits at the start of s.
std::string_view LeadingDigits(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && IsDigit(s[n])) ++n;
  return s.substr(0, n);
}

std::string_view Token(std::string_view s, size_t index) {
  auto parts = Split(s.substr(0, 256), " ");
  return index < parts.size() ? parts[index] : std::string_view{};
}

bool ValidIfName(std::string_view n) {
  if (n.empty() || n.size() > 31) return false;
  for (char c : n) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' || c == '-' ||
          c == '.' || c == '@' || c == '#')) {
      return false;
    }
  }
  return true;
}

std::string_view StripColon(std::string_view t) {
  while (!t.empty() && t.back() == ':') t.remove_suffix(1);
  return t;
}

// "<driver> <bdf>: ..." → the device address.
std::optional<PciTuple> PrefixDevice(std::string_view message) {
  std::string_view t = StripColon(Token(message, 1));
  return ParsePciTuple(t);
}

// "comm:pid" as the hung-task and soft-lockup reports print a task (the name may hold ':' and
// spaces: the pid is after the last ':'); nullopt when it does not parse.
struct Task {
  std::string comm;
  int64_t pid = 0;
  std::string Label() const { return comm + "[" + std::to_string(pid) + "]"; }
};
std::optional<Task> ParseTask(std::string_view who) {
  size_t colon = who.rfind(':');
  if (colon == who.npos || colon == 0 || colon > 64) return std::nullopt;
  auto pid = ParseBoundedDecimal(who.substr(colon + 1), 10);
  if (!pid) return std::nullopt;
  return Task{std::string(who.substr(0, colon)), *pid};
}

SignalResult Event(KernelEventKind kind, std::string subject) {
  SignalResult r;
  r.verdict = SignalVerdict::kEvent;
  r.event.kind = kind;
  r.event.subject = std::move(subject);
  r.event.count = 1;
  return r;
}

}  // namespace

bool IsNvidiaTaskName(std::string_view comm) {
  // The driver's threaded interrupt handler is "irq/NNN-nvidia".
  bool irq_thread =
      StartsWith(comm, "irq/") && comm.size() > 11 && comm.substr(comm.size() - 7) == "-nvidia";
  return StartsWith(comm, "nvidia") || StartsWith(comm, "nv-") || StartsWith(comm, "nv_") ||
         StartsWith(comm, "dcgm") || comm == "nvc" || StartsWith(comm, "nvc:") || irq_thread;
}

SignalResult ParseSxidLine(std::string_view m) {
  size_t k = m.find("SXid (PCI:");
  if (k == m.npos) return {};
  std::string_view t = m.substr(k + 10);
  size_t close = t.find("): ");
  if (close == t.npos || close > 16) return {SignalVerdict::kGarbled, {}};
  auto pci = ParsePciTuple(t.substr(0, close));
  t = t.substr(close + 3);
  std::string_view code_text = LeadingDigits(t);
  auto code = ParseBoundedDecimal(code_text, 6);
  t = t.substr(code_text.size());
  if (!pci || !code || !StartsWith(t, ", ")) return {SignalVerdict::kGarbled, {}};
  t = t.substr(2);
  if (StartsWith(t, "Data {")) return {SignalVerdict::kRecognized, {}};
  SignalResult r = Event(KernelEventKind::kNvswitchSxid, pci->ToString());
  r.event.pci = pci;
  r.event.xid = static_cast<int>(*code);
  if (StartsWith(t, "Severity ")) {
    auto severity = ParseBoundedDecimal(LeadingDigits(t.substr(9)), 2);
    if (!severity) return {SignalVerdict::kGarbled, {}};
    r.verdict = SignalVerdict::kAttach;
    r.event.nvlink_fatal = *severity >= 1;  // NVSWITCH_ERROR_SEVERITY_FATAL
    return r;
  }
  const bool fatal = StartsWith(t, "Fatal");
  if (!fatal && !StartsWith(t, "Non-fatal") && !StartsWith(t, "Correctable")) {
    return {SignalVerdict::kGarbled, {}};
  }
  r.event.nvlink_fatal = fatal;
  // What failed: the text after "Fatal, " and "Link NN " ("LTSSM Fault Up").
  size_t comma = t.find(", ");
  std::string_view what = comma == t.npos ? std::string_view{} : t.substr(comma + 2);
  if (StartsWith(what, "Link ")) {
    std::string_view digits = LeadingDigits(what.substr(5));
    if (auto id = ParseBoundedDecimal(digits, 4)) r.event.ids.push_back(*id);
    what = what.substr(5 + digits.size());
  }
  what = Trim(what.substr(0, 120));
  if (size_t first = what.find(" (First)"); first != what.npos) what = what.substr(0, first);
  if (!what.empty()) r.event.error_names.emplace_back(what);
  return r;
}

SignalResult ParseCpuStallLine(std::string_view m) {
  // "watchdog: BUG: soft lockup - CPU#9 stuck for 22s! [irq/162-nvidia:1307]" (older kernels:
  // "NMI watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [comm:pid]").
  if (size_t k = m.find("BUG: soft lockup - CPU#"); k != m.npos) {
    std::string_view t = m.substr(k + 23);
    std::string_view cpu_text = LeadingDigits(t);
    auto cpu = ParseBoundedDecimal(cpu_text, 6);
    t = t.substr(cpu_text.size());
    if (!cpu || !StartsWith(t, " stuck for ")) return {SignalVerdict::kGarbled, {}};
    t = t.substr(11);
    std::string_view secs_text = LeadingDigits(t);
    auto secs = ParseBoundedDecimal(secs_text, 10);
    t = t.substr(secs_text.size());
    size_t open = t.find('[');
    size_t close = t.rfind(']');
    if (!secs || !StartsWith(t, "s!") || open == t.npos || close == t.npos || close < open) {
      return {SignalVerdict::kGarbled, {}};
    }
    std::optional<Task> who = ParseTask(t.substr(open + 1, close - open - 1));
    if (!who) return {SignalVerdict::kGarbled, {}};
    SignalResult r = Event(KernelEventKind::kCpuStall, "soft lockup");
    r.event.max_blocked_s = *secs;
    r.event.ids.push_back(*cpu);
    r.event.processes.push_back(who->Label());
    r.event.nvidia_related = IsNvidiaTaskName(who->comm);
    return r;
  }
  // "Watchdog detected hard LOCKUP on cpu 3" (the NMI watchdog; the kernel usually panics).
  if (size_t k = m.find("Watchdog detected hard LOCKUP on cpu "); k != m.npos) {
    auto cpu = ParseBoundedDecimal(LeadingDigits(m.substr(k + 37)), 6);
    if (!cpu) return {SignalVerdict::kGarbled, {}};
    SignalResult r = Event(KernelEventKind::kCpuStall, "hard lockup");
    r.event.ids.push_back(*cpu);
    return r;
  }
  // RCU: "rcu: INFO: rcu_sched self-detected stall on CPU", "INFO: rcu_preempt detected stalls
  // on CPUs/tasks:" (older kernels without the "rcu: " prefix). The per-CPU lines after them
  // ("rcu:     9-....: (5249 ticks this GP) ...") are detail.
  size_t info = m.find("INFO: rcu_");
  if (info != m.npos && m.find("detected stall", info) != m.npos) {
    std::string_view flavor = m.substr(info + 6);
    flavor = flavor.substr(0, flavor.find(' '));
    if (flavor.size() > 16) return {SignalVerdict::kGarbled, {}};
    return Event(KernelEventKind::kCpuStall, "RCU stall (" + std::string(flavor) + ")");
  }
  return {};
}

SignalResult ParseAerLine(std::string_view m) {
  SignalResult none;
  size_t pbe = m.find("PCIe Bus Error: severity=");
  if (pbe != std::string_view::npos) {
    auto pci = PrefixDevice(m);
    if (!pci) return {SignalVerdict::kGarbled, {}};
    std::string_view sev_text = m.substr(pbe + 25);
    sev_text = sev_text.substr(0, sev_text.find(','));
    AerSeverity sev;
    if (StartsWith(sev_text, "Correct")) {
      sev = AerSeverity::kCorrected;
    } else if (sev_text.find("Non-Fatal") != sev_text.npos) {
      sev = AerSeverity::kNonFatal;
    } else if (sev_text.find("Fatal") != sev_text.npos) {
      sev = AerSeverity::kFatal;
    } else {
      return {SignalVerdict::kGarbled, {}};
    }
    SignalResult r = Event(KernelEventKind::kPcieAer, pci->ToString());
    r.event.pci = pci;
    r.event.aer_severity = sev;
    if (size_t tp = m.find("type=", pbe); tp != m.npos) {
      std::string_view t = m.substr(tp + 5);
      t = t.substr(0, t.find(','));
      if (t.size() <= 32) r.event.aer_type = std::string(t);
    }
    return r;
  }
  if (size_t dev = m.find("device ["); dev != m.npos && m.find("error status/mask=") != m.npos) {
    auto pci = PrefixDevice(m);
    std::string_view ids = m.substr(dev + 8);
    size_t colon = ids.find(':'), close = ids.find(']');
    if (!pci || colon != 4 || close != 9) return {SignalVerdict::kGarbled, {}};
    auto vendor = ParseHex(ids.substr(0, 4));
    auto device = ParseHex(ids.substr(5, 4));
    if (!vendor || !device) return {SignalVerdict::kGarbled, {}};
    SignalResult r;
    r.verdict = SignalVerdict::kAttach;
    r.event.kind = KernelEventKind::kPcieAer;
    r.event.pci = pci;
    r.event.subject = pci->ToString();
    r.event.vendor_id = static_cast<uint32_t>(*vendor);
    r.event.device_id = static_cast<uint32_t>(*device);
    return r;
  }
  // Error bit lines: "<drv> <bdf>: AER:    [ 0] RxErr                  (First)".
  if (size_t open = m.find("   ["); open != m.npos) {
    size_t close = m.find("] ", open);
    auto pci = PrefixDevice(m);
    if (close == m.npos || !pci) return none;
    if (!ParseBoundedDecimal(Trim(m.substr(open + 4, close - open - 4)), 2)) return none;
    std::string_view name = m.substr(close + 2);
    if (size_t first = name.find("(First)"); first != name.npos) name = name.substr(0, first);
    name = Trim(name);
    if (name.empty() || name.size() > 40) return none;
    SignalResult r;
    r.verdict = SignalVerdict::kAttach;
    r.event.kind = KernelEventKind::kPcieAer;
    r.event.pci = pci;
    r.event.subject = pci->ToString();
    r.event.error_names.emplace_back(name);
    return r;
  }
  // "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)": an uncorrectable
  // error below a port the kernel reset, and the GPU's driver has no AER recovery (NVIDIA's
  // registers none): the GPU stays unusable until it is reset. Counted as a fatal error of the
  // GPU itself (the port's own report names only the port); other drivers' devices are left to
  // the port's report.
  // Kernels before 5.x print "nvidia 0000:02:00.0: device has no AER-aware driver" instead.
  if ((m.find("AER: can't recover") != m.npos || m.find("has no AER-aware driver") != m.npos) &&
      Token(m, 0) == "nvidia") {
    auto pci = PrefixDevice(m);
    if (!pci) return {SignalVerdict::kGarbled, {}};
    SignalResult r = Event(KernelEventKind::kPcieAer, pci->ToString());
    r.event.pci = pci;
    r.event.aer_severity = AerSeverity::kFatal;
    r.event.aer_type = "not recovered";
    r.event.vendor_id = 0x10de;
    return r;
  }
  if (m.find("AER:") != m.npos) return {SignalVerdict::kRecognized, {}};
  return none;
}

SignalResult ParseHungTaskLine(std::string_view m) {
  size_t task = m.find("INFO: task ");
  size_t blocked = m.find(" blocked for more than ");
  if (task == m.npos || blocked == m.npos || blocked < task + 11) return {};
  std::optional<Task> who = ParseTask(m.substr(task + 11, blocked - task - 11));
  std::string_view secs = LeadingDigits(m.substr(blocked + 23));
  auto blocked_s = ParseBoundedDecimal(secs, 10);
  if (!who || !blocked_s) return {SignalVerdict::kGarbled, {}};
  SignalResult r = Event(KernelEventKind::kHungTask, who->comm);
  r.event.max_blocked_s = *blocked_s;
  r.event.processes.push_back(who->Label());
  r.event.nvidia_related = IsNvidiaTaskName(who->comm);
  return r;
}

SignalResult ParseOomLine(std::string_view m, bool memcg) {
  size_t k = m.find("Killed process ");
  if (k == m.npos) {
    if (m.find("invoked oom-killer:") != m.npos || m.find("oom-kill:") != m.npos) {
      return {SignalVerdict::kRecognized, {}};
    }
    return {};
  }
  std::string_view t = m.substr(k + 15);
  std::string_view pid_text = LeadingDigits(t);
  auto pid = ParseBoundedDecimal(pid_text, 10);
  if (!pid || t.size() < pid_text.size() + 3 || t[pid_text.size()] != ' ' ||
      t[pid_text.size() + 1] != '(') {
    return {SignalVerdict::kGarbled, {}};
  }
  std::string_view after = t.substr(pid_text.size() + 2);
  size_t close = after.find(") total-vm:");
  if (close == after.npos) close = after.rfind(')');
  if (close == after.npos || close > 64) return {SignalVerdict::kGarbled, {}};
  std::string comm(after.substr(0, close));
  bool cgroup = memcg || StartsWith(m, "Memory cgroup out of memory");
  SignalResult r = Event(KernelEventKind::kOom, comm);
  r.event.cgroup_oom = cgroup;
  r.event.processes.push_back(comm + "[" + std::to_string(*pid) + "]");
  if (size_t a = m.find("anon-rss:"); a != m.npos) {
    std::string_view kb = LeadingDigits(m.substr(a + 9));
    auto v = ParseBoundedDecimal(kb, 15);
    if (!v) return {SignalVerdict::kGarbled, {}};
    r.event.max_anon_rss_kb = *v;
  }
  return r;
}

SignalResult ParseMceLine(std::string_view m) {
  size_t he = m.find("[Hardware Error]: ");
  if (m.find("Machine check events logged") != m.npos) {
    SignalResult r = Event(KernelEventKind::kMce, "machine-check");
    r.event.mce_events_logged = 1;
    return r;
  }
  if (he == m.npos) return {};
  std::string_view t = m.substr(he + 18);
  if (size_t mc = t.find("Machine Check"); mc != t.npos) {
    SignalResult r = Event(KernelEventKind::kMce, "machine-check");
    r.event.mce_exception = t.find("Machine Check Exception") != t.npos;
    if (StartsWith(t, "CPU ")) {
      auto cpu = ParseBoundedDecimal(LeadingDigits(t.substr(4)), 6);
      if (!cpu) return {SignalVerdict::kGarbled, {}};
      r.event.ids.push_back(*cpu);
    }
    return r;
  }
  if (size_t sev = t.find("event severity: "); sev != t.npos) {
    std::string_view s = Trim(t.substr(sev + 16));
    if (s.size() > 16) return {SignalVerdict::kGarbled, {}};
    SignalResult r = Event(KernelEventKind::kMce, "apei-" + std::string(s));
    r.event.mce_exception = s == "fatal";
    return r;
  }
  return {SignalVerdict::kRecognized, {}};
}

SignalResult ParseNetLinkLine(std::string_view m) {
  // Bonding driver: "bond0: link status down for interface eno4, disabling it in 200 ms",
  // "... link status definitely down for interface eth0, disabling it", "... link status
  // definitely up for interface eno1, 10000 Mbps full duplex" and the newer "bond0: (slave eno1):
  // link status definitely down, disabling slave". The subject is the member interface.
  if (size_t ls = m.find("link status "); ls != m.npos) {
    std::string_view rest = m.substr(ls + 12);
    if (StartsWith(rest, "definitely ")) rest.remove_prefix(11);
    const bool down = StartsWith(rest, "down");
    if (down || StartsWith(rest, "up")) {
      std::string_view ifname;
      if (size_t fi = rest.find("for interface "); fi != rest.npos && fi < 24) {
        ifname = Token(rest.substr(fi + 14), 0);
        while (!ifname.empty() && ifname.back() == ',') ifname.remove_suffix(1);
      }
      if (ifname.empty()) {
        if (size_t sl = m.rfind("(slave ", ls); sl != m.npos) {
          std::string_view t = m.substr(sl + 7, ls - sl - 7);
          ifname = t.substr(0, t.find(')'));
        }
      }
      if (!ValidIfName(ifname)) return {SignalVerdict::kGarbled, {}};
      SignalResult r = Event(KernelEventKind::kNetLink, std::string(ifname));
      (down ? r.event.link_down : r.event.link_up) = 1;
      return r;
    }
  }
  if (size_t wd = m.find("NETDEV WATCHDOG: "); wd != m.npos) {
    std::string_view after = m.substr(wd + 17);
    std::string_view ifname;
    if (StartsWith(after, "CPU: ")) {  // newest: "<drv> <bdf> <if>: NETDEV WATCHDOG: CPU: n: ..."
      auto before = Split(m.substr(0, wd), " ");
      if (!before.empty()) ifname = StripColon(before.back());
    } else {
      ifname = Token(after, 0);
    }
    if (!ValidIfName(ifname) || m.find("timed out") == m.npos) return {SignalVerdict::kGarbled, {}};
    SignalResult r = Event(KernelEventKind::kNetLink, std::string(ifname));
    r.event.tx_timeouts = 1;
    return r;
  }
  // State words after "Link " ("NIC Link is Up", "Link down", "Port: 1 Link DOWN", ...), taken
  // at the first "Link " that has one; longer words first ("is Down" before "is ").
  struct Form {
    std::string_view word;
    bool up;
  };
  static constexpr Form kForms[] = {
      {"is Down", false}, {"is Up", true}, {"is down", false}, {"is up", true}, {"down", false},
      {"up", true},       {"Down", false}, {"Up", true},       {"DOWN", false}, {"ACTIVE", true},
  };
  size_t pos = m.npos;
  const Form* form = nullptr;
  for (size_t at = m.find("Link "); at != m.npos && form == nullptr; at = m.find("Link ", at + 1)) {
    std::string_view rest = m.substr(at + 5);
    for (const Form& f : kForms) {
      if (!StartsWith(rest, f.word)) continue;
      // The word must end there or continue with a space/punctuation ("Link up" vs "Link update").
      size_t end = f.word.size();
      if (end < rest.size() && rest[end] != ' ' && rest[end] != '.' && rest[end] != ',') continue;
      pos = at;
      form = &f;
      break;
    }
  }
  if (form != nullptr) {
    const Form& f = *form;
    auto before = Split(m.substr(0, pos), " ");
    std::string_view ifname;
    std::string subject;
    if (before.size() >= 3 && before[before.size() - 2] == "Port:") {
      // RDMA: "mlx5_core <bdf> mlx5_0: Port: 1 Link DOWN"
      ifname = StripColon(before[before.size() - 3]);
      if (!ValidIfName(ifname) || !ParseBoundedDecimal(before.back(), 3))
        return {SignalVerdict::kGarbled, {}};
      subject = std::string(ifname) + "/" + std::string(before.back());
    } else if (!before.empty()) {
      ifname = StripColon(before.back());
      if (ifname == "NIC" && before.size() >= 2) ifname = StripColon(before[before.size() - 2]);
      if (!ValidIfName(ifname)) return {SignalVerdict::kGarbled, {}};
      subject = std::string(ifname);
    } else {
      return {SignalVerdict::kGarbled, {}};
    }
    SignalResult r = Event(KernelEventKind::kNetLink, subject);
    (f.up ? r.event.link_up : r.event.link_down) = 1;
    return r;
  }
  return {};
}

SignalResult ParseCpuThermalLine(std::string_view m) {
  size_t cpu = m.find("CPU");
  if (cpu == m.npos) return {};
  std::string_view t = m.substr(cpu + 3);
  std::string_view num = LeadingDigits(t);
  if (num.empty() || t.substr(num.size(), 2) != ": ") return {};
  std::string_view rest = t.substr(num.size() + 2);
  std::string subject;
  if (StartsWith(rest, "Core temperature")) {
    subject = "core";
  } else if (StartsWith(rest, "Package temperature")) {
    subject = "package";
  } else {
    return {};
  }
  if (rest.find("temperature/speed normal") != rest.npos) return {SignalVerdict::kRecognized, {}};
  if (rest.find("above threshold") == rest.npos) return {};
  auto cpu_num = ParseBoundedDecimal(num, 6);
  if (!cpu_num) return {SignalVerdict::kGarbled, {}};
  SignalResult r = Event(KernelEventKind::kCpuThermal, subject);
  r.event.ids.push_back(*cpu_num);
  if (size_t te = rest.find("total events = "); te != rest.npos) {
    auto n = ParseBoundedDecimal(LeadingDigits(rest.substr(te + 15)), 12);
    if (!n) return {SignalVerdict::kGarbled, {}};
    r.event.max_total_events = *n;
  }
  return r;
}

}  // namespace gpudoctor
