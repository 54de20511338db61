// JSON of stored history: `gpudoctor history --json` and the HTTP API.
#include <charconv>
#include <cmath>

#include "core/json_text.h"
#include "report/json_report.h"
#include "store/history_store.h"

namespace gpudoctor {
namespace {

nlohmann::ordered_json MsToSeconds(int64_t ms) {
  if (ms == 0) return nullptr;
  return ms / 1000;
}

}  // namespace

nlohmann::ordered_json SeriesToJson(const std::vector<Series>& series) {
  auto one = [](const Series& s) {
    nlohmann::ordered_json j;
    j["metric"] = s.metric;
    if (s.gpu && *s.gpu >= 0) {
      j["gpu"] = *s.gpu;
    } else {
      j["gpu"] = nullptr;
    }
    if (!s.labels.empty()) j["labels"] = s.labels;
    auto points = nlohmann::ordered_json::array();
    for (const auto& [t, v] : s.points) {
      points.push_back({t, std::isfinite(v) ? nlohmann::ordered_json(v) : nullptr});
    }
    j["points"] = std::move(points);
    return j;
  };
  if (series.size() == 1) return one(series[0]);
  auto arr = nlohmann::ordered_json::array();
  for (const auto& s : series) arr.push_back(one(s));
  return arr;
}

std::string SeriesJsonText(const std::vector<Series>& series) {
  auto quoted = [](const std::string& text) { return JsonText(nlohmann::ordered_json(text)); };
  size_t points = 0;
  for (const auto& s : series) points += s.points.size();
  std::string out;
  // "[1733400000,123.456789]," is 24 bytes; most values are shorter, a few longer.
  // 512 more: room for the HTTP head, which Serialize puts in front in this same buffer.
  out.reserve(512 + series.size() * 96 + points * 26);
  char number[64];
  auto append_int = [&](int64_t v) {
    auto end = std::to_chars(number, number + sizeof number, v).ptr;
    out.append(number, static_cast<size_t>(end - number));
  };
  auto one = [&](const Series& s) {
    out += "{\"metric\":";
    out += quoted(s.metric);
    out += ",\"gpu\":";
    if (s.gpu && *s.gpu >= 0) {
      append_int(*s.gpu);
    } else {
      out += "null";
    }
    if (!s.labels.empty()) {
      out += ",\"labels\":";
      out += quoted(s.labels);
    }
    out += ",\"points\":[";
    bool first = true;
    for (const auto& [t, v] : s.points) {
      out += first ? "[" : ",[";
      first = false;
      append_int(t);
      out += ',';
      if (std::isfinite(v)) {
        // nlohmann's own shortest round-trip form (what dump() writes: "2.0", "1e-05").
        char* end = nlohmann::detail::to_chars(number, number + sizeof number, v);
        out.append(number, static_cast<size_t>(end - number));
      } else {
        out += "null";
      }
      out += ']';
    }
    out += "]}";
  };
  if (series.size() == 1) {
    one(series[0]);
  } else {
    out += '[';
    for (size_t i = 0; i < series.size(); ++i) {
      if (i > 0) out += ',';
      one(series[i]);
    }
    out += ']';
  }
  if (out.capacity() - out.size() < 512)
    out.reserve(out.size() + 512);  // values longer than guessed
  return out;
}

nlohmann::ordered_json TrackedFindingToJson(const TrackedFinding& f) {
  nlohmann::ordered_json j;
  j["key"] = f.key;
  j["state"] = FindingStateName(f.state);
  j["finding"] = FindingToJson(f.last);
  j["first_seen"] = MsToSeconds(f.first_seen_ms);
  j["opened"] = MsToSeconds(f.opened_ms);
  j["last_seen"] = MsToSeconds(f.last_seen_ms);
  j["resolved"] = MsToSeconds(f.resolved_ms);
  if (f.opened_ms > 0) {
    int64_t end = f.resolved_ms > 0 ? f.resolved_ms : f.last_seen_ms;
    j["duration_s"] = (end - f.opened_ms) / 1000;
  } else {
    j["duration_s"] = nullptr;
  }
  j["resolution"] =
      f.resolution.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(f.resolution);
  j["reboots"] = f.reboots_during;
  j["episodes_after_reboot"] = f.episodes_after_reboot;
  j["escalated"] = f.escalated;
  j["acked"] = f.acked;
  j["acked_at"] = MsToSeconds(f.acked_ms);
  j["ack_note"] = f.ack_note;
  j["silenced_until"] = MsToSeconds(f.silenced_until_ms);
  return j;
}

nlohmann::ordered_json HistoryEventToJson(const HistoryEvent& e) {
  nlohmann::ordered_json j;
  j["time"] = e.unix_ms / 1000;
  j["time_ms"] = e.unix_ms;
  j["kind"] = e.kind;
  if (e.gpu_index) {
    j["gpu"] = *e.gpu_index;
  } else {
    j["gpu"] = nullptr;
  }
  j["serial"] = e.serial;
  j["pci_bus_id"] = e.pci_bus_id;
  j["detail"] = e.detail;
  return j;
}

}  // namespace gpudoctor
