// `gpudoctor history`: read the watch daemon's history database (read-only, also while the daemon
// writes). Modes: --metric NAME, --list-metrics, --findings, --events. Exit 0, or 3 with one line
// naming what is wrong (bad flag values, a missing or foreign database).
#include <cstdio>
#include <ctime>
#include <string>

#include "cli/commands.h"
#include "core/input_file.h"
#include "core/json_text.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "store/history_store.h"

namespace gpudoctor {

inline constexpr const char* kDefaultHistoryDb = "/var/lib/gpudoctor/history.db";

std::string HistoryDbPath(const CliOptions& o) {
  return o.Value("--db").value_or(kDefaultHistoryDb);
}

Status CheckDbPath(const std::string& path) {
  Status s = RequireRegularFile(path);
  if (s.code() == StatusCode::kNotFound) return Status::Ok();
  return s;
}

namespace {

std::string Duration(int64_t s) {
  if (s < 0) return "-";
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  } else if (s < 7200) {
    std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(s / 60));
  } else if (s < 2 * 86400) {
    std::snprintf(buf, sizeof buf, "%.1fh", s / 3600.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fd", s / 86400.0);
  }
  return buf;
}

std::string Pad(std::string s, size_t w) {
  if (s.size() < w) s.resize(w, ' ');
  return s + " ";
}

void Print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

void PrintJson(const nlohmann::ordered_json& j) { Print(JsonText(j, 2) + "\n"); }

int Metric(HistoryReader& r, const CliOptions& o, const std::string& db, int64_t since,
           int64_t until) {
  SeriesQuery q;
  q.metric = *o.Value("--metric");
  // "job_step_seconds" is gpudoctor_job_step_seconds: the prefix may be left out.
  if (q.metric.rfind("gpudoctor_", 0) != 0 && FindMetric("gpudoctor_" + q.metric) != nullptr) {
    q.metric = "gpudoctor_" + q.metric;
  }
  if (auto g = o.Value("--gpu")) q.gpu = std::stoi(*g);
  if (auto j = o.Value("--job")) q.labels = "job=" + *j;
  q.since_unix_s = since;
  q.until_unix_s = until;
  auto metrics = r.ListMetrics();
  if (!metrics.ok()) return CouldNotRun(metrics.status().message());
  bool stored = false;
  for (const auto& m : *metrics) stored = stored || m == q.metric;
  if (!stored && FindMetric(q.metric) == nullptr) {
    return CouldNotRun("unknown metric '" + Sanitize(q.metric, 80) + "' in " + db +
                       " (see gpudoctor history --list-metrics)");
  }
  auto series = r.QuerySeries(q);
  if (!series.ok()) return CouldNotRun(series.status().message());
  if (series->empty()) {
    Series empty;
    empty.metric = q.metric;
    empty.gpu = q.gpu;
    series->push_back(empty);
  }
  if (o.json) {
    PrintJson(SeriesToJson(*series));
    return 0;
  }
  std::string out;
  for (const auto& s : *series) {
    out += s.metric;
    if (s.gpu && *s.gpu >= 0) out += " gpu " + std::to_string(*s.gpu);
    if (!s.labels.empty()) out += " {" + s.labels + "}";
    out += ": " + std::to_string(s.points.size()) + " point(s)\n";
    for (const auto& [t, v] : s.points)
      out += "  " + FormatUtc(t) + "  " + FormatDouble(v, 3) + "\n";
  }
  Print(out);
  return 0;
}

int Findings(HistoryReader& r, const CliOptions& o, int64_t since) {
  FindingsQuery q;
  q.since_unix_s = since;
  auto findings = r.QueryFindings(q);
  if (!findings.ok()) return CouldNotRun(findings.status().message());
  std::optional<int> gpu;
  if (auto g = o.Value("--gpu")) gpu = std::stoi(*g);
  std::vector<const TrackedFinding*> shown;
  for (const auto& f : *findings) {
    if (f.state == FindingState::kPending) continue;
    if (gpu && (!f.last.gpu || f.last.gpu->index != gpu)) continue;
    shown.push_back(&f);
  }
  if (o.json) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto* f : shown) arr.push_back(TrackedFindingToJson(*f));
    PrintJson(arr);
    return 0;
  }
  std::string out = Pad("ID", 22) + Pad("GPU", 3) + Pad("SERIAL", 14) + Pad("BUS ID", 12) +
                    Pad("SEV", 4) + Pad("ACTION", 16) + Pad("OPENED", 20) + Pad("RESOLVED", 20) +
                    Pad("DURATION", 8) + Pad("REBOOTS", 7) + "NOTES\n";
  for (const auto* f : shown) {
    const GpuRef* g = f->last.gpu ? &*f->last.gpu : nullptr;
    int64_t end_ms = f->resolved_ms > 0 ? f->resolved_ms : f->last_seen_ms;
    std::string notes = f->resolution;
    if (f->escalated) notes += (notes.empty() ? "" : ", ") + std::string("escalated");
    if (f->acked) notes += (notes.empty() ? "" : ", ") + std::string("acked");
    if (!f->ack_note.empty()) notes += ": " + f->ack_note;
    if (!f->last.subject.empty()) notes += (notes.empty() ? "" : ", ") + f->last.subject;
    out += Pad(f->last.id, 22) + Pad(g && g->index ? std::to_string(*g->index) : "-", 3) +
           Pad(g && !g->serial.empty() ? g->serial : "-", 14) +
           Pad(g && !g->pci_bus_id.empty() ? g->pci_bus_id : "-", 12) +
           Pad(SeverityName(f->last.severity), 4) + Pad(ActionName(f->last.action), 16) +
           Pad(FormatUtc(f->opened_ms / 1000), 20) +
           Pad(f->resolved_ms > 0 ? FormatUtc(f->resolved_ms / 1000) : "open", 20) +
           Pad(Duration((end_ms - f->opened_ms) / 1000), 8) +
           Pad(std::to_string(f->reboots_during + f->episodes_after_reboot), 7) +
           Sanitize(notes, 120) + "\n";
  }
  if (shown.empty()) out += "(no findings since " + FormatUtc(since) + ")\n";
  Print(out);
  return 0;
}

int Events(HistoryReader& r, const CliOptions& o, int64_t since) {
  auto events = r.QueryEvents(since);
  if (!events.ok()) return CouldNotRun(events.status().message());
  if (o.json) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& e : *events) arr.push_back(HistoryEventToJson(e));
    PrintJson(arr);
    return 0;
  }
  std::string out;
  for (const auto& e : *events) {
    out += FormatUtc(e.unix_ms / 1000) + "  " + Pad(e.kind, 16) +
           Pad(e.gpu_index ? "gpu " + std::to_string(*e.gpu_index) : "host", 8) +
           Sanitize(e.detail, 200) + "\n";
  }
  if (events->empty()) out += "(no events since " + FormatUtc(since) + ")\n";
  Print(out);
  return 0;
}

}  // namespace

int HistoryCommand(const CliOptions& o) {
  if (!o.positional.empty()) {
    return CouldNotRun(
        "history takes no arguments (use --metric NAME, --list-metrics, "
        "--findings or --events)");
  }
  int modes = (o.Value("--metric") ? 1 : 0) + o.Has("--list-metrics") + o.Has("--findings") +
              o.Has("--events");
  if (modes != 1) {
    return CouldNotRun(
        "history needs exactly one of --metric NAME, --list-metrics, --findings, "
        "--events");
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  int64_t default_back = o.Has("--findings") ? 7 * 86400 : o.Has("--events") ? 86400 : 3600;
  int64_t since = now - default_back;
  int64_t until = now;
  if (auto v = o.Value("--since")) {
    auto t = ParseTimeSpec(*v, now);
    if (!t) return CouldNotRun("flag --since: bad time '" + Sanitize(*v, 40) + "'");
    since = *t;
  }
  if (auto v = o.Value("--until")) until = ParseTimeSpec(*v, now).value_or(now);
  if (until < since) {
    return CouldNotRun("--until " + FormatUtc(until) + " is before --since " + FormatUtc(since));
  }
  std::string db = HistoryDbPath(o);
  if (Status s = CheckDbPath(db); !s.ok()) return CouldNotRun("history database " + s.message());
  auto reader = HistoryReader::Open(db);
  if (!reader.ok()) {
    return CouldNotRun("history database " + reader.status().message());
  }
  if (o.Has("--list-metrics")) {
    auto metrics = (*reader)->ListMetrics();
    if (!metrics.ok()) return CouldNotRun(metrics.status().message());
    if (o.json) {
      PrintJson(nlohmann::ordered_json(*metrics));
    } else {
      std::string out;
      for (const auto& m : *metrics) out += m + "\n";
      Print(out);
    }
    return 0;
  }
  if (o.Has("--findings")) return Findings(**reader, o, since);
  if (o.Has("--events")) return Events(**reader, o, since);
  return Metric(**reader, o, db, since, until);
}

}  // namespace gpudoctor
