#include "tui/status_check.h"

#include <cmath>
#include <string>

#include "core/json_text.h"
#include "core/terminal_text.h"

namespace gpudoctor {
namespace {

using json = nlohmann::json;

constexpr double kMaxMagnitude = 1e18;

std::string Shown(const json& v) {
  return TerminalSafe(v.is_string() ? "\"" + v.get<std::string>() + "\"" : JsonText(v), 40);
}

Status Bad(const std::string& where, const std::string& why) {
  return InvalidArgument(where + ": " + why);
}

// Checks one value of a known kind; `where` is its path ("gpus[3].index").
class Checker {
 public:
  Status String(const json& v, const std::string& where) {
    if (!v.is_string()) return Bad(where, Shown(v) + " is not a string");
    if (v.get_ref<const std::string&>().size() > kMaxStringBytes) {
      return Bad(where, "longer than " + std::to_string(kMaxStringBytes) + " bytes");
    }
    return Status::Ok();
  }
  Status OneOf(const json& v, const std::string& where, std::initializer_list<const char*> set) {
    if (v.is_string()) {
      for (const char* s : set) {
        if (v.get_ref<const std::string&>() == s) return Status::Ok();
      }
    }
    std::string names;
    for (const char* s : set) names += (names.empty() ? "" : ", ") + std::string(s);
    return Bad(where, Shown(v) + " is not one of " + names);
  }
  Status Number(const json& v, const std::string& where) {
    if (!v.is_number()) return Bad(where, Shown(v) + " is not a number");
    double d = v.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > kMaxMagnitude) {
      return Bad(where, Shown(v) + " is out of range");
    }
    return Status::Ok();
  }
  Status GpuIndex(const json& v, const std::string& where) {
    bool ok = v.is_number_integer() && v.get<int64_t>() >= 0 &&
              v.get<int64_t>() < static_cast<int64_t>(kMaxGpus);
    if (!ok) {
      return Bad(where, Shown(v) + " is not a GPU index (0.." + std::to_string(kMaxGpus - 1) + ")");
    }
    return Status::Ok();
  }
  Status List(const json& v, const std::string& where, size_t max) {
    if (!v.is_array()) return Bad(where, Shown(v) + " is not a list");
    if (v.size() > max) {
      return Bad(where, std::to_string(v.size()) + " entries, more than " + std::to_string(max));
    }
    return Status::Ok();
  }
  // Every member of object `o`: numbers in range, strings bounded, nested objects one level
  // down (counters_first, ...) the same; lists bounded.
  Status Scalars(const json& o, const std::string& where, int depth = 0) {
    if (!o.is_object()) return Bad(where, Shown(o) + " is not an object");
    for (auto it = o.begin(); it != o.end(); ++it) {
      std::string w = where + "." + TerminalSafe(it.key(), 60);
      const json& v = *it;
      Status s;
      if (v.is_number()) {
        s = Number(v, w);
      } else if (v.is_string()) {
        s = String(v, w);
      } else if (v.is_object()) {
        s = depth < 3 ? Scalars(v, w, depth + 1) : Bad(w, "nested too deeply");
      } else if (v.is_array()) {
        s = List(v, w, kMaxListItems);
        for (size_t i = 0; s.ok() && i < v.size(); ++i) {
          const json& e = v[i];
          std::string we = w + "[" + std::to_string(i) + "]";
          if (e.is_object()) {
            s = depth < 3 ? Scalars(e, we, depth + 1) : Bad(we, "nested too deeply");
          } else if (e.is_number()) {
            s = Number(e, we);
          } else if (e.is_string()) {
            s = String(e, we);
          } else if (e.is_array()) {
            s = Bad(we, "a list inside a list");
          }
        }
      }
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
};

Status CheckFinding(Checker& c, const json& f, const std::string& where) {
  if (!f.is_object()) return Bad(where, Shown(f) + " is not an object");
  if (auto it = f.find("id"); it == f.end()) {
    return Bad(where + ".id", "missing");
  } else if (Status s = c.String(*it, where + ".id"); !s.ok()) {
    return s;
  }
  auto sev = f.find("severity");
  if (sev == f.end()) return Bad(where + ".severity", "missing");
  if (Status s = c.OneOf(*sev, where + ".severity", {"info", "warn", "crit"}); !s.ok()) return s;
  if (auto it = f.find("layer"); it != f.end()) {
    Status s = c.OneOf(*it, where + ".layer", {"network", "hardware", "software", "resources"});
    if (!s.ok()) return s;
  }
  for (const char* k : {"summary", "subject"}) {
    if (auto it = f.find(k); it != f.end() && !it->is_null()) {
      if (Status s = c.String(*it, where + "." + k); !s.ok()) return s;
    }
  }
  if (auto it = f.find("next_steps"); it != f.end()) {
    if (Status s = c.List(*it, where + ".next_steps", 100); !s.ok()) return s;
    for (size_t i = 0; i < it->size(); ++i) {
      Status s = c.String((*it)[i], where + ".next_steps[" + std::to_string(i) + "]");
      if (!s.ok()) return s;
    }
  }
  if (auto it = f.find("evidence"); it != f.end()) {
    if (!it->is_object()) return Bad(where + ".evidence", Shown(*it) + " is not an object");
    for (auto e = it->begin(); e != it->end(); ++e) {
      std::string w = where + ".evidence." + TerminalSafe(e.key(), 60);
      if (e->is_structured()) return Bad(w, "not a single value");
      if (e->is_number()) {
        if (Status s = c.Number(*e, w); !s.ok()) return s;
      } else if (e->is_string()) {
        if (Status s = c.String(*e, w); !s.ok()) return s;
      }
    }
  }
  if (auto it = f.find("gpu"); it != f.end() && !it->is_null()) {
    if (!it->is_object()) return Bad(where + ".gpu", Shown(*it) + " is not an object");
    if (auto i = it->find("index"); i != it->end()) {
      if (Status s = c.GpuIndex(*i, where + ".gpu.index"); !s.ok()) return s;
    }
    if (Status s = c.Scalars(*it, where + ".gpu"); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Status CheckStatusDocument(const json& doc) {
  Checker c;
  if (!doc.is_object()) return Bad("status", "not a JSON object");
  for (const char* k : {"host", "time"}) {
    if (auto it = doc.find(k); it != doc.end()) {
      if (Status s = c.String(*it, k); !s.ok()) return s;
    }
  }
  auto verdict = doc.find("verdict");
  if (verdict == doc.end()) return Bad("verdict", "missing");
  if (Status s = c.OneOf(*verdict, "verdict", {"ok", "info", "warn", "crit"}); !s.ok()) return s;
  auto findings = doc.find("findings");
  if (findings == doc.end()) return Bad("findings", "missing");
  if (Status s = c.List(*findings, "findings", kMaxFindings); !s.ok()) return s;
  for (size_t i = 0; i < findings->size(); ++i) {
    Status s = CheckFinding(c, (*findings)[i], "findings[" + std::to_string(i) + "]");
    if (!s.ok()) return s;
  }
  // The lifecycle's open episodes (watch's /api/v1/status; a check's document has none).
  if (auto open = doc.find("open_findings"); open != doc.end() && !open->is_null()) {
    if (Status s = c.List(*open, "open_findings", kMaxFindings); !s.ok()) return s;
    for (size_t i = 0; i < open->size(); ++i) {
      const json& e = (*open)[i];
      std::string where = "open_findings[" + std::to_string(i) + "]";
      if (!e.is_object()) return Bad(where, Shown(e) + " is not an object");
      auto f = e.find("finding");
      if (f == e.end()) return Bad(where + ".finding", "missing");
      if (Status s = CheckFinding(c, *f, where + ".finding"); !s.ok()) return s;
      for (const char* k : {"open_s", "opened"}) {
        if (auto it = e.find(k); it != e.end() && !it->is_null()) {
          if (Status s = c.Number(*it, where + "." + k); !s.ok()) return s;
        }
      }
      for (const char* k : {"key", "state", "ack_note"}) {
        if (auto it = e.find(k); it != e.end() && !it->is_null()) {
          if (Status s = c.String(*it, where + "." + k); !s.ok()) return s;
        }
      }
      if (auto it = e.find("acked"); it != e.end() && !it->is_boolean() && !it->is_null()) {
        return Bad(where + ".acked", Shown(*it) + " is not true or false");
      }
    }
  }
  if (auto gpus = doc.find("gpus"); gpus != doc.end() && !gpus->is_null()) {
    if (Status s = c.List(*gpus, "gpus", kMaxGpus); !s.ok()) return s;
    for (size_t i = 0; i < gpus->size(); ++i) {
      const json& g = (*gpus)[i];
      std::string where = "gpus[" + std::to_string(i) + "]";
      if (!g.is_object()) return Bad(where, Shown(g) + " is not an object");
      auto index = g.find("index");
      if (index == g.end()) return Bad(where + ".index", "missing");
      if (Status s = c.GpuIndex(*index, where + ".index"); !s.ok()) return s;
      if (Status s = c.Scalars(g, where); !s.ok()) return s;
    }
  }
  for (const char* k : {"resources", "network", "nvml"}) {
    if (auto it = doc.find(k); it != doc.end() && !it->is_null()) {
      if (Status s = c.Scalars(*it, k); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

Result<std::map<int, std::vector<HistoryPoint>>> ParseHistoryDocument(const json& doc,
                                                                      std::string_view metric) {
  constexpr int64_t kMaxUnixS = 1000000000000;  // year 33658: beyond any real sample
  Checker c;
  std::vector<const json*> series;
  if (doc.is_array()) {
    if (Status s = c.List(doc, "history", kMaxListItems); !s.ok()) return s;
    for (const json& e : doc) series.push_back(&e);
  } else if (doc.is_object()) {
    series.push_back(&doc);
  } else {
    return Bad("history", Shown(doc) + " is not a series or a list of them");
  }
  std::map<int, std::vector<HistoryPoint>> out;
  for (size_t i = 0; i < series.size(); ++i) {
    const json& one = *series[i];
    std::string where = doc.is_array() ? "history[" + std::to_string(i) + "]" : "history";
    if (!one.is_object()) return Bad(where, Shown(one) + " is not an object");
    auto name = one.find("metric");
    if (name == one.end()) return Bad(where + ".metric", "missing");
    if (Status s = c.String(*name, where + ".metric"); !s.ok()) return s;
    auto gpu = one.find("gpu");
    if (gpu != one.end() && !gpu->is_null()) {
      if (Status s = c.GpuIndex(*gpu, where + ".gpu"); !s.ok()) return s;
    }
    auto points = one.find("points");
    if (points == one.end()) return Bad(where + ".points", "missing");
    if (Status s = c.List(*points, where + ".points", kMaxHistoryPoints); !s.ok()) return s;
    std::vector<HistoryPoint> parsed;
    parsed.reserve(points->size());
    for (size_t k = 0; k < points->size(); ++k) {
      const json& p = (*points)[k];
      std::string w = where + ".points[" + std::to_string(k) + "]";
      if (!p.is_array() || p.size() != 2) return Bad(w, Shown(p) + " is not [time, value]");
      const json& t = p[0];
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= kMaxUnixS) {
        return Bad(w + "[0]", Shown(t) + " is not a time in unix seconds");
      }
      HistoryPoint hp;
      hp.unix_s = t.get<int64_t>();
      const json& v = p[1];
      if (!v.is_null()) {
        if (!v.is_number()) return Bad(w + "[1]", Shown(v) + " is not a number or null");
        if (Status s = c.Number(v, w + "[1]"); !s.ok()) return s;
        hp.value = v.get<double>();
      }
      parsed.push_back(hp);
    }
    if (name->get_ref<const std::string&>() != metric || gpu == one.end() || gpu->is_null()) {
      continue;
    }
    out.emplace(static_cast<int>(gpu->get<int64_t>()), std::move(parsed));  // first one kept
  }
  return out;
}

}  // namespace gpudoctor
