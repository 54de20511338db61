#include "why/why.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/strings.h"
#include "core/time_spec.h"
#include "rules/catalogue.h"

namespace gpudoctor {
namespace {

// Series that are configuration, identity or gpudoctor's own bookkeeping, never a cause.
bool IgnoredMetric(const std::string& m) {
  static const char* const kSkip[] = {
      "gpudoctor_job_",      "gpudoctor_finding_",
      "gpudoctor_probe_",    "gpudoctor_build_info",
      "gpudoctor_last_tick", "gpudoctor_tick_interval",
      "gpudoctor_gpu_info",  "gpudoctor_gpu_clock_event_reasons",
  };
  for (const char* p : kSkip) {
    if (StartsWith(m, p)) return true;
  }
  static const char* const kConstant[] = {"_max_hertz",
                                          "_limit_watts",
                                          "_total_bytes",
                                          "_slowdown_celsius",
                                          "_shutdown_celsius",
                                          "_max_celsius",
                                          "_logical_cores",
                                          "_link_gen_max",
                                          "_link_width_max",
                                          "_speed_bytes_per_second",
                                          "_rate_bytes_per_second",
                                          "_size_bytes",
                                          "_inodes"};
  for (const char* p : kConstant) {
    if (EndsWith(m, p)) return true;
  }
  return false;
}

std::string ShortName(const std::string& metric, const std::string& labels) {
  std::string n = metric;
  if (StartsWith(n, "gpudoctor_")) n = n.substr(10);
  if (StartsWith(n, "gpu_")) n = n.substr(4);
  for (const char* suffix : {"_bytes_per_second", "_per_second", "_celsius", "_hertz", "_ratio",
                             "_watts", "_bytes", "_seconds", "_total"}) {
    if (EndsWith(n, suffix)) {
      n = n.substr(0, n.size() - std::string_view(suffix).size());
      if (std::string_view(suffix) == "_per_second" || std::string_view(suffix) == "_total" ||
          std::string_view(suffix) == "_bytes_per_second") {
        n += std::string_view(suffix) == "_bytes_per_second" ? " throughput" : " rate";
      }
      break;
    }
  }
  std::replace(n.begin(), n.end(), '_', ' ');
  if (!labels.empty()) n += " {" + labels + "}";
  return n;
}

std::string WithUnit(const std::string& metric, double v) {
  if (EndsWith(metric, "_hertz")) return FormatDouble(v / 1e6, 0) + " MHz";
  if (EndsWith(metric, "_celsius")) return FormatDouble(v, 0) + " C";
  if (EndsWith(metric, "_ratio")) return FormatDouble(v * 100, 0) + "%";
  if (EndsWith(metric, "_watts")) return FormatDouble(v, 0) + " W";
  if (EndsWith(metric, "_bytes_per_second")) return FormatDouble(v / 1e6, 1) + " MB/s";
  if (EndsWith(metric, "_bytes")) return FormatDouble(v / (1 << 30), 2) + " GiB";
  if (EndsWith(metric, "_seconds")) {
    return v < 1 ? FormatDouble(v * 1000, 1) + " ms" : FormatDouble(v, 2) + " s";
  }
  if (EndsWith(metric, "_total") || EndsWith(metric, "_per_second")) {
    return FormatDouble(v, 2) + "/s";
  }
  return FormatDouble(v, 2);
}

double Closeness(double lead_s, const WhyOptions& o) {
  if (lead_s >= -o.slack_s) return std::exp(-std::max(0.0, lead_s) / o.tau_s);
  // After the onset: an effect more likely than a cause.
  return 0.15 * std::exp(-(-lead_s - o.slack_s) / o.tau_s);
}

TimedPoints AsRate(const TimedPoints& p) {
  TimedPoints out;
  for (size_t i = 1; i < p.size(); ++i) {
    int64_t dt = p[i].first - p[i - 1].first;
    double dv = p[i].second - p[i - 1].second;
    if (dt <= 0 || dv < 0) continue;  // a reset
    out.emplace_back(p[i].first, dv / static_cast<double>(dt));
  }
  return out;
}

std::string Hms(int64_t unix_s) {
  std::string iso = FormatUtc(unix_s);  // 2026-12-05T14:02:11Z
  return iso.size() >= 20 ? iso.substr(11, 8) : iso;
}

std::string LeadText(double lead_s) {
  double a = std::fabs(lead_s);
  std::string n = a < 120 ? FormatDouble(a, 0) + " s" : FormatDouble(a / 60, 0) + " min";
  if (a < 1) return "at the onset";
  return n + (lead_s > 0 ? " before" : " after");
}

struct MetricChange {
  WhyCause cause;
  bool used = false;
  std::string metric;
};

// Host metrics that are the evidence of a host/network finding.
const char* EvidenceKey(const std::string& id) {
  if (id == "host.iowait.high") return "iowait";
  if (id == "host.cpu.saturated" || id == "host.load.high") return "cpu";
  if (id == "host.memory.low") return "memory";
  if (id == "host.swap.active") return "swap";
  if (StartsWith(id, "host.pressure")) return "pressure";
  if (id == "host.inlet.temperature" || id == "host.thermal") return "temperature";
  if (StartsWith(id, "net.")) return "net_";
  return nullptr;
}

}  // namespace

double FindingPrior(const std::string& id) {
  if (StartsWith(id, "job.") || StartsWith(id, "gpudoctor.")) return 0;
  static const std::pair<const char*, double> kPriors[] = {
      {"gpu.thermal", 1.0},
      {"gpu.hw_slowdown", 1.0},
      {"gpu.power.brake", 1.0},
      {"gpu.clocks.low", 0.95},
      {"host.inlet.temperature", 0.95},
      {"gpu.temp.absolute", 0.9},
      {"host.thermal", 0.9},
      {"gpu.power.cap", 0.85},
      {"gpu.xid", 0.9},
      {"gpu.lost", 0.9},
      {"gpu.pcie", 0.85},
      {"gpu.nvlink", 0.85},
      {"nvswitch.sxid", 0.85},
      {"pcie.aer", 0.85},
      {"gpu.ecc", 0.8},
      {"gpu.remap", 0.8},
      {"hardware.mce", 0.8},
      {"gpu.fan", 0.85},
      {"host.", 0.7},
      {"proc.dstate", 0.65},
      {"net.", 0.6},
      {"driver.", 0.6},
      {"kernel.hung_task", 0.6},
      {"kernel.cpu_stall", 0.65},
      {"gpu.util", 0.3},
      {"proc.suspicious", 0.6},
  };
  for (const auto& [prefix, w] : kPriors) {
    if (StartsWith(id, prefix)) return w;
  }
  return 0.4;
}

double EventPrior(const std::string& kind) {
  if (kind == "xid") return 0.95;
  if (kind == "gpu_disappeared") return 0.9;
  if (kind == "driver_changed") return 0.8;
  if (kind == "reboot") return 0.6;
  if (kind == "gpu_appeared") return 0.5;
  if (kind == "config_reloaded") return 0.2;
  return 0;  // notifications, acks, silences, the store's own
}

double MetricPrior(const std::string& m, const std::string& labels) {
  if (IgnoredMetric(m)) return 0;
  if (m == "gpudoctor_gpu_throttle_active") {
    if (labels.find("hw_") != std::string::npos || labels.find("sw_thermal") != std::string::npos)
      return 0.95;
    if (labels.find("gpu_idle") != std::string::npos) return 0.2;
    return 0.6;
  }
  if (m.find("_clock_") != std::string::npos) return 0.9;
  if (StartsWith(m, "gpudoctor_gpu_xid")) return 0.9;
  if (m.find("temperature") != std::string::npos) return 0.8;
  if (m.find("pcie") != std::string::npos || m.find("nvlink") != std::string::npos) return 0.8;
  if (m.find("power") != std::string::npos) return 0.7;
  if (StartsWith(m, "gpudoctor_host_")) return 0.7;
  if (StartsWith(m, "gpudoctor_nic_") || StartsWith(m, "gpudoctor_ib_") ||
      StartsWith(m, "gpudoctor_net_"))
    return 0.6;
  if (m.find("utilization") != std::string::npos) return 0.4;
  return 0.4;
}

WhyResult ExplainSlowdown(const WhyInput& in, const WhyOptions& opt) {
  WhyResult r;
  r.subject = in.subject;
  r.from_job = in.from_job;
  r.target_points = in.target.points.size();
  if (in.at_unix_s) {
    r.onset_given = true;
    ChangePoint cp;
    cp.unix_s = *in.at_unix_s;
    cp.prev_unix_s = *in.at_unix_s;
    std::vector<double> a, b;
    for (const auto& [t, v] : in.target.points) (t < *in.at_unix_s ? a : b).push_back(v);
    auto med = [](std::vector<double> v) {
      if (v.empty()) return 0.0;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    cp.before = med(a);
    cp.after = med(b);
    r.onset = cp;
  } else {
    r.onset = SlowdownOnset(in.target.points, opt.min_factor, opt.min_points);
    if (!r.onset) {
      if (in.target.points.size() < 2 * opt.min_points) {
        r.no_change = "too few points (" + std::to_string(in.target.points.size()) +
                      ") to find a change; need " + std::to_string(2 * opt.min_points);
      } else {
        r.no_change = "no change point of x" + FormatDouble(opt.min_factor, 1) + " or more in " +
                      std::to_string(in.target.points.size()) + " points";
      }
      return r;
    }
  }
  const int64_t onset = r.onset->unix_s;

  std::vector<WhyCause> causes;
  // Metric changes.
  std::vector<MetricChange> changes;
  for (const Series& s : in.candidates) {
    double prior = MetricPrior(s.metric, s.labels);
    if (prior <= 0) continue;
    TimedPoints pts;
    for (const auto& p : s.points) {
      if (p.first >= onset - opt.lookback_s && p.first <= onset + opt.lookback_s / 4) {
        pts.push_back(p);
      }
    }
    if (EndsWith(s.metric, "_total")) pts = AsRate(pts);
    std::optional<ChangePoint> cp = BestSplit(pts, opt.min_points, false);
    if (!cp) continue;
    double scale = std::max(std::fabs(cp->before), std::fabs(cp->after));
    double rel = scale > 0 ? std::fabs(cp->after - cp->before) / scale : 0;
    if (rel < 0.1 || cp->effect < 3 || cp->explained < 0.5) continue;
    MetricChange mc;
    mc.metric = s.metric;
    WhyCause& c = mc.cause;
    c.kind = "metric";
    c.id = s.metric;
    c.gpu = s.gpu && *s.gpu >= 0 ? s.gpu : std::nullopt;
    c.unix_s = cp->unix_s;
    c.lead_s = static_cast<double>(onset - cp->unix_s);
    std::string name = ShortName(s.metric, s.labels);
    c.what = (c.gpu ? "GPU " + std::to_string(*c.gpu) + " " : std::string()) + name + " " +
             WithUnit(s.metric, cp->before) + " -> " + WithUnit(s.metric, cp->after);
    double size = std::min(1.0, rel / 0.5) * std::min(1.0, cp->effect / 6);
    c.score = prior * Closeness(c.lead_s, opt) * (0.5 + 0.5 * size);
    changes.push_back(std::move(mc));
  }
  // Findings that began in the window (pending ones count from when the rule first fired).
  for (const TrackedFinding& f : in.findings) {
    double prior = FindingPrior(f.last.id);
    if (prior <= 0) continue;
    int64_t t_ms = f.first_seen_ms > 0 ? f.first_seen_ms : f.opened_ms;
    int64_t t = t_ms / 1000;
    if (t < onset - opt.lookback_s || t > onset + opt.lookback_s / 4) continue;
    if (f.resolved_ms > 0 && f.resolved_ms / 1000 < onset - opt.slack_s) continue;  // over before
    WhyCause c;
    c.kind = "finding";
    c.id = f.last.id;
    if (f.last.gpu && f.last.gpu->index) c.gpu = f.last.gpu->index;
    c.unix_s = t;
    c.lead_s = static_cast<double>(onset - t);
    c.what = f.last.id + " (" + SeverityName(f.last.severity) + "): " + f.last.summary;
    double sev = f.last.severity == Severity::kCrit   ? 1.0
                 : f.last.severity == Severity::kWarn ? 0.8
                                                      : 0.5;
    c.score = prior * Closeness(c.lead_s, opt) * sev;
    if (!f.last.next_steps.empty()) {
      c.next_step = f.last.next_steps.front();
    } else if (const CatalogueEntry* e = FindCatalogueEntry(f.last.id);
               e != nullptr && !e->next_steps.empty()) {
      c.next_step = std::string(e->next_steps.front());
    }
    // The metric changes of the same GPU (or the host metrics the finding is about) near it.
    const char* key = EvidenceKey(f.last.id);
    for (MetricChange& mc : changes) {
      if (mc.used || std::fabs(static_cast<double>(mc.cause.unix_s - t)) > opt.tau_s) continue;
      bool same =
          c.gpu ? mc.cause.gpu == c.gpu
                : (!mc.cause.gpu && key != nullptr && mc.metric.find(key) != std::string::npos);
      if (!same) continue;
      c.evidence.push_back(mc.cause.what);
      mc.used = true;
      c.score = std::max(c.score, mc.cause.score) * 1.05;  // corroborated
    }
    causes.push_back(std::move(c));
  }
  for (const HistoryEvent& e : in.events) {
    double prior = EventPrior(e.kind);
    if (prior <= 0) continue;
    int64_t t = e.unix_ms / 1000;
    if (t < onset - opt.lookback_s || t > onset + opt.lookback_s / 4) continue;
    WhyCause c;
    c.kind = "event";
    c.id = e.kind;
    c.gpu = e.gpu_index;
    c.unix_s = t;
    c.lead_s = static_cast<double>(onset - t);
    c.what = e.kind + (e.gpu_index ? " on GPU " + std::to_string(*e.gpu_index) : std::string()) +
             (e.detail.empty() ? std::string() : ": " + e.detail);
    c.score = prior * Closeness(c.lead_s, opt);
    if (e.kind == "xid") {
      if (const CatalogueEntry* ce = FindCatalogueEntry("gpu.xid"); ce && !ce->next_steps.empty())
        c.next_step = std::string(ce->next_steps.front());
    }
    causes.push_back(std::move(c));
  }
  for (MetricChange& mc : changes) {
    if (!mc.used) causes.push_back(std::move(mc.cause));
  }
  std::stable_sort(causes.begin(), causes.end(),
                   [](const WhyCause& a, const WhyCause& b) { return a.score > b.score; });
  if (causes.size() > opt.max_causes) causes.resize(opt.max_causes);
  r.causes = std::move(causes);
  return r;
}

std::string WhyToText(const WhyResult& r) {
  std::string out;
  if (!r.from_job) {
    out +=
        "No job step time in the history ([[job]] or gpudoctor mark step): working from GPU "
        "utilisation alone (useful work per GPU).\n";
  }
  if (!r.onset) {
    out += r.subject + ": no slowdown found: " + r.no_change + ".\n";
    return out;
  }
  const ChangePoint& o = *r.onset;
  double factor = o.before > 0 ? o.after / o.before : 0;
  std::string unit = r.from_job ? " s" : "";
  out += r.subject + ": " + (r.onset_given ? "onset given at " : "slowdown began ") +
         FormatUtc(o.unix_s) + " (" + Hms(o.unix_s) + "Z)";
  if (r.from_job) {
    out += ": step time " + FormatDouble(o.before, 3) + " s -> " + FormatDouble(o.after, 3) +
           " s (x" + FormatDouble(factor, 1) + ")";
  } else {
    out += ": utilisation " + FormatDouble(o.before > 0 ? 100 / o.before : 0, 0) + "% -> " +
           FormatDouble(o.after > 0 ? 100 / o.after : 0, 0) + "%";
  }
  out += "\n";
  if (r.causes.empty()) {
    out += "Nothing in the history changed around then (findings, events, metric series).\n";
    return out;
  }
  out += "What changed around then, most likely cause first:\n";
  int n = 0;
  for (const WhyCause& c : r.causes) {
    out += "  " + std::to_string(++n) + ". " + Hms(c.unix_s) + "Z (" + LeadText(c.lead_s) + ") " +
           c.kind + ": " + c.what + "\n";
    if (!c.evidence.empty()) {
      std::string ev;
      for (const std::string& e : c.evidence) ev += (ev.empty() ? "" : "; ") + e;
      out += "       " + ev + "\n";
    }
    if (!c.next_step.empty()) out += "       next: " + c.next_step + "\n";
  }
  return out;
}

nlohmann::ordered_json WhyToJson(const WhyResult& r) {
  nlohmann::ordered_json j;
  j["subject"] = r.subject;
  j["source"] = r.from_job ? "job" : "gpu_utilization";
  j["points"] = r.target_points;
  if (!r.onset) {
    j["onset"] = nullptr;
    j["no_change"] = r.no_change;
  } else {
    const ChangePoint& o = *r.onset;
    j["onset"] = {{"time", FormatUtc(o.unix_s)},
                  {"unix_s", o.unix_s},
                  {"given", r.onset_given},
                  {"before", o.before},
                  {"after", o.after},
                  {"factor", o.before > 0 ? o.after / o.before : 0.0}};
  }
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const WhyCause& c : r.causes) {
    nlohmann::ordered_json e = {{"time", FormatUtc(c.unix_s)},
                                {"unix_s", c.unix_s},
                                {"lead_s", c.lead_s},
                                {"kind", c.kind},
                                {"id", c.id},
                                {"score", c.score}};
    if (c.gpu) e["gpu"] = *c.gpu;
    e["what"] = c.what;
    e["evidence"] = c.evidence;
    if (!c.next_step.empty()) e["next_step"] = c.next_step;
    arr.push_back(std::move(e));
  }
  j["causes"] = std::move(arr);
  return j;
}

}  // namespace gpudoctor
