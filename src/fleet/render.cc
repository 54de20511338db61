// Text and JSON renderings of a fleet analysis and of a card/slot verdict.
#include <nlohmann/json.hpp>
#include <set>

#include "core/json_text.h"
#include "core/strings.h"
#include "core/terminal_text.h"
#include "core/time_spec.h"
#include "fleet/analysis.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::ordered_json;

std::string Opt(const std::optional<float>& v, int decimals, const char* unit) {
  return v ? FormatDouble(*v, decimals) + unit : "-";
}

std::string Pad(std::string s, size_t n) {
  if (s.size() < n) s.resize(n, ' ');
  return s + " ";
}

std::string GpuName(const Card& c) {
  std::string s = c.index ? "GPU" + std::to_string(*c.index) : "GPU";
  return s + " " + c.pci_bus_id + (c.serial.empty() ? "" : " s/n " + c.serial);
}

ordered_json CardJson(const Card& c) {
  ordered_json j;
  j["node"] = c.node;
  if (c.index) j["index"] = *c.index;
  j["pci_bus_id"] = c.pci_bus_id;
  j["serial"] = c.serial;
  j["uuid"] = c.uuid;
  j["model"] = c.model;
  return j;
}

void OptJson(ordered_json& j, const char* key, const std::optional<float>& v) {
  if (v) j[key] = static_cast<double>(*v);
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string Dump(const ordered_json& j) { return JsonText(j, 2) + "\n"; }

// An array at depth 1 of a Dump()ed document, written element by element: each element is
// dumped alone and indented as Dump would indent it there, so the text is the same. An element
// is appended as "\n    " + its text (the "[" or "," before it is the caller's).
constexpr const char* kNodesPlaceholder = "\x01gpudoctor-nodes\x01";

void AppendElement(std::string& array_text, const ordered_json& element) {
  std::string e = JsonText(element, 2);
  array_text += array_text.empty() ? "\n    " : ",\n    ";
  for (char c : e) {
    array_text += c;
    if (c == '\n') array_text += "    ";  // strings hold no raw newline: only the layout's
  }
}

}  // namespace

// Text for a terminal: every line goes through TerminalText, because node names, serials,
// models, finding ids and summaries and problem messages all come from outside.
std::string RenderFleetText(const FleetData& data, const FleetAnalysis& a) {
  TerminalText out;
  out.Line("Fleet: " + std::to_string(a.table.size()) + " nodes, " + std::to_string(a.stats.gpus) +
           " GPUs, " + std::to_string(data.reports.size()) + " reports");
  out.Blank();
  out.Line("NODES (worst first)");
  out.Line(Pad("node", 20) + Pad("now", 5) + Pad("worst finding", 24) + Pad("gpus", 5) +
           Pad("reports", 8) + Pad("onsets", 7) + "stragglers");
  for (const auto& r : a.table) {
    out.Line(Pad(r.node, 20) + Pad(r.worst, 5) + Pad(r.worst_id.empty() ? "-" : r.worst_id, 24) +
             Pad(std::to_string(r.gpus), 5) + Pad(std::to_string(r.reports), 8) +
             Pad(std::to_string(r.onsets), 7) + std::to_string(r.stragglers));
    for (uint32_t c : r.missing_cards) {
      out.Line("    missing from the latest report: " + GpuName(data.cards[c]));
    }
  }
  out.Blank();
  out.Line("GPUS (not ok, worst first)");
  out.Line(Pad("node", 20) + Pad("gpu", 40) + Pad("now", 5) + Pad("finding", 20) +
           Pad("sm MHz", 7) + Pad("W", 6) + Pad("util%", 6) + Pad("C", 4) + "straggler");
  int shown = 0;
  for (const auto& r : a.table) {
    for (const auto& g : r.gpu_rows) {
      if (g.worst == "ok" && g.straggler.empty()) continue;
      const Card& c = data.cards[g.card];
      out.Line(Pad(c.node, 20) + Pad(GpuName(c), 40) + Pad(g.worst, 5) +
               Pad(g.worst_id.empty() ? "-" : g.worst_id, 20) + Pad(Opt(g.sm_clock_mhz, 0, ""), 7) +
               Pad(Opt(g.power_w, 0, ""), 6) + Pad(Opt(g.util_pct, 0, ""), 6) +
               Pad(Opt(g.temp_c, 0, ""), 4) + (g.straggler.empty() ? "-" : g.straggler));
      ++shown;
    }
  }
  if (shown == 0) out.Line("(every GPU ok)");
  out.Blank();
  out.Line("STRAGGLERS (outlier among same-model peers under load, persistent)");
  if (a.stragglers.empty()) out.Line("(none)");
  for (const auto& s : a.stragglers) {
    const Card& c = data.cards[s.card];
    std::string line = "  " + c.node + " " + GpuName(c) + " [" + c.model + "]: " + s.kind +
                       ", outlier in " + std::to_string(s.windows_outlier) + "/" +
                       std::to_string(s.windows_compared) + " windows";
    for (const auto& m : s.metrics) {
      line += "; " + m.metric + " " + FormatDouble(m.gpu_median, 1) + " vs peers " +
              FormatDouble(m.peer_median, 1) + " (" + std::to_string(m.windows) + " windows)";
    }
    if (s.throttle_seen) line += "; hardware throttle reasons set";
    if (s.waits_on) line += "; waits on " + GpuName(data.cards[*s.waits_on]);
    if (s.holds_back > 0) line += "; holds back " + std::to_string(s.holds_back) + " GPU(s)";
    out.Line(line);
    out.Line("    -> " + s.advice);
  }
  out.Blank();
  out.Line("IDLE (no work: capacity left unused, not a fault)");
  if (a.idle.empty()) out.Line("(none)");
  if (!a.idle_nodes.empty()) {
    out.Line("  idle nodes (" + std::to_string(a.idle_nodes.size()) +
             "): " + Join(a.idle_nodes, ", "));
  }
  {
    std::set<std::string> whole(a.idle_nodes.begin(), a.idle_nodes.end());
    for (const auto& g : a.idle) {
      const Card& c = data.cards[g.card];
      if (whole.count(c.node) != 0) continue;
      out.Line("  " + c.node + " " + GpuName(c) + ": idle in " + std::to_string(g.windows_idle) +
               "/" + std::to_string(g.windows_seen) + " windows");
    }
  }
  out.Blank();
  out.Line("LEMONS (repeat offenders: hardware-class incidents)");
  if (a.lemons.empty()) out.Line("(none)");
  for (const auto& l : a.lemons) {
    std::string line = "  " + l.kind + " " + l.name + ": " + std::to_string(l.incidents) +
                       " incidents (" + std::to_string(l.onsets) + " onsets, " +
                       std::to_string(l.crit_onsets) + " crit) " + FormatUtc(l.first_s) + " .. " +
                       FormatUtc(l.last_s) + ": " + Join(l.ids, ", ");
    if (!l.nodes.empty()) line += " on " + Join(l.nodes, ", ");
    out.Line(line);
  }
  const auto& st = a.stats;
  out.Blank();
  out.Line("FAILURES by root cause (crit onsets over " + FormatDouble(st.gpu_days, 2) +
           " observed GPU-days)");
  out.Line(Pad("category", 12) + Pad("count", 6) + Pad("MTBF GPU-h", 11) + Pad("/day@1k", 9) +
           Pad("/day@10k", 9) + "/day@100k");
  for (const auto& c : st.categories) {
    out.Line(Pad(c.category, 12) + Pad(std::to_string(c.failures), 6) +
             Pad(c.failures ? FormatDouble(c.mtbf_gpu_hours, 1) : "-", 11) +
             Pad(FormatDouble(c.per_day_at[0], 2), 9) + Pad(FormatDouble(c.per_day_at[1], 2), 9) +
             FormatDouble(c.per_day_at[2], 2));
  }
  for (const auto& c : st.categories) {
    if (c.failures > 0 || c.category == "all") out.Line("  " + c.category + ": " + c.arithmetic);
  }
  if (!st.note.empty()) out.Line("  note: " + st.note);
  const auto& in = a.interruptions;
  out.Blank();
  out.Line(
      "INTERRUPTIONS (crit hardware-class incidents that stop the node or job, findings within " +
      std::string("1 h merged)"));
  out.Line("  " + std::to_string(in.unexpected) + " unexpected, " + std::to_string(in.planned) +
           " planned (planned maintenance is not in the inputs); " +
           std::to_string(in.lemon_interruptions) + " on lemons (not in the rate); " +
           std::to_string(in.present_at_start) +
           " already present in a node's first report (start unknown, not counted)");
  std::string cats;
  for (const char* c : kCategories) {
    cats += std::string(cats.empty() ? "" : ", ") + c + " " + std::to_string(in.by_category.at(c));
  }
  out.Line("  by category: " + cats);
  out.Line("  rate: " + in.arithmetic);
  std::string proj, meta;
  for (int i = 0; i < 3; ++i) {
    proj += std::string(i ? ", " : "") + FormatDouble(in.per_day_at[i], 2) + " (" +
            FormatDouble(in.lo_at[i], 2) + ".." + FormatDouble(in.hi_at[i], 2) + ") at " +
            std::to_string(kProjectionGpus[i]) + " GPUs";
    meta += std::string(i ? ", " : "") + FormatDouble(in.meta_per_day_at[i], 2) + " at " +
            std::to_string(kProjectionGpus[i]);
  }
  out.Line("  projected per day: " + proj);
  out.Line(
      "  for scale, Meta (Llama 3: 466 interruptions in 54 days on 16,384 GPUs, 419 "
      "unexpected): " +
      meta + " per day");
  constexpr size_t kListed = 20;
  for (size_t i = 0; i < in.list.size() && i < kListed; ++i) {
    const auto& x = in.list[i];
    out.Line("  " + FormatUtc(x.time_s) + "  " + x.node + "  " + Pad(x.category, 12) + x.id +
             (x.serial.empty() ? "" : "  card " + x.serial) +
             (x.findings > 1 ? "  (" + std::to_string(x.findings) + " findings)" : "") +
             (x.lemon ? "  [lemon]" : ""));
  }
  if (in.list.size() > kListed) {
    out.Line("  ... " + std::to_string(in.list.size() - kListed) + " more (--json lists all)");
  }
  if (!data.problems.empty() || !a.problems.empty()) {
    out.Blank();
    out.Line("INPUT PROBLEMS (" + std::to_string(data.problems.size() + a.problems.size()) + ")");
    std::vector<InputProblem> all = data.problems;
    all.insert(all.end(), a.problems.begin(), a.problems.end());
    for (const auto& p : all) {
      out.Line("  " + p.source + (p.node.empty() ? "" : " [" + p.node + "]") + ": " + p.message);
    }
  }
  return out.str();
}

void WriteFleetJson(const FleetData& data, const FleetAnalysis& a,
                    const std::function<void(std::string_view)>& sink) {
  ordered_json j;
  j["nodes_count"] = a.table.size();
  j["gpus_count"] = a.stats.gpus;
  j["reports_count"] = data.reports.size();
  j["nodes"] = kNodesPlaceholder;
  ordered_json strag = ordered_json::array();
  for (const auto& s : a.stragglers) {
    ordered_json sj = CardJson(data.cards[s.card]);
    sj["kind"] = s.kind;
    sj["windows_outlier"] = s.windows_outlier;
    sj["windows_compared"] = s.windows_compared;
    sj["throttle_seen"] = s.throttle_seen;
    if (s.waits_on) sj["waits_on"] = CardJson(data.cards[*s.waits_on]);
    if (s.holds_back > 0) sj["holds_back"] = s.holds_back;
    ordered_json ms = ordered_json::array();
    for (const auto& m : s.metrics) {
      ms.push_back({{"metric", m.metric},
                    {"windows", m.windows},
                    {"gpu_median", m.gpu_median},
                    {"peer_median", m.peer_median}});
    }
    sj["metrics"] = ms;
    sj["advice"] = s.advice;
    strag.push_back(sj);
  }
  j["stragglers"] = strag;
  ordered_json idle = ordered_json::array();
  for (const auto& g : a.idle) {
    ordered_json gj = CardJson(data.cards[g.card]);
    gj["windows_idle"] = g.windows_idle;
    gj["windows_seen"] = g.windows_seen;
    idle.push_back(gj);
  }
  j["idle"] = idle;
  j["idle_nodes"] = a.idle_nodes;
  ordered_json lemons = ordered_json::array();
  for (const auto& l : a.lemons) {
    ordered_json lj;
    lj["kind"] = l.kind;
    lj["name"] = l.name;
    lj["incidents"] = l.incidents;
    lj["onsets"] = l.onsets;
    lj["crit_onsets"] = l.crit_onsets;
    lj["first"] = FormatUtc(l.first_s);
    lj["last"] = FormatUtc(l.last_s);
    lj["ids"] = l.ids;
    if (!l.nodes.empty()) lj["nodes"] = l.nodes;
    lemons.push_back(lj);
  }
  j["lemons"] = lemons;
  ordered_json st;
  st["gpu_days"] = a.stats.gpu_days;
  st["failures"] = a.stats.failures;
  ordered_json cats = ordered_json::array();
  for (const auto& c : a.stats.categories) {
    ordered_json cj;
    cj["category"] = c.category;
    cj["failures"] = c.failures;
    if (c.failures > 0) cj["mtbf_gpu_hours"] = c.mtbf_gpu_hours;
    cj["per_day_at_1k"] = c.per_day_at[0];
    cj["per_day_at_10k"] = c.per_day_at[1];
    cj["per_day_at_100k"] = c.per_day_at[2];
    cj["arithmetic"] = c.arithmetic;
    cats.push_back(cj);
  }
  st["categories"] = cats;
  if (!a.stats.note.empty()) st["note"] = a.stats.note;
  j["failure_stats"] = st;
  const auto& in = a.interruptions;
  ordered_json ij;
  ij["unexpected"] = in.unexpected;
  ij["planned"] = in.planned;
  ij["on_lemons"] = in.lemon_interruptions;
  ij["present_at_start"] = in.present_at_start;
  ij["by_category"] = in.by_category;
  ij["gpu_days"] = in.gpu_days;
  ij["per_gpu_day"] = in.per_gpu_day;
  ij["per_gpu_day_95"] = {in.per_gpu_day_lo, in.per_gpu_day_hi};
  ordered_json proj = ordered_json::array();
  for (int i = 0; i < 3; ++i) {
    proj.push_back({{"gpus", kProjectionGpus[i]},
                    {"per_day", in.per_day_at[i]},
                    {"per_day_95", {in.lo_at[i], in.hi_at[i]}},
                    {"meta_per_day", in.meta_per_day_at[i]}});
  }
  ij["projection"] = proj;
  ij["arithmetic"] = in.arithmetic;
  ordered_json list = ordered_json::array();
  for (const auto& x : in.list) {
    list.push_back({{"time", FormatUtc(x.time_s)},
                    {"node", x.node},
                    {"serial", x.serial},
                    {"id", x.id},
                    {"category", x.category},
                    {"findings", x.findings},
                    {"lemon", x.lemon}});
  }
  ij["list"] = list;
  j["interruptions"] = ij;
  ordered_json probs = ordered_json::array();
  std::vector<InputProblem> all = data.problems;
  all.insert(all.end(), a.problems.begin(), a.problems.end());
  for (const auto& p : all) {
    ordered_json pj;
    pj["source"] = p.source;
    if (!p.node.empty()) pj["node"] = p.node;
    pj["message"] = p.message;
    probs.push_back(pj);
  }
  j["input_problems"] = probs;
  // The nodes (most of the document at fleet scale: ~33 MB at 10k nodes) are written one at a
  // time between the rest of the document's two halves, never held whole (as one JSON tree it was
  // ~240 MiB, as one string with a spliced copy ~100 MiB).
  const std::string doc = Dump(j);
  const std::string quoted = JsonText(ordered_json(kNodesPlaceholder));
  const size_t at = doc.find(quoted);
  if (at == std::string::npos) {  // cannot happen: the placeholder is a plain depth-1 string
    sink(doc);
    return;
  }
  sink(std::string_view(doc).substr(0, at));
  std::string element;
  bool first = true;
  for (const auto& r : a.table) {
    ordered_json n;
    n["node"] = r.node;
    n["worst"] = r.worst;
    if (!r.worst_id.empty()) n["worst_id"] = r.worst_id;
    if (!r.worst_summary.empty()) n["worst_summary"] = r.worst_summary;
    n["last_report"] = FormatUtc(r.last_report_s);
    n["reports"] = r.reports;
    n["gpus_count"] = r.gpus;
    n["onsets"] = r.onsets;
    n["stragglers"] = r.stragglers;
    ordered_json gpus = ordered_json::array();
    for (const auto& g : r.gpu_rows) {
      ordered_json gj = CardJson(data.cards[g.card]);
      gj["worst"] = g.worst;
      if (!g.worst_id.empty()) gj["worst_id"] = g.worst_id;
      OptJson(gj, "sm_clock_mhz", g.sm_clock_mhz);
      OptJson(gj, "power_w", g.power_w);
      OptJson(gj, "util_pct", g.util_pct);
      OptJson(gj, "temp_c", g.temp_c);
      if (!g.straggler.empty()) gj["straggler"] = g.straggler;
      gpus.push_back(gj);
    }
    n["gpus"] = gpus;
    if (!r.missing_cards.empty()) {
      ordered_json missing = ordered_json::array();
      for (uint32_t c : r.missing_cards) missing.push_back(CardJson(data.cards[c]));
      n["missing_gpus"] = missing;
    }
    element.clear();
    AppendElement(element, n);
    sink(first ? "[" : ",");
    first = false;
    sink(element);
  }
  sink(first ? "[]" : "\n  ]");
  sink(std::string_view(doc).substr(at + quoted.size()));
}

std::string RenderFleetJson(const FleetData& data, const FleetAnalysis& a) {
  std::string out;
  WriteFleetJson(data, a, [&out](std::string_view piece) { out.append(piece); });
  return out;
}

std::string RenderVerdictText(const Verdict& v) {
  TerminalText out;
  out.Line(v.subject + ": verdict " + v.verdict);
  out.Line("  " + v.reason);
  out.Blank();
  out.Line("HISTORY");
  if (v.tenures.empty()) out.Line("  (no ledger entries)");
  for (const auto& t : v.tenures) {
    out.Line("  " + FormatUtc(t.first_s) + " .. " + FormatUtc(t.last_s) + "  card " + t.serial +
             " in " + t.node + ":" + t.pci_bus_id + " (" + std::to_string(t.reports) + " reports)");
  }
  out.Blank();
  out.Line("FAULTS");
  if (v.faults.empty()) out.Line("  (none)");
  for (const auto& f : v.faults) {
    out.Line("  " + FormatUtc(f.time_s) + "  " + f.severity + " " + f.id + "  card " +
             (f.serial.empty() ? "?" : f.serial) + " in " + f.node + ":" + f.pci_bus_id + "  " +
             f.summary);
  }
  if (!v.next_steps.empty()) {
    out.Blank();
    out.Line("NEXT STEPS");
    for (const auto& s : v.next_steps) out.Line("  - " + s);
  }
  return out.str();
}

std::string RenderVerdictJson(const Verdict& v) {
  ordered_json j;
  j["subject"] = v.subject;
  j["verdict"] = v.verdict;
  j["reason"] = v.reason;
  ordered_json ten = ordered_json::array();
  for (const auto& t : v.tenures) {
    ten.push_back({{"serial", t.serial},
                   {"node", t.node},
                   {"pci_bus_id", t.pci_bus_id},
                   {"from", FormatUtc(t.first_s)},
                   {"to", FormatUtc(t.last_s)},
                   {"reports", t.reports}});
  }
  j["ledger"] = ten;
  ordered_json ev = ordered_json::array();
  for (const auto& f : v.faults) {
    ev.push_back({{"time", FormatUtc(f.time_s)},
                  {"id", f.id},
                  {"severity", f.severity},
                  {"serial", f.serial},
                  {"node", f.node},
                  {"pci_bus_id", f.pci_bus_id},
                  {"summary", f.summary}});
  }
  j["evidence"] = ev;
  j["next_steps"] = v.next_steps;
  if (v.verdict == "unknown") j["nearest"] = v.nearest;
  return Dump(j);
}

}  // namespace gpudoctor::fleet
