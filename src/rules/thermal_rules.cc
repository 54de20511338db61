// Thermal environment rules: host.inlet.temperature (one finding per inlet sensor outside the
// band; board sensors are never judged against a room band) and gpu.temp.absolute (the
// configured absolute alarm, off at 0).
#include <string>

#include "core/strings.h"
#include "rules/upkeep_rules.h"

namespace gpudoctor {
namespace {

void InletRule(const TemperatureSensor& s, const Thresholds& t, std::vector<Finding>& out) {
  if (s.kind != SensorKind::kInlet || !s.temp_c) return;
  const char* id = "host.inlet.temperature";
  double c = *s.temp_c;
  double warn_low = t.Get(id, "warn_low_c"), warn_high = t.Get(id, "warn_high_c");
  double crit_low = t.Get(id, "crit_low_c"), crit_high = t.Get(id, "crit_high_c");
  Severity sev;
  if (c > crit_high || c < crit_low) {
    sev = Severity::kCrit;
  } else if (c > warn_high || c < warn_low) {
    sev = Severity::kWarn;
  } else {
    return;
  }
  bool hot = c > warn_high;
  Finding f =
      MakeFinding(id, sev,
                  "inlet air " + FormatDouble(c) + " C (" + s.name + ", " + s.source + ") is " +
                      (hot ? "above" : "below") + " the " + FormatDouble(warn_low, 0) + "-" +
                      FormatDouble(warn_high, 0) + " C band");
  f.subject = s.source + ":" + s.name;
  f.Add("sensor", s.name).Add("source", s.source);
  if (!s.chip.empty()) f.Add("chip", s.chip);
  f.Add("temp_c", c).Add("band_low_c", warn_low).Add("band_high_c", warn_high);
  f.Add("crit_low_c", crit_low).Add("crit_high_c", crit_high);
  out.push_back(std::move(f));
}

void GpuAlarmRule(const GpuFacts& g, double alarm_c, std::vector<Finding>& out) {
  if (!g.temp_c || *g.temp_c < alarm_c) return;
  Finding f = GpuFinding("gpu.temp.absolute", Severity::kWarn, g,
                         std::to_string(*g.temp_c) + " C, at or above the alarm temperature " +
                             FormatDouble(alarm_c, 0) + " C");
  f.Add("temp_c", *g.temp_c).Add("alarm_c", alarm_c);
  if (g.temp_slowdown_c) f.Add("slowdown_temp_c", *g.temp_slowdown_c);
  out.push_back(std::move(f));
}

}  // namespace

void ThermalRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (snap.host.thermal) {
    for (const TemperatureSensor& s : snap.host.thermal->sensors) InletRule(s, t, out);
  }
  double alarm_c = t.Get("gpu.temp.absolute", "alarm_c");
  if (alarm_c > 0) {
    for (const GpuFacts& g : snap.gpu.gpus) GpuAlarmRule(g, alarm_c, out);
  }
}

}  // namespace gpudoctor
