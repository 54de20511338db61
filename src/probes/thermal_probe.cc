// Thermal probe: the temperature of the air the server breathes. Sources:
// <sysfs>/class/hwmon/hwmon*/{name,tempN_label,tempN_input} (millidegrees C), keeping sensors
// whose label names inlet/ambient/intake/room or board/system air; and the BMC through
// `ipmitool sdr type Temperature` (argv, no shell, killed at [thermal] ipmitool_timeout_s or the
// check's deadline), run only when a BMC device node (/dev/ipmi0, /dev/ipmi/0, /dev/ipmidev/0)
// exists under the root and, for the bare command name, only on the real root (never against
// a fixture tree). Units: degrees Celsius. Failure modes: no such sensor and no BMC → skipped.
#include <algorithm>

#include "core/strings.h"
#include "core/subprocess.h"
#include "parsers/temperature_sensors.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxHwmonChips = 64;
constexpr size_t kMaxInputsPerChip = 64;
constexpr size_t kMaxSensors = 64;

std::string ReadTrimmed(const std::string& path) {
  auto text = RootFs::ReadFile(path, 4096);
  return text.ok() ? std::string(Trim(*text)) : std::string();
}

void ReadHwmon(const RootFs& fs, std::vector<TemperatureSensor>& out) {
  std::string base = fs.SysPath("class/hwmon");
  auto chips = RootFs::ListDir(base);
  if (!chips.ok()) return;
  size_t n_chips = 0;
  for (const std::string& chip : *chips) {
    if (++n_chips > kMaxHwmonChips || out.size() >= kMaxSensors) break;
    std::string dir = base + "/" + chip;
    std::string chip_name = Sanitize(ReadTrimmed(dir + "/name"), 64);
    auto files = RootFs::ListDir(dir);
    if (!files.ok()) continue;
    size_t n_inputs = 0;
    for (const std::string& f : *files) {
      if (!StartsWith(f, "temp") || !EndsWith(f, "_input")) continue;
      if (++n_inputs > kMaxInputsPerChip || out.size() >= kMaxSensors) break;
      std::string stem = f.substr(0, f.size() - 6);  // "temp1"
      std::string label = Sanitize(ReadTrimmed(dir + "/" + stem + "_label"), 64);
      if (label.empty()) continue;  // unlabelled inputs say nothing about where they sit
      std::optional<SensorKind> kind = ClassifyTemperatureLabel(label);
      if (!kind) continue;
      TemperatureSensor s;
      s.name = label;
      s.source = "hwmon";
      s.chip = (chip_name.empty() ? chip : chip_name) + "/" + stem;
      s.kind = *kind;
      auto value = RootFs::ReadFile(dir + "/" + f, 64);
      if (value.ok()) s.temp_c = ParseHwmonMillidegrees(*value);
      out.push_back(std::move(s));
    }
  }
}

bool HasBmcDevice(const RootFs& fs) {
  for (const char* dev : {"/dev/ipmi0", "/dev/ipmi/0", "/dev/ipmidev/0"}) {
    if (RootFs::Exists(fs.RootPath(dev))) return true;
  }
  return false;
}

// Runs ipmitool when allowed; fills sensors, ipmi_ran and ipmi_note.
void ReadIpmi(const ProbeContext& ctx, ThermalFacts& facts) {
  const Settings& s = *ctx.settings;
  const std::string& cmd = s.thermal_ipmitool;
  if (cmd.empty()) {
    facts.ipmi_note = "ipmitool disabled ([thermal] ipmitool = \"\")";
    return;
  }
  if (cmd.find('/') == std::string::npos && ctx.fs().rootfs() != "/") {
    facts.ipmi_note = "ipmitool not run against another root (--path.rootfs)";
    return;
  }
  if (!HasBmcDevice(ctx.fs())) {
    facts.ipmi_note = "no BMC device (/dev/ipmi0)";
    return;
  }
  double left_s = std::chrono::duration<double>(ctx.deadline - SteadyClock::now()).count() - 0.2;
  double timeout_s = std::min(s.thermal_ipmitool_timeout_s, left_s);
  if (timeout_s < 0.05) {
    facts.ipmi_note = "no time left before the check's deadline for ipmitool";
    return;
  }
  auto r = RunProcess({cmd, "sdr", "type", "Temperature"}, timeout_s);
  if (!r.ok()) {
    facts.ipmi_note = r.status().message();
    return;
  }
  if (r->exit_code != 0) {
    auto lines = SplitLines(r->err);
    facts.ipmi_note = "ipmitool exited with " + std::to_string(r->exit_code) +
                      (lines.empty() ? "" : ": " + Sanitize(lines.front(), 160));
    return;
  }
  facts.ipmi_ran = true;
  for (const IpmiTemperature& t : ParseIpmiTemperatures(r->out)) {
    if (facts.sensors.size() >= kMaxSensors) break;
    std::optional<SensorKind> kind = ClassifyTemperatureLabel(t.name);
    if (!kind) continue;
    facts.sensors.push_back({t.name, "ipmi", "", *kind, t.temp_c});
  }
}

// Two sensors of one source with one label (two hwmon chips both saying "Ambient") would be one
// metric series twice: the later ones get " #2", " #3".
void MakeNamesUnique(std::vector<TemperatureSensor>& sensors) {
  for (size_t i = 0; i < sensors.size(); ++i) {
    int same = 1;
    for (size_t j = 0; j < i; ++j) {
      if (sensors[j].source == sensors[i].source && sensors[j].name == sensors[i].name) ++same;
    }
    if (same > 1) sensors[i].name += " #" + std::to_string(same);
  }
}

}  // namespace

ProbeOutput RunThermalProbe(const ProbeContext& ctx) {
  ThermalFacts facts;
  ReadHwmon(ctx.fs(), facts.sensors);
  ReadIpmi(ctx, facts);
  MakeNamesUnique(facts.sensors);
  auto apply = [facts](Snapshot& snap) { snap.host.thermal = facts; };
  if (facts.sensors.empty()) {
    std::string why = "no inlet, ambient or board temperature sensor in hwmon";
    if (!facts.ipmi_note.empty()) why += "; " + facts.ipmi_note;
    return ProbeSkipped(why, apply);
  }
  return ProbeOk(apply);
}

}  // namespace gpudoctor
