#include "report/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/json_text.h"
#include "core/terminal_text.h"
#include "facts/gpu_facts.h"

namespace gpudoctor {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string GpuKey(const json& g) {
  for (const char* k : {"serial", "uuid", "pci_bus_id"}) {
    if (g.contains(k) && g[k].is_string()) {
      std::string v = g[k].get<std::string>();
      if (std::string_view(k) == "serial") v = SerialOrEmpty(v);
      if (!v.empty()) return v;
    }
  }
  return "index:" + (g.contains("index") ? JsonText(g["index"]) : std::string("?"));
}

std::string Str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  return j[key].is_string() ? j[key].get<std::string>() : JsonText(j[key]);
}

int ActiveLinks(const json& g) {
  int n = 0;
  if (g.contains("nvlinks") && g["nvlinks"].is_array()) {
    for (const auto& l : g["nvlinks"]) n += l.value("active", false) ? 1 : 0;
  }
  return n;
}

// Fields whose change matters whatever the load; `tolerance` for numbers (absolute).
struct Field {
  const char* key;
  const char* what;
  double tolerance;
};
constexpr Field kStableFields[] = {
    {"pcie_gen", "PCIe link generation", 0},
    {"pcie_width", "PCIe link width", 0},
    {"pcie_max_gen", "PCIe maximum generation", 0},
    {"pcie_max_width", "PCIe maximum width", 0},
    {"max_sm_clock_mhz", "maximum SM clock (MHz)", 0},
    {"max_memory_clock_mhz", "maximum memory clock (MHz)", 0},
    {"power_limit_mw", "power limit (mW)", 1000},
    {"temp_slowdown_c", "slowdown temperature (°C)", 0},
    {"persistence_on", "persistence mode", 0},
    {"ecc_enabled", "ECC", 0},
    {"vbios", "VBIOS", 0},
    {"name", "model", 0},
    {"nvlink_count", "NVLinks present", 0},
    {"memory_total_bytes", "memory total (bytes)", 0},
};
// Readings that depend on load: reported when they moved a lot.
constexpr Field kLoadFields[] = {
    {"temp_c", "temperature (°C)", 10},
    {"sm_clock_mhz", "SM clock (MHz)", 200},
    {"power_mw", "power draw (mW)", 50000},
};

bool Differs(const json& a, const json& b, double tolerance) {
  if (a.is_number() && b.is_number()) {
    return std::fabs(a.get<double>() - b.get<double>()) > tolerance;
  }
  return a != b;
}

// id|gpu-key for findings on a GPU, id|subject for the rest.
struct FindingPlace {
  std::string id, serial, bus, host, summary;
};

std::vector<FindingPlace> Findings(const json& report) {
  std::vector<FindingPlace> out;
  if (!report.contains("findings") || !report["findings"].is_array()) return out;
  std::string host = Str(report, "host");
  for (const auto& f : report["findings"]) {
    if (!f.is_object()) continue;
    FindingPlace p;
    p.id = Str(f, "id");
    p.summary = Str(f, "summary");
    p.host = host;
    if (f.contains("gpu") && f["gpu"].is_object()) {
      p.serial = SerialOrEmpty(Str(f["gpu"], "serial"));
      p.bus = Str(f["gpu"], "pci_bus_id");
    }
    out.push_back(p);
  }
  return out;
}

const char* TypeName(const json& v) { return v.type_name(); }

// `key` of object `o` is absent, null or of the expected kind.
Status Expect(const json& o, const char* key, json::value_t want, const std::string& where) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null() || it->type() == want) return Status::Ok();
  if (want == json::value_t::number_float && it->is_number()) return Status::Ok();
  const char* name = want == json::value_t::array     ? "an array"
                     : want == json::value_t::object  ? "an object"
                     : want == json::value_t::string  ? "a string"
                     : want == json::value_t::boolean ? "true or false"
                                                      : "a number";
  return InvalidArgument(where + "\"" + key + "\" is " + TypeName(*it) + ", expected " + name);
}

// Every field compare reads, with its type. A report where one has another type is malformed
// (exit 3); reading it as absent would say, for "gpus": "x", that every GPU is gone.
Status CheckReport(const json& j, const char* which) {
  if (!j.is_object() || !j.contains("verdict") || !j.contains("findings")) {
    return InvalidArgument(std::string(which) +
                           " is not a `gpudoctor check --json` report (no verdict/findings)");
  }
  using V = json::value_t;
  std::string top = std::string(which) + ": malformed report: ";
  // kernel_release and os are compared as whatever values they are.
  for (auto [key, type] : {std::pair{"verdict", V::string},
                           {"host", V::string},
                           {"time", V::string},
                           {"findings", V::array},
                           {"gpus", V::array},
                           {"driver", V::object}}) {
    if (Status s = Expect(j, key, type, top); !s.ok()) return s;
  }
  if (!j["findings"].is_array()) return InvalidArgument(top + "\"findings\" is null");
  if (auto d = j.find("driver"); d != j.end() && d->is_object()) {
    for (const char* k :
         {"driver_version", "nvml_version", "cuda_driver_version", "kernel_module_version"}) {
      auto v = d->find(k);
      if (v != d->end() && v->is_structured()) {
        return InvalidArgument(top + "\"driver." + k + "\" is " + TypeName(*v));
      }
    }
  }
  if (auto g = j.find("gpus"); g != j.end() && g->is_array()) {
    for (size_t i = 0; i < g->size(); ++i) {
      const json& gpu = (*g)[i];
      std::string where = top + "gpus[" + std::to_string(i) + "] ";
      if (!gpu.is_object()) return InvalidArgument(where + "is " + TypeName(gpu));
      for (const char* k : {"serial", "uuid", "pci_bus_id"}) {  // its identity
        if (Status s = Expect(gpu, k, V::string, where); !s.ok()) return s;
      }
      if (Status s = Expect(gpu, "nvlinks", V::array, where); !s.ok()) return s;
      if (auto l = gpu.find("nvlinks"); l != gpu.end() && l->is_array()) {
        for (const auto& link : *l) {
          if (!link.is_object())
            return InvalidArgument(where + "has an nvlink that is not an object");
          if (Status s = Expect(link, "active", V::boolean, where + "nvlink "); !s.ok()) return s;
        }
      }
    }
  }
  const json& findings = j["findings"];
  for (size_t i = 0; i < findings.size(); ++i) {
    const json& f = findings[i];
    std::string where = top + "findings[" + std::to_string(i) + "] ";
    if (!f.is_object()) return InvalidArgument(where + "is " + TypeName(f));
    for (const char* k : {"id", "summary"}) {
      if (Status s = Expect(f, k, V::string, where); !s.ok()) return s;
    }
    if (Status s = Expect(f, "gpu", V::object, where); !s.ok()) return s;
    if (auto g = f.find("gpu"); g != f.end() && g->is_object()) {
      for (const char* k : {"serial", "pci_bus_id"}) {
        if (Status s = Expect(*g, k, V::string, where + "gpu "); !s.ok()) return s;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

namespace compare_detail {

Result<Comparison> CompareReportsUnchecked(const json& before, const json& after) {
  if (Status s = CheckReport(before, "the first report"); !s.ok()) return s;
  if (Status s = CheckReport(after, "the second report"); !s.ok()) return s;
  Comparison c;
  ojson& out = c.json;
  out["before"] = {{"host", Str(before, "host")},
                   {"time", Str(before, "time")},
                   {"verdict", Str(before, "verdict")}};
  out["after"] = {{"host", Str(after, "host")},
                  {"time", Str(after, "time")},
                  {"verdict", Str(after, "verdict")}};

  // Host-level: driver and NVML versions.
  ojson host_changes = ojson::array();
  for (const char* k :
       {"driver_version", "nvml_version", "cuda_driver_version", "kernel_module_version"}) {
    json a = before.contains("driver") ? before["driver"].value(k, json()) : json();
    json b = after.contains("driver") ? after["driver"].value(k, json()) : json();
    if (a != b) {
      host_changes.push_back({{"field", std::string("driver.") + k}, {"before", a}, {"after", b}});
      ++c.differences;
    }
  }
  for (const char* k : {"kernel_release", "os"}) {
    json a = before.value(k, json()), b = after.value(k, json());
    if (a != b && !(a.is_null() && b.is_null())) {
      host_changes.push_back({{"field", k}, {"before", a}, {"after", b}});
      ++c.differences;
    }
  }
  out["host_changes"] = host_changes;

  // Per GPU, by identity.
  std::map<std::string, json> gb, ga;
  if (before.contains("gpus") && before["gpus"].is_array()) {
    for (const auto& g : before["gpus"]) gb[GpuKey(g)] = g;
  }
  if (after.contains("gpus") && after["gpus"].is_array()) {
    for (const auto& g : after["gpus"]) ga[GpuKey(g)] = g;
  }
  std::set<std::string> keys;
  for (const auto& [k, v] : gb) keys.insert(k);
  for (const auto& [k, v] : ga) keys.insert(k);
  ojson gpus = ojson::array();
  for (const std::string& key : keys) {
    ojson e = {{"gpu", key}};
    auto b = gb.find(key), a = ga.find(key);
    if (b == gb.end() || a == ga.end()) {
      const json& g = b == gb.end() ? a->second : b->second;
      e["change"] = b == gb.end() ? "appeared" : "gone";
      e["pci_bus_id"] = Str(g, "pci_bus_id");
      gpus.push_back(e);
      ++c.differences;
      continue;
    }
    e["before_bus_id"] = Str(b->second, "pci_bus_id");
    e["after_bus_id"] = Str(a->second, "pci_bus_id");
    if (e["before_bus_id"] != e["after_bus_id"]) {
      e["moved"] = true;
      ++c.differences;
    }
    ojson changes = ojson::array();
    auto compare = [&](const Field& f, bool load) {
      json x = b->second.value(f.key, json()), y = a->second.value(f.key, json());
      if (x.is_null() && y.is_null()) return;
      if (!Differs(x, y, f.tolerance)) return;
      changes.push_back({{"field", f.key},
                         {"what", f.what},
                         {"before", x},
                         {"after", y},
                         {"load_dependent", load}});
      if (!load) ++c.differences;
    };
    for (const Field& f : kStableFields) compare(f, false);
    for (const Field& f : kLoadFields) compare(f, true);
    int lb = ActiveLinks(b->second), la = ActiveLinks(a->second);
    if (lb != la) {
      changes.push_back({{"field", "nvlinks_active"},
                         {"what", "NVLinks up"},
                         {"before", lb},
                         {"after", la},
                         {"load_dependent", false}});
      ++c.differences;
    }
    e["changes"] = changes;
    if (!changes.empty() || e.contains("moved")) gpus.push_back(e);
  }
  out["gpus"] = gpus;

  // Findings new and gone (by id and place), and where each new fault went after a swap.
  auto fb = Findings(before), fa = Findings(after);
  auto same = [](const FindingPlace& x, const FindingPlace& y) {
    return x.id == y.id && x.serial == y.serial && x.bus == y.bus;
  };
  ojson added = ojson::array(), gone = ojson::array(), swap = ojson::array();
  for (const auto& f : fa) {
    if (std::none_of(fb.begin(), fb.end(), [&](const auto& o) { return same(o, f); })) {
      added.push_back(
          {{"id", f.id}, {"serial", f.serial}, {"pci_bus_id", f.bus}, {"summary", f.summary}});
      ++c.differences;
    }
  }
  for (const auto& f : fb) {
    if (std::none_of(fa.begin(), fa.end(), [&](const auto& o) { return same(o, f); })) {
      gone.push_back(
          {{"id", f.id}, {"serial", f.serial}, {"pci_bus_id", f.bus}, {"summary", f.summary}});
    }
  }
  // Card vs slot vs server: a GPU fault seen in both reports, where card or slot changed.
  for (const auto& f : fa) {
    if (f.serial.empty() && f.bus.empty()) continue;
    for (const auto& o : fb) {
      if (o.id != f.id || (o.serial.empty() && o.bus.empty())) continue;
      bool same_card = !f.serial.empty() && f.serial == o.serial;
      bool same_slot = !f.bus.empty() && f.bus == o.bus && f.host == o.host;
      if (same_card && same_slot) continue;  // nothing was swapped
      std::string verdict = same_card ? "card" : same_slot ? "slot" : "undecided";
      std::string why =
          same_card ? "the fault followed serial " + f.serial + " from " + o.host + " " + o.bus +
                          " to " + f.host + " " + f.bus
          : same_slot ? "the fault stayed at " + f.host + " " + f.bus + " with a different card (" +
                            o.serial + " before, " + f.serial + " now)"
                      : "different card and different slot: compare again after a swap";
      swap.push_back({{"id", f.id}, {"verdict", verdict}, {"evidence", why}});
    }
  }
  out["new_findings"] = added;
  out["resolved_findings"] = gone;
  out["swap"] = swap;
  out["differences"] = c.differences;
  return c;
}

}  // namespace compare_detail

Result<Comparison> CompareReports(const json& before, const json& after) {
  // Reports come from outside (files, other versions): a field of an unexpected type is a
  // malformed report, never a crash.
  try {
    return compare_detail::CompareReportsUnchecked(before, after);
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("malformed report: ") + e.what());
  }
}

// Every line through TerminalText: host names, times, serials, bus ids, finding ids and
// summaries all come from the reports.
std::string RenderComparisonText(const Comparison& c) {
  const ojson& j = c.json;
  TerminalText out;
  auto str = [](const ojson& v) { return v.is_string() ? v.get<std::string>() : JsonText(v); };
  out.Line("Comparing " + str(j["before"]["host"]) + " at " + str(j["before"]["time"]) + " (" +
           str(j["before"]["verdict"]) + ") with " + str(j["after"]["host"]) + " at " +
           str(j["after"]["time"]) + " (" + str(j["after"]["verdict"]) + ")");
  if (!j["host_changes"].empty()) {
    out.Blank();
    out.Line("HOST");
    for (const auto& h : j["host_changes"]) {
      out.Line("  " + str(h["field"]) + ": " + str(h["before"]) + " -> " + str(h["after"]));
    }
  }
  if (!j["gpus"].empty()) {
    out.Blank();
    out.Line("GPUS (by serial)");
    for (const auto& g : j["gpus"]) {
      std::string head = "  " + str(g["gpu"]);
      if (g.contains("change")) {
        out.Line(head + ": " + str(g["change"]) + " (" + str(g["pci_bus_id"]) + ")");
        continue;
      }
      if (g.contains("moved")) {
        head += " moved " + str(g["before_bus_id"]) + " -> " + str(g["after_bus_id"]);
      }
      out.Line(head);
      for (const auto& ch : g["changes"]) {
        out.Line("    " + str(ch["what"]) + ": " + str(ch["before"]) + " -> " + str(ch["after"]) +
                 (ch["load_dependent"].get<bool>() ? "  (depends on load)" : ""));
      }
    }
  }
  if (!j["new_findings"].empty()) {
    out.Blank();
    out.Line("NEW FINDINGS");
    for (const auto& f : j["new_findings"]) {
      std::string serial = str(f["serial"]);
      out.Line("  " + str(f["id"]) + (serial.empty() ? "" : " serial " + serial) + ": " +
               str(f["summary"]));
    }
  }
  if (!j["resolved_findings"].empty()) {
    out.Blank();
    out.Line("GONE SINCE");
    for (const auto& f : j["resolved_findings"]) {
      out.Line("  " + str(f["id"]) + ": " + str(f["summary"]));
    }
  }
  if (!j["swap"].empty()) {
    out.Blank();
    out.Line("AFTER THE SWAP");
    for (const auto& s : j["swap"]) {
      out.Line("  " + str(s["id"]) + ": " + str(s["verdict"]) + " — " + str(s["evidence"]));
    }
  }
  if (c.differences == 0) {
    out.Blank();
    out.Line("No differences that matter.");
  }
  return out.str();
}

}  // namespace gpudoctor
