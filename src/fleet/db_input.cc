#include "fleet/db_input.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>

#include "core/input_file.h"
#include "facts/gpu_facts.h"
#include "store/history_store.h"

namespace gpudoctor::fleet {
namespace {

constexpr size_t kMaxRows = 1'000'000;
// Points per series: at least one per window, at most this many (longer histories are
// downsampled by the store).
constexpr int kMaxPointsPerSeries = 20'000;

// The per-GPU series fleet compares, as watch stores them (metric_table.cc), and where each
// value goes (in fleet's units).
enum class Field { kSm, kPower, kUtil, kTemp, kReasons, kSbe, kDbe, kReplays, kMaxSm, kLimit };
struct SeriesSpec {
  const char* metric;
  Field field;
  double scale;
  const ValueRange* range;  // physical range after scaling; nullptr: counters (>= 0)
};
constexpr SeriesSpec kSeries[] = {
    {"gpudoctor_gpu_sm_clock_hertz", Field::kSm, 1e-6, &kSmClockRangeMhz},
    {"gpudoctor_gpu_power_watts", Field::kPower, 1, &kPowerRangeW},
    {"gpudoctor_gpu_utilization_ratio", Field::kUtil, 100, &kUtilRangePct},
    {"gpudoctor_gpu_temperature_celsius", Field::kTemp, 1, &kTempRangeC},
    {"gpudoctor_gpu_clock_event_reasons", Field::kReasons, 1, nullptr},
    {"gpudoctor_gpu_ecc_sbe_volatile_total", Field::kSbe, 1, nullptr},
    {"gpudoctor_gpu_ecc_dbe_volatile_total", Field::kDbe, 1, nullptr},
    {"gpudoctor_gpu_pcie_replays_total", Field::kReplays, 1, nullptr},
    {"gpudoctor_gpu_sm_clock_max_hertz", Field::kMaxSm, 1e-6, &kSmClockRangeMhz},
    {"gpudoctor_gpu_power_limit_watts", Field::kLimit, 1, &kPowerRangeW},
};

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::optional<uint32_t> AsCounter(double v) {
  if (!(v >= 0)) return std::nullopt;
  return static_cast<uint32_t>(std::min(v, 4294967295.0));
}

}  // namespace

Status ReadHistoryDb(const std::string& path, FleetData& data, TimePoint deadline,
                     int64_t window_s) {
  // SQLite would block opening a FIFO (and read a device): only a regular file is a database.
  if (Status s = RequireRegularFile(path); !s.ok()) return s;
  auto late = [&] {
    return SteadyClock::now() > deadline
               ? TimeoutError(path + ": not read within the deadline (--deadline)")
               : Status::Ok();
  };
  // Through the store's reader: the schema's SQL lives in src/store only.
  auto reader = HistoryReader::Open(path, deadline);
  if (!reader.ok()) return reader.status();
  auto hostname = (*reader)->Hostname();
  if (!hostname.ok()) return ParseError(hostname.status().message());
  const std::string& host = *hostname;
  auto gpus = (*reader)->QueryGpus(kMaxRows);
  if (!gpus.ok()) return gpus.status();
  struct Row {
    Card card;
    int64_t first = 0, last = 0;
  };
  std::vector<Row> rows;
  for (const StoredGpu& g : *gpus) {
    Row r;
    r.card.node = host;
    r.card.serial = SerialOrEmpty(g.serial);
    r.card.uuid = g.uuid;
    r.card.pci_bus_id = CanonicalBusId(g.pci_bus_id);
    r.card.index = g.index;
    r.card.model = g.model;
    r.first = g.first_seen_s;
    r.last = g.last_seen_s;
    rows.push_back(std::move(r));
  }
  // Metric values, per GPU index, through the store's reader. Each point becomes (part of) the
  // sample of the card that held that index at that time.
  int64_t span_first = INT64_MAX, span_last = 0;
  for (const auto& r : rows) {
    span_first = std::min(span_first, r.first);
    span_last = std::max(span_last, r.last);
  }
  span_last += kGpuLedgerLagS;  // a live file's ledger lags its newest samples by up to this
  std::map<std::pair<size_t, int64_t>, GpuSample> valued;  // (row, time) -> values
  int rejected = 0;
  if (!rows.empty()) {
    const int64_t window = std::max<int64_t>(1, window_s);
    const int64_t want = (span_last - span_first) / window * 2 + 2;
    for (const SeriesSpec& spec : kSeries) {
      SeriesQuery sq;
      sq.metric = spec.metric;
      sq.since_unix_s = span_first;
      sq.until_unix_s = span_last;
      sq.max_points = static_cast<int>(std::min<int64_t>(want, kMaxPointsPerSeries));
      auto series = (*reader)->QuerySeries(sq);
      if (!series.ok()) return series.status();
      for (const Series& se : *series) {
        if (!se.gpu || !se.labels.empty()) continue;  // per-GPU series without extra labels
        for (const auto& [t, raw] : se.points) {
          // The card that held this index then; else the latest card on the index.
          std::optional<size_t> row;
          for (size_t i = 0; i < rows.size(); ++i) {
            if (rows[i].card.index != se.gpu) continue;
            if (rows[i].first <= t && t <= rows[i].last) {
              row = i;
              break;
            }
            if (!row || rows[i].last > rows[*row].last) row = i;
          }
          if (!row) continue;
          double v = raw * spec.scale;
          if (!std::isfinite(v) || (spec.range != nullptr && !spec.range->Contains(v))) {
            ++rejected;  // a broken reading, never a measurement
            continue;
          }
          Card& card = rows[*row].card;
          GpuSample& smp = valued[{*row, t}];
          smp.time_s = t;
          const float f = static_cast<float>(v);
          switch (spec.field) {
            case Field::kSm:
              smp.sm_clock_mhz = f;
              break;
            case Field::kPower:
              smp.power_w = f;
              break;
            case Field::kUtil:
              smp.util_pct = f;
              break;
            case Field::kTemp:
              smp.temp_c = f;
              break;
            case Field::kReasons:
              smp.clock_event_reasons = AsCounter(v);
              break;
            case Field::kSbe:
              smp.ecc_sbe = AsCounter(v);
              break;
            case Field::kDbe:
              smp.ecc_dbe = AsCounter(v);
              break;
            case Field::kReplays:
              smp.pcie_replays = AsCounter(v);
              break;
            case Field::kMaxSm:
              card.max_sm_clock_mhz = f;
              break;  // latest wins
            case Field::kLimit:
              card.power_limit_w = f;
              break;
          }
        }
      }
      if (Status s = late(); !s.ok()) return s;
    }
  }
  // Only the configured constants: no sample at that time.
  std::erase_if(valued, [](const auto& kv) {
    const GpuSample& s = kv.second;
    return !s.sm_clock_mhz && !s.power_w && !s.util_pct && !s.temp_c && !s.clock_event_reasons &&
           !s.ecc_sbe && !s.ecc_dbe && !s.pcie_replays;
  });
  if (rejected > 0) {
    data.problems.push_back(
        {path, host, std::to_string(rejected) + " metric value(s) out of physical range, dropped"});
  }
  FindingsQuery q;
  q.max_rows = kMaxRows;
  auto episodes = (*reader)->QueryFindings(q);
  if (!episodes.ok()) return episodes.status();
  std::vector<FindingEvent> events;
  std::vector<bool> open;
  for (const TrackedFinding& t : *episodes) {
    FindingEvent e;
    e.node = host;
    e.time_s = t.first_seen_ms / 1000;
    e.id = t.last.id;
    e.severity = t.last.severity;
    e.layer = t.last.layer;
    if (t.last.gpu) {
      e.gpu = *t.last.gpu;
      e.gpu.serial = SerialOrEmpty(e.gpu.serial);
      e.gpu.pci_bus_id = CanonicalBusId(e.gpu.pci_bus_id);
    }
    e.subject = t.last.subject;
    e.summary = t.last.summary;
    e.action = t.last.action;
    events.push_back(std::move(e));
    open.push_back(t.state != FindingState::kResolved);
  }
  if (Status s = late(); !s.ok()) return s;
  // Report times: ledger bounds and episode onsets; "now" = the latest of them.
  int64_t latest = 0;
  std::map<int64_t, int> times;
  for (const auto& r : rows) {
    times[r.first];
    times[r.last];
    latest = std::max(latest, r.last);
  }
  for (const auto& e : events) {
    times[e.time_s];
    latest = std::max(latest, e.time_s);
  }
  for (const auto& [key, smp] : valued) {
    times[key.second];
    latest = std::max(latest, key.second);
  }
  for (const auto& [t, unused] : times) {
    auto [it, inserted] = data.seen.emplace(std::make_pair(host, t), path);
    if (!inserted) {
      data.problems.push_back(
          {path, host,
           "history of node " + host + " overlaps " + it->second + " at the same time; skipped"});
      return Status::Ok();
    }
    NodeReport rep;
    rep.node = host;
    rep.source = path;
    rep.time_s = t;
    for (const auto& r : rows) rep.gpu_count += r.first <= t && t <= r.last;
    data.reports.push_back(rep);
  }
  const int64_t window = std::max<int64_t>(1, window_s);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    uint32_t c = data.InternCard(r.card);
    // The ledger bounds carry no values: added only where no measured sample of the card falls
    // in the same window (a window keeps its latest sample, which must be a measured one).
    std::set<int64_t> measured_windows;
    for (auto it = valued.lower_bound({i, INT64_MIN}); it != valued.end() && it->first.first == i;
         ++it) {
      GpuSample s = it->second;
      s.card = c;
      data.samples.push_back(s);
      measured_windows.insert(FloorDiv(s.time_s, window));
    }
    for (int64_t t : {r.first, r.last}) {
      if (t == r.last && r.last == r.first) break;
      if (measured_windows.count(FloorDiv(t, window)) != 0) continue;
      GpuSample s;
      s.card = c;
      s.time_s = t;
      data.samples.push_back(s);
    }
  }
  for (size_t i = 0; i < events.size(); ++i) {
    data.findings.push_back(events[i]);
    if (open[i] && events[i].time_s != latest) {
      FindingEvent now = events[i];
      now.time_s = latest;
      data.findings.push_back(now);
    }
  }
  return Status::Ok();
}

}  // namespace gpudoctor::fleet
