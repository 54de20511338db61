// history/*.json of the bundle: read-only queries of the watch database.
#include <cctype>
#include <nlohmann/json.hpp>

#include "bundle/bundle_internal.h"
#include "core/input_file.h"
#include "core/root_fs.h"
#include "core/strings.h"
#include "store/history_store.h"

namespace gpudoctor {
namespace {

// Every http(s) URL in `text` reduced to scheme://host[:port]: notification events written by
// older versions carry the full webhook URL (Slack /services/T/B/SECRET paths, ?token=).
std::string UrlsToOrigins(std::string text) {
  for (size_t pos = text.find("://"); pos != std::string::npos; pos = text.find("://", pos + 3)) {
    size_t start = pos;
    while (start > 0 && std::isalpha(static_cast<unsigned char>(text[start - 1]))) --start;
    size_t end = pos + 3;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != '\n') ++end;
    if (end > pos + 3 && text[end - 1] == ':') --end;  // "webhook URL: what"
    std::string origin = UrlOrigin(std::string_view(text).substr(start, end - start));
    text.replace(start, end - start, origin);
    pos = start + origin.size() - 3;
  }
  return text;
}

}  // namespace

const std::vector<std::string>& BundleHistoryMetrics() {
  static const std::vector<std::string> kMetrics = {
      "gpudoctor_gpu_temperature_celsius",     "gpudoctor_gpu_power_watts",
      "gpudoctor_gpu_utilization_ratio",       "gpudoctor_gpu_memory_used_bytes",
      "gpudoctor_gpu_ecc_sbe_volatile_total",  "gpudoctor_gpu_ecc_dbe_volatile_total",
      "gpudoctor_gpu_xid_errors_total",        "gpudoctor_gpu_throttle_active",
      "gpudoctor_host_cpu_busy_ratio",         "gpudoctor_host_cpu_iowait_ratio",
      "gpudoctor_host_memory_available_bytes", "gpudoctor_host_memory_total_bytes",
  };
  return kMetrics;
}

void AddHistoryMembers(const BundleInputs& in, std::vector<BundleMember>& out,
                       std::vector<std::string>& notes) {
  if (in.db_path.empty()) {
    notes.push_back("no history: no database given (--db / [watch] db)");
    return;
  }
  if (!RootFs::Exists(in.db_path)) {
    notes.push_back("no history: " + in.db_path + " does not exist (watch never ran here?)");
    return;
  }
  // SQLite would block opening a FIFO: only a regular file is a database.
  if (Status s = RequireRegularFile(in.db_path); !s.ok()) {
    notes.push_back("no history: " + s.message());
    return;
  }
  auto reader = HistoryReader::Open(in.db_path);
  if (!reader.ok()) {
    notes.push_back("no history: " + reader.status().message());
    return;
  }
  int64_t since = in.now_unix_s - in.history_s;
  nlohmann::ordered_json findings;
  findings["db"] = in.db_path;
  findings["since_unix_s"] = since;
  if (auto f = (*reader)->QueryFindings({since, false}); f.ok()) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const TrackedFinding& t : *f) arr.push_back(TrackedFindingToJson(t));
    findings["findings"] = std::move(arr);
  } else {
    findings["error"] = f.status().message();
    notes.push_back("history/findings.json: " + f.status().message());
  }
  out.push_back({"history/findings.json", DumpJson(findings)});

  nlohmann::ordered_json events;
  events["since_unix_s"] = since;
  if (auto e = (*reader)->QueryEvents(since); e.ok()) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (HistoryEvent h : *e) {
      if (StartsWith(h.kind, "notify")) h.detail = UrlsToOrigins(h.detail);
      arr.push_back(HistoryEventToJson(h));
    }
    events["events"] = std::move(arr);
  } else {
    events["error"] = e.status().message();
  }
  out.push_back({"history/events.json", DumpJson(events)});

  nlohmann::ordered_json metrics;
  metrics["since_unix_s"] = since;
  metrics["until_unix_s"] = in.now_unix_s;
  nlohmann::ordered_json series = nlohmann::ordered_json::object();
  for (const std::string& name : BundleHistoryMetrics()) {
    SeriesQuery q;
    q.metric = name;
    q.since_unix_s = since;
    q.until_unix_s = in.now_unix_s;
    q.max_points = 1440;  // one a minute over 24 h
    auto s = (*reader)->QuerySeries(q);
    if (!s.ok()) {
      series[name] = {{"error", s.status().message()}};
      continue;
    }
    if (s->empty()) continue;
    nlohmann::ordered_json j = SeriesToJson(*s);
    series[name] = j.is_array() ? j : nlohmann::ordered_json::array({j});
  }
  metrics["series"] = std::move(series);
  out.push_back({"history/metrics.json", DumpJson(metrics)});
}

}  // namespace gpudoctor
