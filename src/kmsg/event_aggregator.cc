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

}  // namespace

std::string EventAggregator::Key(const KernelEvent& e) {
  std::string k = KernelEventKindName(e.kind);
  k += '|';
  k += e.subject;
  if (e.kind == KernelEventKind::kXid) {
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
      return 3;
    case KernelEventKind::kHungTask:
      return 2;
    case KernelEventKind::kPcieAer:
      return e.aer_severity == AerSeverity::kCorrected ? 1 : 2;
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

void EventAggregator::Clear() {
  events_.clear();
  index_.clear();
  rank_counts_.fill(0);
}

std::vector<KernelEvent> EventAggregator::TakeEvents() {
  index_.clear();
  rank_counts_.fill(0);
  return std::move(events_);
}

}  // namespace gpudoctor
