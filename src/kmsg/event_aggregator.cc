#include "kmsg/event_aggregator.h"

#include <algorithm>

#include "core/strings.h"

namespace gpudoctor {
namespace {

template <typename T>
void AddBounded(std::vector<T>& v, const T& x, size_t max, bool* truncated = nullptr) {
  if (std::find(v.begin(), v.end(), x) != v.end()) return;
  if (v.size() >= max) {
    if (truncated) *truncated = true;
    return;
  }
  v.push_back(x);
}

void MaxInto(std::optional<int64_t>& into, const std::optional<int64_t>& v) {
  if (v && (!into || *v > *into)) into = v;
}

// Whether `label` is "name[pid]" (or "name" without a pid) for these parts.
bool IsProcessLabel(std::string_view label, std::string_view name, std::optional<int64_t> pid) {
  if (label.substr(0, name.size()) != name) return false;
  label.remove_prefix(name.size());
  if (!pid) return label.empty();
  if (label.size() < 3 || label.front() != '[' || label.back() != ']') return false;
  label = label.substr(1, label.size() - 2);
  int64_t v = 0;
  for (char c : label) {
    if (c < '0' || c > '9' || v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (c - '0');
  }
  return v == *pid && !(label.size() > 1 && label[0] == '0') && *pid >= 0;
}

std::string ProcessLabel(std::string_view name, std::optional<int64_t> pid) {
  std::string s(name);
  if (pid) {  // appended piece by piece: GCC 12 warns (-Wrestrict, wrongly) on "[" + ... + "]"
    s += '[';
    s += std::to_string(*pid);
    s += ']';
  }
  return s;
}

// Bits 0-13: the Xid code (1 .. 9999); 14-16 function, 17-21 device, 22-29 bus, 30-61 domain.
// Every field is within its range (ParsePciTuple checks; a domain above 32 bits does not parse).
uint64_t XidKey(const PciAddress& a, int xid) {
  return (static_cast<uint64_t>(a.domain) << 30) | (static_cast<uint64_t>(a.bus & 0xff) << 22) |
         (static_cast<uint64_t>(a.device & 0x1f) << 17) |
         (static_cast<uint64_t>(a.function & 7) << 14) | static_cast<uint64_t>(xid & 0x3fff);
}

}  // namespace

KernelEvent EventAggregator::XidEvent(const XidLine& x) {
  KernelEvent d;
  d.kind = KernelEventKind::kXid;
  d.pci = x.pci;
  d.subject = x.pci.ToString();
  d.xid = x.xid;
  if (!x.process.empty() || x.pid) d.processes.push_back(ProcessLabel(x.process, x.pid));
  if (x.gpu_instance) d.ids.push_back(*x.gpu_instance);
  d.reset_required = x.reset_required.value_or(false);
  d.drain_reset_required = x.drain_reset_required.value_or(false);
  if (!x.nvlink_unit.empty()) {
    d.nvlink_unit = std::string(x.nvlink_unit);
    d.nvlink_fatal = x.nvlink_fatal;
    d.nvlink_intrinfo = x.nvlink_intrinfo;
    d.nvlink_errstatus = x.nvlink_errstatus;
    if (x.nvlink_link) d.ids.push_back(*x.nvlink_link);
  }
  if (!x.recovery_action.empty()) d.recovery_actions.emplace_back(x.recovery_action);
  return d;
}

KernelEvent* EventAggregator::ObserveXid(const XidLine& x, const LogTime& t,
                                         std::string_view line) {
  return ObserveXidAs(x, x.pid, t, line, nullptr);
}

KernelEvent* EventAggregator::ObserveXidAs(const XidLine& x, std::optional<int64_t> pid,
                                           const LogTime& t, std::string_view line,
                                           EventSlotHint* hint) {
  size_t slot;
  if (hint != nullptr && hint->epoch == epoch_) {
    slot = hint->slot;  // the entry of this (GPU, code), unmoved since the hint was given
  } else if (!FindXidSlot(x, &slot)) {
    KernelEvent* e;
    if (pid == x.pid) {
      e = Observe(XidEvent(x), t, line);
    } else {
      XidLine with_pid = x;
      with_pid.pid = pid;
      e = Observe(XidEvent(with_pid), t, line);
    }
    if (e == nullptr) return nullptr;
    const size_t at = static_cast<size_t>(e - events_.data());
    if (const uint64_t key = XidKeyOf(x)) {
      xid_index_.emplace(key, at);
      if (hint != nullptr) *hint = {epoch_, at};
    }
    return e;
  }
  if (hint != nullptr) *hint = {epoch_, slot};
  return UpdateXid(events_[slot], x, pid, t);
}

uint64_t EventAggregator::XidKeyOf(const XidLine& x) {
  const bool keyed = x.xid >= 1 && x.xid <= 9999 && x.pci.bus <= 0xff && x.pci.device <= 0x1f &&
                     x.pci.function <= 7;
  return keyed ? XidKey(x.pci, x.xid) : 0;
}

bool EventAggregator::FindXidSlot(const XidLine& x, size_t* slot) {
  const uint64_t key = XidKeyOf(x);
  if (key == 0) return false;
  // The front table answers a storm's few keys without hashing into the map.
  XidFront& front = xid_front_[(key * 0x9e3779b97f4a7c15ull) >> 58];
  if (front.key == key) {
    *slot = front.slot;
    return true;
  }
  auto it = xid_index_.find(key);
  if (it == xid_index_.end()) return false;
  front = {key, it->second};
  *slot = it->second;
  return true;
}

// pid by reference: an optional passed by value is built with a byte store and read back as a
// word, a store-forwarding stall on every line of a storm.
KernelEvent* EventAggregator::UpdateXid(KernelEvent& e, const XidLine& x,
                                        const std::optional<int64_t>& pid, const LogTime& t) {
  // What Observe and MergeFields do with XidEvent(x) for an existing entry, field by field.
  if (e.count < UINT64_MAX) ++e.count;
  if (!t.empty()) {
    if (e.first.empty()) e.first = t;
    e.last = t;
  }
  if (!e.pci) e.pci = x.pci;
  // A full, already truncated list stays as it is whatever the label: no search (a storm names
  // a new pid on every line).
  const bool list_settled = e.processes_truncated && e.processes.size() >= kMaxProcesses;
  if ((!x.process.empty() || pid) && !list_settled) {
    bool known = false;
    for (const std::string& p : e.processes) {
      if (IsProcessLabel(p, x.process, pid)) {
        known = true;
        break;
      }
    }
    if (!known) {
      if (e.processes.size() >= kMaxProcesses) {
        e.processes_truncated = true;
      } else {
        e.processes.push_back(ProcessLabel(x.process, pid));
      }
    }
  }
  if (x.gpu_instance) AddBounded(e.ids, static_cast<int64_t>(*x.gpu_instance), kMaxIds);
  e.reset_required |= x.reset_required.value_or(false);
  e.drain_reset_required |= x.drain_reset_required.value_or(false);
  if (!x.nvlink_unit.empty()) {
    e.nvlink_unit.assign(x.nvlink_unit);
    e.nvlink_intrinfo = x.nvlink_intrinfo;
    e.nvlink_errstatus = x.nvlink_errstatus;
    e.nvlink_fatal |= x.nvlink_fatal;
    if (x.nvlink_link) AddBounded(e.ids, static_cast<int64_t>(*x.nvlink_link), kMaxIds);
  }
  if (!x.recovery_action.empty()) {
    bool known = false;
    for (const std::string& r : e.recovery_actions) known = known || r == x.recovery_action;
    if (!known && e.recovery_actions.size() < kMaxProcesses) {
      e.recovery_actions.emplace_back(x.recovery_action);
    }
  }
  return &e;
}

std::string EventAggregator::Key(const KernelEvent& e) {
  std::string k = KernelEventKindName(e.kind);
  k += '|';
  k += e.subject;
  if (e.kind == KernelEventKind::kXid || e.kind == KernelEventKind::kNvswitchSxid) {
    k += '|';
    k += std::to_string(e.xid);
  }
  if (e.kind == KernelEventKind::kPcieAer) k += AerSeverityName(e.aer_severity);
  if (e.kind == KernelEventKind::kOom && e.cgroup_oom) k += "|memcg";
  return k;
}

int EventAggregator::Rank(const KernelEvent& e) {
  switch (e.kind) {
    case KernelEventKind::kXid:
    case KernelEventKind::kGpuLost:
    case KernelEventKind::kDriverInitFailed:
    case KernelEventKind::kGspTimeout:
    case KernelEventKind::kDriverMismatch:
    case KernelEventKind::kMce:
    case KernelEventKind::kResetRequired:
      return 3;
    case KernelEventKind::kHungTask:
    case KernelEventKind::kCpuStall:
      return 2;
    case KernelEventKind::kPcieAer:
      return e.aer_severity == AerSeverity::kCorrected ? 1 : 2;
    case KernelEventKind::kNvswitchSxid:
      return e.nvlink_fatal ? 3 : 1;
    case KernelEventKind::kOom:
    case KernelEventKind::kNetLink:
    case KernelEventKind::kCpuThermal:
      return 1;
  }
  return 1;
}

void EventAggregator::MergeFields(KernelEvent& e, const KernelEvent& d) {
  if (!e.pci && d.pci) e.pci = d.pci;
  for (const auto& p : d.processes)
    AddBounded(e.processes, p, kMaxProcesses, &e.processes_truncated);
  for (int64_t id : d.ids) AddBounded(e.ids, id, kMaxIds);
  e.reset_required |= d.reset_required;
  e.drain_reset_required |= d.drain_reset_required;
  if (!d.nvlink_unit.empty()) {
    e.nvlink_unit = d.nvlink_unit;
    e.nvlink_intrinfo = d.nvlink_intrinfo;
    e.nvlink_errstatus = d.nvlink_errstatus;
  }
  e.nvlink_fatal |= d.nvlink_fatal;
  for (const auto& r : d.recovery_actions) AddBounded(e.recovery_actions, r, kMaxProcesses);
  if (e.client_version.empty()) e.client_version = d.client_version;
  if (e.module_version.empty()) e.module_version = d.module_version;
  if (d.vendor_id) e.vendor_id = d.vendor_id;
  if (d.device_id) e.device_id = d.device_id;
  if (e.aer_type.empty()) e.aer_type = d.aer_type;
  for (const auto& n : d.error_names) AddBounded(e.error_names, n, kMaxErrorNames);
  MaxInto(e.max_blocked_s, d.max_blocked_s);
  e.nvidia_related |= d.nvidia_related;
  MaxInto(e.max_anon_rss_kb, d.max_anon_rss_kb);
  e.mce_exception |= d.mce_exception;
  e.mce_events_logged += d.mce_events_logged;
  e.link_down += d.link_down;
  e.link_up += d.link_up;
  e.tx_timeouts += d.tx_timeouts;
  MaxInto(e.max_total_events, d.max_total_events);
  if (e.error_code.empty()) e.error_code = d.error_code;
}

KernelEvent* EventAggregator::Observe(const KernelEvent& delta, const LogTime& t,
                                      std::string_view line) {
  std::string key = Key(delta);
  auto it = index_.find(key);
  if (it == index_.end()) {
    size_t slot = events_.size();
    const int rank = Rank(delta);
    if (events_.size() >= kMaxEvents) {
      // Full: a more serious event replaces the latest entry of the least serious rank, so a
      // flood of OOM kills or link flaps cannot hide a later Xid 79.
      ++dropped_;
      int low = 0;
      while (low < rank && rank_counts_[low] == 0) ++low;
      if (low >= rank) return nullptr;
      slot = kMaxEvents;
      for (size_t k = events_.size(); k-- > 0;) {
        if (Rank(events_[k]) == low) {
          slot = k;
          break;
        }
      }
      if (slot == kMaxEvents) return nullptr;
      --rank_counts_[low];
      index_.erase(Key(events_[slot]));
      ClearXidIndex();  // the slot changes hands; ObserveXid rebuilds what it needs
    }
    KernelEvent e;
    e.kind = delta.kind;
    e.subject = delta.subject;
    e.xid = delta.xid;
    e.aer_severity = delta.aer_severity;
    e.cgroup_oom = delta.cgroup_oom;
    e.first = t;
    e.sample = Sanitize(line, kMaxSampleBytes);
    ++rank_counts_[rank];
    it = index_.emplace(std::move(key), slot).first;
    if (slot == events_.size()) {
      events_.push_back(std::move(e));
    } else {
      events_[slot] = std::move(e);
    }
  }
  KernelEvent& e = events_[it->second];
  if (e.count < UINT64_MAX) ++e.count;
  if (!t.empty()) {
    if (e.first.empty()) e.first = t;
    e.last = t;
  }
  MergeFields(e, delta);
  return &e;
}

KernelEvent* EventAggregator::Observe(const KernelEvent& delta, const LogTime& t,
                                      std::string_view line, EventSlotHint* hint) {
  if (hint->epoch != epoch_) {
    KernelEvent* e = Observe(delta, t, line);
    *hint = e != nullptr ? EventSlotHint{epoch_, static_cast<size_t>(e - events_.data())}
                         : EventSlotHint{};
    return e;
  }
  // What Observe does for an entry that exists.
  KernelEvent& e = events_[hint->slot];
  if (e.count < UINT64_MAX) ++e.count;
  if (!t.empty()) {
    if (e.first.empty()) e.first = t;
    e.last = t;
  }
  MergeFields(e, delta);
  return &e;
}

bool EventAggregator::Attach(const KernelEvent& delta) {
  // Latest entry of the same kind and subject (any severity).
  for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
    if (it->kind == delta.kind && it->subject == delta.subject) {
      MergeFields(*it, delta);
      return true;
    }
  }
  return false;
}

void EventAggregator::ClearXidIndex() {
  ++epoch_;
  xid_index_.clear();
  xid_front_.fill(XidFront{});
}

void EventAggregator::Clear() {
  events_.clear();
  index_.clear();
  ClearXidIndex();
  rank_counts_.fill(0);
}

std::vector<KernelEvent> EventAggregator::TakeEvents() {
  index_.clear();
  ClearXidIndex();
  rank_counts_.fill(0);
  return std::move(events_);
}

}  // namespace gpudoctor
