#include "report/json_report.h"

#include <algorithm>
#include <ctime>

#include "core/json_text.h"
#include "report/facts_json.h"
#include "report/gpu_report.h"
#include "report/job_label.h"
#include "report/kernel_log_json.h"
#include "report/report.h"

namespace gpudoctor {

void SortFindings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.layer != b.layer) return a.layer < b.layer;
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.id != b.id) return a.id < b.id;
    return a.subject < b.subject;
  });
}

const char* Verdict(const std::vector<Finding>& findings) {
  auto worst = WorstSeverity(findings);
  if (!worst || *worst == Severity::kInfo) return "ok";
  return *worst == Severity::kWarn ? "warn" : "crit";
}

int ExitCodeFor(const std::vector<Finding>& findings) {
  auto worst = WorstSeverity(findings);
  if (!worst || *worst == Severity::kInfo) return 0;
  return *worst == Severity::kWarn ? 1 : 2;
}

Action NodeAction(const std::vector<Finding>& findings) {
  Action worst = Action::kNone;
  for (const auto& f : findings) {
    if (f.severity == Severity::kInfo) continue;
    if (static_cast<int>(f.action) > static_cast<int>(worst)) worst = f.action;
  }
  return worst;
}

nlohmann::ordered_json FindingToJson(const Finding& f) {
  nlohmann::ordered_json j;
  j["id"] = f.id;
  j["layer"] = LayerName(f.layer);
  j["severity"] = SeverityName(f.severity);
  j["action"] = ActionName(f.action);
  j["summary"] = f.summary;
  nlohmann::ordered_json ev = nlohmann::ordered_json::object();
  for (const auto& item : f.evidence) {
    std::visit([&](const auto& v) { ev[item.name] = v; }, item.value);
  }
  j["evidence"] = ev;
  j["next_steps"] = f.next_steps;
  if (!f.subject.empty()) j["subject"] = f.subject;
  if (f.gpu) {
    nlohmann::ordered_json g = nlohmann::ordered_json::object();
    if (f.gpu->index) g["index"] = *f.gpu->index;
    if (!f.gpu->uuid.empty()) g["uuid"] = f.gpu->uuid;
    if (!f.gpu->pci_bus_id.empty()) g["pci_bus_id"] = f.gpu->pci_bus_id;
    if (!f.gpu->serial.empty()) g["serial"] = f.gpu->serial;
    if (!f.gpu->name.empty()) g["name"] = f.gpu->name;
    j["gpu"] = g;
  }
  return j;
}

nlohmann::ordered_json ProbeRecordToJson(const ProbeRecord& p) {
  nlohmann::ordered_json j;
  j["name"] = p.name;
  j["layer"] = LayerName(p.layer);
  j["status"] = ProbeStateName(p.state);
  j["ms"] = static_cast<double>(static_cast<int64_t>(p.ms * 1000)) / 1000.0;
  if (!p.reason.empty()) j["reason"] = p.reason;
  return j;
}

std::string RenderJson(const Report& report) { return DumpReportJson(ReportToJson(report)); }

std::string DumpReportJson(const nlohmann::ordered_json& j) {
  // Invalid UTF-8 from outside input is replaced, never thrown on.
  return JsonText(j, 2) + "\n";
}

nlohmann::ordered_json ReportToJson(const Report& report) {
  nlohmann::ordered_json j;
  j["verdict"] = Verdict(report.findings);
  j["action"] = ActionName(NodeAction(report.findings));
  j["host"] = report.snapshot.hostname;
  j["time"] = FormatUtc(report.snapshot.time);
  // The job this check ran in (fleet groups a multi-node job's GPUs by it); absent when none.
  if (std::string job = JobLabelFromEnvironment(); !job.empty()) j["job"] = job;
  j["duration_ms"] = static_cast<int64_t>(report.duration_ms);
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& f : report.findings) findings.push_back(FindingToJson(f));
  j["findings"] = findings;
  nlohmann::ordered_json probes = nlohmann::ordered_json::array();
  for (const auto& p : report.snapshot.probes) probes.push_back(ProbeRecordToJson(p));
  j["probes"] = probes;
  // Layer sections (one line each), present when their probe ran.
  if (auto net = NetworkFactsToJson(report.snapshot.network); !net.empty()) j["network"] = net;
  if (auto host = HostFactsToJson(report.snapshot.host); !host.empty()) j["resources"] = host;
  if (!report.snapshot.kernel.source.empty()) {
    j["kernel_log"] = KernelLogFactsToJson(report.snapshot.kernel);
  }
  nlohmann::ordered_json gpu_layer = GpuFactsToJson(report.snapshot.gpu);
  for (auto& [key, value] : gpu_layer.items()) j[key] = value;
  if (!report.snapshot.jobs.empty()) j["jobs"] = JobFactsToJson(report.snapshot.jobs);
  if (!report.snapshot.inference.empty()) {
    j["inference"] = InferenceFactsToJson(report.snapshot.inference);
  }
  return j;
}

}  // namespace gpudoctor
