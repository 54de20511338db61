#include "rules/catalogue.h"

#include <cmath>
#include <string>
#include <unordered_map>

#include "core/i18n.h"
#include "core/strings.h"

namespace gpudoctor {

std::string FormatThreshold(double v) {
  if (std::fabs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<int64_t>(v));
  return FormatDouble(v, 6);
}

const std::vector<const CatalogueEntry*>& Catalogue() {
  static const std::vector<const CatalogueEntry*> all = [] {
    std::vector<const CatalogueEntry*> v;
    // One line per section, in troubleshooting order where it matters.
    for (const auto* section :
         {&NetCatalogue(), &GpuCatalogue(), &KernelCatalogue(), &HostCatalogue(),
          &UpkeepCatalogue(), &JobCatalogue(), &InferenceCatalogue()}) {
      for (const auto& e : *section) v.push_back(&e);
    }
    return v;
  }();
  return all;
}

WatchDefaults WatchDefaultsFor(const CatalogueEntry& e) {
  const EntryTraits& t = e.traits;
  Pace pace = t.pace;
  if (pace == Pace::kFromLayer) {
    bool load_like = e.layer == Layer::kResources || e.layer == Layer::kNetwork;
    pace = load_like ? Pace::kSustained : Pace::kImmediate;
  }
  WatchDefaults d;
  if (pace == Pace::kSustained) {
    d.for_s = 60;
    d.resolve_after_s = 60;
  }
  if (t.for_s) d.for_s = *t.for_s;
  if (t.resolve_after_s) d.resolve_after_s = *t.resolve_after_s;
  d.reboot_fixable = t.reboot_fixable;
  d.latched = t.latched;
  d.cleared_by_driver_reload = t.cleared_by_driver_reload;
  return d;
}

const char* FleetClassName(FleetClass c) {
  switch (c) {
    case FleetClass::kGpu:
      return "gpu";
    case FleetClass::kGpuMemory:
      return "gpu_memory";
    case FleetClass::kNvlinkPcie:
      return "nvlink_pcie";
    case FleetClass::kNetwork:
      return "network";
    case FleetClass::kHost:
      return "host";
    case FleetClass::kSoftware:
      return "software";
    case FleetClass::kFromLayer:
      break;
  }
  return "host";
}

FleetClass FleetClassOf(const CatalogueEntry& e) {
  if (e.traits.fleet_class != FleetClass::kFromLayer) return e.traits.fleet_class;
  return LayerFleetClass(e.layer);
}

FleetClass LayerFleetClass(Layer layer) {
  switch (layer) {
    case Layer::kNetwork:
      return FleetClass::kNetwork;
    case Layer::kHardware:
      return FleetClass::kGpu;
    case Layer::kSoftware:
      return FleetClass::kSoftware;
    case Layer::kResources:
      break;
  }
  return FleetClass::kHost;
}

const CatalogueEntry* FindCatalogueEntry(std::string_view id) {
  // Rules look entries up by id many times a tick (every threshold): a hash, not a scan of the
  // catalogue's ~150 entries. Built once, on first use (thread-safe static initialisation).
  static const std::unordered_map<std::string_view, const CatalogueEntry*> by_id = [] {
    std::unordered_map<std::string_view, const CatalogueEntry*> m;
    for (const auto* e : Catalogue()) m.emplace(e->id, e);  // the first of a duplicate id wins
    return m;
  }();
  auto it = by_id.find(id);
  return it == by_id.end() ? nullptr : it->second;
}

Action ActionOrDefault(std::string_view action_name, std::string_view id) {
  if (auto a = ParseAction(action_name)) return *a;
  const CatalogueEntry* e = FindCatalogueEntry(id);
  return e != nullptr ? e->action : Action::kWatch;
}

std::string CatalogueMarkdown() {
  std::string md =
      "# gpudoctor findings\n\n"
      "Generated from the catalogue (`src/rules/catalogue_*.cc`); do not edit by hand.\n"
      "Regenerate with `build/gpudoctor explain --markdown > docs/findings.md`.\n"
      "Thresholds are set per finding in the config file under `[finding.\"ID\"]`.\n"
      "The action is what to do at the finding's worst severity; below it an action that takes\n"
      "the node out becomes `watch`. Slurm drains and NPD conditions follow the action only.\n";
  for (Layer layer : {Layer::kNetwork, Layer::kHardware, Layer::kSoftware, Layer::kResources}) {
    md += "\n## ";
    md += LayerName(layer);
    md += "\n";
    for (const auto* e : Catalogue()) {
      if (e->layer != layer) continue;
      // An anchor named by the id: alerts link here (runbook_url: docs/findings.md#ID).
      md += "\n<a id=\"" + std::string(e->id) + "\"></a>\n";
      md += "\n### `" + std::string(e->id) + "` — " + std::string(e->title) + "\n\n";
      md += "Severity up to **" + std::string(SeverityName(e->max_severity)) + "**. Action: **" +
            std::string(ActionName(e->action)) + "**" +
            (NeedsNodeOutOfService(e->action) ? " (takes the node out of service)" : "") + ". ";
      md += std::string(e->description) + "\n";
      if (!e->thresholds.empty()) {
        md += "\n| threshold | default | meaning |\n|---|---|---|\n";
        for (const auto& t : e->thresholds) {
          md += "| `" + std::string(t.key) + "` | " + FormatThreshold(t.default_value) + " | " +
                std::string(t.help) + " |\n";
        }
      }
      if (!e->next_steps.empty()) {
        md += "\nNext steps:\n";
        for (const auto& s : e->next_steps) md += "- " + std::string(s) + "\n";
      }
    }
  }
  return md;
}

}  // namespace gpudoctor

namespace gpudoctor {

const std::vector<std::string_view>& RunbookParagraphs() {
  static const std::vector<std::string_view> paragraphs = {
      "# gpudoctor emergency runbook (generated from the catalogue's critical findings)",
      "Contacts (fill in): on-call <NAME, PHONE>; datacenter hands <NAME, PHONE>; vendor RMA "
      "<PORTAL / PHONE, contract number>; security <NAME, PHONE>.",
      "1. Drain: stop new work on the node (`scontrol update nodename=NODE state=drain "
      "reason=...`, `kubectl cordon NODE`); let running jobs checkpoint if they still can.",
      "2. Evidence: `gpudoctor check --json > NODE-$(date +%F).json`, `dmesg -T > dmesg.txt`, "
      "`nvidia-bug-report.sh`, the serials and slots of the GPUs involved (in the findings); for "
      "suspicious processes keep the binary and connections before anything is killed.",
      "3. Reset / reboot: `nvidia-smi -r -i N` for one idle GPU; reboot when a reset fails, "
      "nvidia-smi hangs or the GPU fell off the bus; cold power-cycle when it comes back broken.",
      "4. Swap: run the physical checklist; move the card to another server or slot; the fault "
      "follows the card or stays with the slot.",
      "5. RMA: open it with the serial, the evidence above and the field diagnostic "
      "(`dcgmi diag -r 3`); keep the node drained until the part is replaced.",
      "6. Compromised host (proc.suspicious, net.outbound.udp, `gpudoctor scan` findings): keep "
      "evidence first (`gpudoctor bundle`), confirm a fresh backup (`host.backup.stale` clear) "
      "or copy the data off, then save the data and reinstall from a known-good image and "
      "rotate credentials; a cleaned system cannot be trusted.",
      "Critical findings and their first action:",
  };
  return paragraphs;
}

std::string EmergencyRunbook() {
  const auto& p = RunbookParagraphs();
  std::string out = std::string(Tr(p[0])) + "\n\n" + std::string(Tr(p[1])) + "\n\n";
  for (size_t i = 2; i + 1 < p.size(); ++i) out += std::string(Tr(p[i])) + "\n";
  out += "\n" + std::string(Tr(p.back())) + "\n";
  for (const CatalogueEntry* e : Catalogue()) {
    if (e->max_severity != Severity::kCrit) continue;
    out += "- " + std::string(e->id) + " (" + std::string(Tr(e->title)) + "): " +
           (e->next_steps.empty() ? std::string("gpudoctor explain ") + std::string(e->id)
                                  : std::string(Tr(e->next_steps.front()))) +
           "\n";
  }
  return out;
}

}  // namespace gpudoctor
