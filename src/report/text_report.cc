#include <cstdio>
#include <map>
#include <string>

#include "core/i18n.h"
#include "core/strings.h"
#include "report/gpu_report.h"
#include "report/net_report.h"
#include "report/report.h"

namespace gpudoctor {
namespace {

struct Palette {
  bool on;
  std::string Wrap(const char* code, const std::string& s) const {
    return on ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
  }
  std::string Sev(Severity sev, const std::string& s) const {
    switch (sev) {
      case Severity::kCrit:
        return Wrap("1;31", s);
      case Severity::kWarn:
        return Wrap("1;33", s);
      case Severity::kInfo:
        return Wrap("36", s);
    }
    return s;
  }
  std::string Bold(const std::string& s) const { return Wrap("1", s); }
  std::string Dim(const std::string& s) const { return Wrap("2", s); }
  std::string Ok(const std::string& s) const { return Wrap("32", s); }
};

std::string SevLabel(Severity s) {
  switch (s) {
    case Severity::kCrit:
      return "CRIT";
    case Severity::kWarn:
      return "WARN";
    case Severity::kInfo:
      return "INFO";
  }
  return "?";
}

std::string EvidenceValue(const EvidenceItem& item) {
  struct Visitor {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return FormatDouble(v, 2); }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
  };
  return std::visit(Visitor{}, item.value);
}

std::string GpuLabel(const GpuRef& g) {
  std::string s = "GPU";
  if (g.index) s += " " + std::to_string(*g.index);
  std::string details;
  if (!g.pci_bus_id.empty()) details += g.pci_bus_id;
  if (!g.serial.empty())
    details += (details.empty() ? "" : ", ") + std::string("serial ") + g.serial;
  if (!details.empty()) s += " (" + details + ")";
  return s;
}

// "%s" (a C format in the .po) with one string argument.
std::string Format1(std::string_view fmt, const std::string& a) {
  std::string out(fmt);
  if (size_t at = out.find("%s"); at != std::string::npos) out.replace(at, 2, a);
  return out;
}

void RenderFindingTo(const Finding& f, const Palette& p, std::string& out) {
  out += "  " + p.Sev(f.severity, SevLabel(f.severity)) + "  " + p.Bold(f.id) + "  ";
  if (f.gpu) out += GpuLabel(*f.gpu) + ": ";
  out += f.summary + "\n";
  if (!f.evidence.empty()) {
    std::string line = "        " + std::string(Tr("evidence:"));
    for (const auto& e : f.evidence) line += " " + e.name + "=" + EvidenceValue(e);
    out += p.Dim(line) + "\n";
  }
  if (f.action != Action::kNone) {
    out += "        " + std::string(Tr("action:")) + " " + std::string(ActionName(f.action)) +
           " (" + std::string(Tr(ActionPhrase(f.action))) + ")\n";
  }
  for (const auto& step : f.next_steps) out += "        -> " + std::string(Tr(step)) + "\n";
}

}  // namespace

const std::vector<std::string_view>& TextReportLabels() {
  static const std::vector<std::string_view> labels = {
      "on %s at %s",
      "NETWORK",
      "HARDWARE",
      "SOFTWARE",
      "RESOURCES",
      "evidence:",
      "action:",
      "not checked (no probe for this layer ran)",
      "ok",
      "verdict:",
      "%d critical, %d warning, %d info; %d probes in %lld ms",
  };
  return labels;
}

std::string RenderFindingText(const Finding& f, bool color) {
  std::string out;
  RenderFindingTo(f, Palette{color}, out);
  return out;
}

std::string RenderText(const Report& report, bool color) {
  Palette p{color};
  const Snapshot& snap = report.snapshot;
  std::string out = p.Bold("gpudoctor check") + " " +
                    Format1(Format1(Tr("on %s at %s"), snap.hostname), FormatUtc(snap.time)) + "\n";
  for (Layer layer : {Layer::kNetwork, Layer::kHardware, Layer::kSoftware, Layer::kResources}) {
    std::string upper = LayerName(layer);
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out += "\n" + p.Bold(std::string(Tr(upper))) + "\n";
    bool any = false;
    for (const auto& f : report.findings) {
      if (f.layer != layer) continue;
      RenderFindingTo(f, p, out);
      any = true;
    }
    int probes = 0;
    for (const auto& pr : snap.probes) probes += pr.layer == layer ? 1 : 0;
    if (!any) {
      out += probes == 0
                 ? p.Dim("  " + std::string(Tr("not checked (no probe for this layer ran)"))) + "\n"
                 : "  " + p.Ok(std::string(Tr("ok"))) + "\n";
    }
    for (const auto& pr : snap.probes) {
      if (pr.layer != layer || pr.state == ProbeState::kOk) continue;
      out += p.Dim("  probe " + pr.name + " " + ProbeStateName(pr.state) +
                   (pr.reason.empty() ? "" : ": " + pr.reason)) +
             "\n";
    }
    if (layer == Layer::kNetwork) {
      const std::string lines = ReachabilityLines(snap.network) + NicLines(snap.network);
      for (auto row : SplitLines(lines)) {
        if (!row.empty()) out += p.Dim("  " + std::string(row)) + "\n";
      }
    }
    if (layer == Layer::kHardware) {
      const std::string table = GpuTable(snap.gpu, report.findings);
      for (auto row : SplitLines(table)) {
        if (!row.empty()) out += p.Dim("  " + std::string(row)) + "\n";
      }
    }
  }

  std::map<Severity, int> counts;
  for (const auto& f : report.findings) counts[f.severity]++;
  std::string verdict = Verdict(report.findings);
  std::string line = std::string(Tr("verdict:")) + " ";
  std::string word = verdict == "ok" ? "OK" : verdict == "warn" ? "WARN" : "CRIT";
  if (verdict == "ok")
    line += p.Ok(word);
  else
    line += p.Sev(verdict == "warn" ? Severity::kWarn : Severity::kCrit, word);
  char counts_text[256];
  std::snprintf(counts_text, sizeof counts_text,
                std::string(Tr("%d critical, %d warning, %d info; %d probes in %lld ms")).c_str(),
                counts[Severity::kCrit], counts[Severity::kWarn], counts[Severity::kInfo],
                static_cast<int>(snap.probes.size()), static_cast<long long>(report.duration_ms));
  line += std::string(" - ") + counts_text;
  out += "\n" + line + "\n";
  if (Action worst = NodeAction(report.findings); worst != Action::kNone) {
    out += std::string(Tr("action:")) + " " + p.Bold(ActionName(worst)) + " - " +
           std::string(Tr(ActionPhrase(worst))) + "\n";
  }
  return out;
}

}  // namespace gpudoctor
