#include "bundle/bundle.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "bundle/bundle_internal.h"
#include "bundle/redact.h"
#include "facts/pci_bus_id.h"
#include "probes/registry.h"
#include "report/json_report.h"
#include "report/kernel_log_json.h"
#include "rules/catalogue.h"

namespace gpudoctor {
namespace {

bool FromKernelLog(const Finding& f) {
  for (const CatalogueEntry& e : KernelCatalogue()) {
    if (f.id == e.id || f.id.rfind(std::string(e.id) + ".", 0) == 0) return true;
  }
  return false;
}

std::string KernelJson(const Report& r) {
  const KernelLogFacts& k = r.snapshot.kernel;
  nlohmann::ordered_json j;
  j["kernel_log"] = KernelLogFactsToJson(k);
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const KernelEvent& e : k.events) {
    nlohmann::ordered_json ev;
    ev["kind"] = KernelEventKindName(e.kind);
    ev["subject"] = e.subject;
    if (e.pci) ev["pci_bus_id"] = FormatPciBusId(*e.pci);
    ev["count"] = e.count;
    if (e.first.wall_us) ev["first_unix_us"] = *e.first.wall_us;
    if (e.last.wall_us) ev["last_unix_us"] = *e.last.wall_us;
    if (e.first.boot_us) ev["first_boot_us"] = *e.first.boot_us;
    if (e.last.boot_us) ev["last_boot_us"] = *e.last.boot_us;
    ev["sample"] = e.sample;
    if (!e.processes.empty()) ev["processes"] = e.processes;
    if (!e.ids.empty()) ev["ids"] = e.ids;
    events.push_back(std::move(ev));
  }
  j["events"] = std::move(events);
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const Finding& f : r.findings) {
    if (FromKernelLog(f)) findings.push_back(FindingToJson(f));
  }
  j["findings"] = std::move(findings);
  return DumpJson(j);
}

std::string ProbesJson(const Report& r, const Settings& s) {
  auto enabled = EnabledProbes(s);
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const ProbeSpec& p : ProbeRegistry()) {
    nlohmann::ordered_json j;
    j["name"] = p.name;
    j["layer"] = LayerName(p.layer);
    j["enabled"] = std::find(enabled.begin(), enabled.end(), &p) != enabled.end();
    j["cadence"] = p.cadence == Cadence::kFast ? "fast" : "slow";
    j["description"] = p.description;
    const ProbeRecord* run = nullptr;
    for (const ProbeRecord& rec : r.snapshot.probes) {
      if (rec.name == p.name) run = &rec;
    }
    if (run != nullptr) {
      j["status"] = ProbeStateName(run->state);
      if (!run->reason.empty()) j["reason"] = run->reason;
      j["ms"] = run->ms;
    } else {
      j["status"] = "not_run";
    }
    arr.push_back(std::move(j));
  }
  nlohmann::ordered_json out;
  out["probes"] = std::move(arr);
  return DumpJson(out);
}

std::string FirstLine(const Result<std::string>& r) {
  if (!r.ok()) return "unknown (" + r.status().message() + ")";
  std::string s = r->substr(0, r->find('\n'));
  return s.empty() ? "unknown" : s;
}

std::string VersionsText(const BundleInputs& in) {
  const DriverFacts& d = in.report->snapshot.gpu.driver;
  const RootFs& fs = in.settings->fs;
  auto or_unknown = [](const std::string& v) { return v.empty() ? std::string("unknown") : v; };
  std::string out = "gpudoctor: " + in.version + "\n";
  out += "nvidia driver: " + or_unknown(d.driver_version) + "\n";
  out += "nvml: " + or_unknown(d.nvml_version) + "\n";
  out += "cuda driver api: " +
         (d.cuda_driver_version ? std::to_string(*d.cuda_driver_version / 1000) + "." +
                                      std::to_string(*d.cuda_driver_version % 1000 / 10)
                                : std::string("unknown")) +
         "\n";
  out += "nvidia kernel module: " + or_unknown(d.kernel_module_version) + "\n";
  out += "kernel release: " + FirstLine(fs.ReadProc("sys/kernel/osrelease", 4096)) + "\n";
  out += "kernel version: " + FirstLine(fs.ReadProc("sys/kernel/version", 4096)) + "\n";
  out += "\n# os-release\n";
  auto os = RootFs::ReadFile(fs.RootPath("/etc/os-release"), 16384);
  if (!os.ok()) os = RootFs::ReadFile(fs.RootPath("/usr/lib/os-release"), 16384);
  out += os.ok() ? *os : "unknown (" + os.status().message() + ")\n";
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

std::string ConfigToml(const BundleInputs& in) {
  if (in.config_path.empty()) {
    return "# gpudoctor bundle: no config file was applied; the defaults and command-line flags\n"
           "# were in effect (see `gpudoctor config --default`).\n";
  }
  return "# gpudoctor bundle: " + in.config_path +
         " as applied, secrets redacted; command-line flags win over it.\n" +
         RedactConfigToml(in.config_text, in.secrets);
}

std::string Describe(const std::string& name) {
  if (name == "report.json") return "the check, as `gpudoctor check --json`";
  if (name == "report.txt") return "the check, as `gpudoctor check`";
  if (name == "kernel.json") return "kernel-log accounting, events and the findings from it";
  if (name == "probes.json") return "every probe: enabled, cadence, status in this check";
  if (name == "versions.txt") return "gpudoctor, driver, NVML, kernel and OS versions";
  if (name == "config.toml") return "the config in effect, secrets redacted";
  if (name == "history/findings.json") return "finding episodes of the history window";
  if (name == "history/events.json") return "history events (Xids, reboots, notifications)";
  if (name == "history/metrics.json") return "key GPU and host series of the history window";
  if (name == "nvidia/nvidia-smi-q.txt") return "`nvidia-smi -q` on this host";
  if (name == "nvidia/nvidia-bug-report.log.gz") return "`nvidia-bug-report.sh` (not redacted)";
  if (name == "kernel-tail.txt") return "the raw tail of the kernel log";
  return "";
}

}  // namespace

std::vector<BundleMember> BuildBundleMembers(const BundleInputs& in) {
  std::vector<BundleMember> out;
  std::vector<std::string> notes = in.notes;
  const Report& r = *in.report;
  out.push_back({"report.json", RenderJson(r)});
  out.push_back({"report.txt", RenderText(r, false)});
  out.push_back({"kernel.json", KernelJson(r)});
  out.push_back({"probes.json", ProbesJson(r, *in.settings)});
  out.push_back({"versions.txt", VersionsText(in)});
  out.push_back({"config.toml", ConfigToml(in)});
  AddHistoryMembers(in, out, notes);
  std::vector<BundleMember> compressed;
  for (const BundleMember& m : in.attachments) {
    bool gz = m.name.size() > 3 && m.name.compare(m.name.size() - 3, 3, ".gz") == 0;
    (gz ? compressed : out).push_back(m);
  }
  // Besides the bearer token: URL userinfo and ?token=/NAME=secret in every member (history
  // events and findings may quote URLs and command lines).
  for (BundleMember& m : out) m.content = RedactText(m.content, in.secrets);
  out.insert(out.end(), compressed.begin(), compressed.end());

  std::string manifest = "gpudoctor bundle\n";
  manifest += "host: " + r.snapshot.hostname + "\n";
  manifest +=
      "created: " +
      FormatUtc(std::chrono::system_clock::time_point(std::chrono::seconds(in.now_unix_s))) + "\n";
  manifest += "gpudoctor: " + in.version + "\n";
  manifest += std::string("verdict: ") + Verdict(r.findings) + " (" +
              std::to_string(r.findings.size()) + " findings)\n";
  manifest += "history: " + (in.db_path.empty() ? std::string("none") : in.db_path) + ", last " +
              std::to_string(in.history_s / 3600) + " h\n\n";
  for (const BundleMember& m : out) {
    char line[256];
    std::snprintf(line, sizeof(line), "%-24s %10zu  %s\n", m.name.c_str(), m.content.size(),
                  Describe(m.name).c_str());
    manifest += line;
  }
  if (!notes.empty()) {
    manifest += "\nnotes:\n";
    for (const std::string& n : notes) manifest += "- " + n + "\n";
  }
  out.push_back({"MANIFEST.txt", RedactText(manifest, in.secrets)});
  return out;
}

std::string DefaultBundleName(const std::string& hostname, int64_t unix_s) {
  std::string host;
  for (char c : hostname) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    host += ok ? c : '_';
  }
  if (host.empty()) host = "unknown";
  std::string t =
      FormatUtc(std::chrono::system_clock::time_point(std::chrono::seconds(unix_s)));  // ISO
  std::string compact;
  for (char c : t) {
    if (c != '-' && c != ':') compact += c;
  }
  return "gpudoctor-bundle-" + host + "-" + compact + ".tar.gz";
}

}  // namespace gpudoctor
