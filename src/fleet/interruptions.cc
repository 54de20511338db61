#include "fleet/interruptions.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "core/strings.h"
#include "fleet/failure_stats.h"
#include "fleet/onsets.h"

namespace gpudoctor::fleet {

std::pair<double, double> PoissonInterval95(int n) {
  constexpr double z = 1.959964;
  if (n <= 0) return {0.0, 3.689};  // exact upper bound for 0 events
  auto wh = [](double k, double sign) {
    return k * std::pow(1 - 1 / (9 * k) + sign * z / (3 * std::sqrt(k)), 3);
  };
  return {wh(n, -1), wh(n + 1.0, +1)};
}

InterruptionStats ComputeInterruptions(const FleetData& data, const std::vector<size_t>& onsets,
                                       const std::vector<Lemon>& lemons, double gpu_days,
                                       int64_t gap_s) {
  InterruptionStats st;
  st.gpu_days = gpu_days;
  for (const char* c : kCategories) st.by_category[c] = 0;
  std::map<std::string, int64_t> first_report;
  std::map<std::string, int64_t>::iterator last = first_report.end();  // grouped by node
  for (const auto& r : data.reports) {
    if (last != first_report.end() && last->first == r.node) {
      last->second = std::min(last->second, r.time_s);
      continue;
    }
    auto [it, inserted] = first_report.emplace(r.node, r.time_s);
    if (!inserted) it->second = std::min(it->second, r.time_s);
    last = it;
  }
  std::set<std::string> lemon_nodes, lemon_cards;
  for (const auto& l : lemons) (l.kind == "node" ? lemon_nodes : lemon_cards).insert(l.name);
  // Built when an interruption needs a serial (O(cards + samples): 0.15 s at 100k GPUs).
  std::optional<CardIndex> index;
  std::map<std::string, std::vector<size_t>> per_node;
  for (size_t i : onsets) {
    const FindingEvent& e = data.findings[i];
    if (e.severity != Severity::kCrit || !IsHardwareClass(e)) continue;
    if (e.time_s <= first_report[e.node]) {
      ++st.present_at_start;
      continue;
    }
    per_node[e.node].push_back(i);
  }
  for (auto& [node, idx] : per_node) {
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return data.findings[a].time_s < data.findings[b].time_s;
    });
    std::vector<std::vector<size_t>> incidents;
    int64_t last = 0;
    for (size_t i : idx) {
      int64_t t = data.findings[i].time_s;
      if (incidents.empty() || t - last > gap_s) incidents.emplace_back();
      incidents.back().push_back(i);
      last = t;
    }
    for (const auto& inc : incidents) {
      Interruption x;
      x.node = node;
      x.time_s = data.findings[inc[0]].time_s;
      x.findings = static_cast<int>(inc.size());
      size_t named = inc[0];
      for (size_t i : inc) {
        if (data.findings[i].id != "gpu.xid") {
          named = i;
          break;
        }
      }
      x.id = data.findings[named].id;
      x.category = CategoryOf(data.findings[named]);
      for (size_t i : inc) {
        if (!x.serial.empty()) continue;
        if (!index) index.emplace(data);
        x.serial = SerialOf(*index, data.findings[i]);
      }
      x.lemon =
          lemon_nodes.count(node) != 0 || (!x.serial.empty() && lemon_cards.count(x.serial) != 0);
      st.list.push_back(std::move(x));
    }
  }
  std::stable_sort(
      st.list.begin(), st.list.end(),
      [](const Interruption& a, const Interruption& b) { return a.time_s < b.time_s; });
  for (const auto& x : st.list) {
    ++st.unexpected;
    ++st.by_category[x.category];
    if (x.lemon) ++st.lemon_interruptions;
  }
  const int n = st.unexpected - st.lemon_interruptions;
  const double meta_rate = kMetaUnexpected / (kMetaDays * kMetaGpus);
  for (int i = 0; i < 3; ++i) st.meta_per_day_at[i] = meta_rate * kProjectionGpus[i];
  if (gpu_days <= 0) {
    st.arithmetic = "no observed GPU-time";
    return st;
  }
  auto [lo, hi] = PoissonInterval95(n);
  st.per_gpu_day = n / gpu_days;
  st.per_gpu_day_lo = lo / gpu_days;
  st.per_gpu_day_hi = hi / gpu_days;
  st.arithmetic = std::to_string(n) + " interruptions (without " +
                  std::to_string(st.lemon_interruptions) + " on lemons) / " +
                  FormatDouble(gpu_days, 2) + " GPU-days = " + FormatDouble(st.per_gpu_day, 5) +
                  " per GPU-day (95%: " + FormatDouble(st.per_gpu_day_lo, 5) + ".." +
                  FormatDouble(st.per_gpu_day_hi, 5) + ")";
  for (int i = 0; i < 3; ++i) {
    st.per_day_at[i] = st.per_gpu_day * kProjectionGpus[i];
    st.lo_at[i] = st.per_gpu_day_lo * kProjectionGpus[i];
    st.hi_at[i] = st.per_gpu_day_hi * kProjectionGpus[i];
  }
  return st;
}

}  // namespace gpudoctor::fleet
