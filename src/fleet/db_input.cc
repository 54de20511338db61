#include "fleet/db_input.h"

#include <algorithm>
#include <map>

#include "core/input_file.h"
#include "facts/gpu_facts.h"
#include "store/history_store.h"

namespace gpudoctor::fleet {
namespace {

constexpr size_t kMaxRows = 1'000'000;

}  // namespace

Status ReadHistoryDb(const std::string& path, FleetData& data, TimePoint deadline) {
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
    r.card.pci_bus_id = g.pci_bus_id;
    r.card.index = g.index;
    r.card.model = g.model;
    r.first = g.first_seen_s;
    r.last = g.last_seen_s;
    rows.push_back(std::move(r));
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
  for (const auto& r : rows) {
    uint32_t c = data.InternCard(r.card);
    for (int64_t t : {r.first, r.last}) {
      if (t == r.last && r.last == r.first) break;
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
