// The catalogue: every finding id gpudoctor can emit, with its layer, default thresholds, text and
// advice. `gpudoctor explain ID`, docs/findings.md and `gpudoctor config --default` come from it.
// The catalogue is assembled from one section per topic (catalogue_host.cc, catalogue_gpu.cc,
// ...); ids are unique across sections (a test checks). Immutable static data; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "findings/finding.h"

namespace gpudoctor {

struct ThresholdSpec {
  std::string_view key;  // config key under [finding."ID"], unit in the name: "warn_used_pct"
  double default_value;
  std::string_view help;  // one line: what crossing it means
};

// Which part of a server a finding points at, for fleet failure statistics (`fleet`): counts
// per class per 1,000 GPU-days. kFromLayer: the layer's class (network → kNetwork, software →
// kSoftware, resources → kHost, hardware → kGpu).
enum class FleetClass { kFromLayer, kGpu, kGpuMemory, kNvlinkPcie, kNetwork, kHost, kSoftware };
const char* FleetClassName(FleetClass c);  // "gpu", "gpu_memory", "nvlink_pcie", ...

// How fast `watch` opens and resolves a finding. kFromLayer: kSustained for the resources and
// network layers, kImmediate for the others.
//  - kImmediate: an error; opens at once (for_s 0), resolves after 300 s clear.
//  - kSustained: a load-, thermal- or rate-type condition; opens after 60 s, resolves after 60 s
//    clear, so a blip never pages.
enum class Pace { kFromLayer, kImmediate, kSustained };

// What `watch` and `fleet` need to know about an entry beyond its text. Every field's default
// is the topic default; an entry names only what differs (designated initialisers:
// `{.pace = Pace::kSustained, .reboot_fixable = true}`).
struct EntryTraits {
  Pace pace = Pace::kFromLayer;
  std::optional<double> for_s;            // overrides the pace: fires this long before it opens
  std::optional<double> resolve_after_s;  // overrides the pace: clear this long to resolve
  bool reboot_fixable = false;            // a reboot may clear it (then it is re-checked)
  // Raised from a kernel-log event that does not go away when the log goes quiet (an Xid, a GSP
  // timeout, a failed init, a fatal AER or MCE): see WatchDefaults::latched.
  bool latched = false;
  // A latched finding that a reload of the NVIDIA module resets: see WatchDefaults.
  bool cleared_by_driver_reload = false;
  FleetClass fleet_class = FleetClass::kFromLayer;
};

struct CatalogueEntry {
  std::string_view id;  // stable: "host.disk.full"
  Layer layer;
  Severity max_severity;         // the worst severity this id can carry
  Action action;                 // what to do by default; a rule may decide per instance
  std::string_view title;        // short: "Filesystem nearly full"
  std::string_view description;  // what it means and why it matters, a few sentences
  // Steps that start with a backtick label ("`local`: ...") apply only to that case: a rule
  // keeps them with KeepStepsFor (make_finding.h); unlabelled steps always apply.
  std::vector<std::string_view> next_steps;
  std::vector<ThresholdSpec> thresholds;
  EntryTraits traits = {};
};

// The watch lifecycle of one entry, from its traits with the topic defaults filled in (Pace).
// Config keys [finding."ID"] for_s / resolve_after_s override the times (Thresholds::Get).
// Latched: findings raised from a kernel-log event (an Xid, a GSP timeout, a failed init, a fatal
// AER or MCE) that does not go away when the log goes quiet. While their action takes the node out
// (a reset or reboot is needed) they stay open until the node reboots or an operator acknowledges
// them, or (an Xid, a GSP timeout, a failed init) the NVIDIA module is loaded again after it: a
// quiet log is not a repaired GPU, a reloaded driver is a reset one.
struct WatchDefaults {
  double for_s = 0;
  double resolve_after_s = 300;
  bool reboot_fixable = false;
  bool latched = false;
  // A latched finding that a reload of the NVIDIA module resets (an Xid, a GSP timeout, a failed
  // init): `watch` resolves it ("cleared_by_driver_reload") once the log shows the module loaded
  // again after it was last seen (driver.reloaded). Not AER or MCE: those are the platform's.
  bool cleared_by_driver_reload = false;
};
WatchDefaults WatchDefaultsFor(const CatalogueEntry& e);
// The entry's fleet class with the layer default filled in (never kFromLayer).
FleetClass FleetClassOf(const CatalogueEntry& e);
// The class of a layer: network → kNetwork, hardware → kGpu, software → kSoftware, resources →
// kHost. Also the class of an id this build's catalogue does not know (a newer node's report).
FleetClass LayerFleetClass(Layer layer);
inline constexpr std::string_view kForSKey = "for_s";
inline constexpr std::string_view kResolveAfterSKey = "resolve_after_s";

// Shared next steps of hardware findings: the physical checklist once the node
// is drained and powered off, and the swap test that tells a faulty card from a faulty slot.
inline constexpr std::string_view kPhysicalChecklistStep =
    "Physical checklist (node drained, powered off, anti-static): power connectors fully seated, "
    "not loose, melted or oxidised; gold fingers cleaned (isopropyl alcohol, lint-free); card and "
    "riser reseated; heatsink seated evenly; no burn marks on memory chips or VRMs; dust removed "
    "and every fan spinning.";
inline constexpr std::string_view kSwapTestStep =
    "Swap test: move the card into another server (or a known-good card into this slot); the "
    "fault follows the card → RMA it by serial; it stays with the slot → riser, board or PSU.";

// One section per topic; each lives in its own catalogue_<topic>.cc.
const std::vector<CatalogueEntry>& HostCatalogue();
const std::vector<CatalogueEntry>& GpuCatalogue();
const std::vector<CatalogueEntry>& NetCatalogue();        // network layer
const std::vector<CatalogueEntry>& KernelCatalogue();     // catalogue_kernel.cc (kernel log)
const std::vector<CatalogueEntry>& UpkeepCatalogue();     // catalogue_upkeep.cc
const std::vector<CatalogueEntry>& JobCatalogue();        // catalogue_job.cc ([[job]] speed)
const std::vector<CatalogueEntry>& InferenceCatalogue();  // catalogue_inference.cc

// All entries, in section order.
const std::vector<const CatalogueEntry*>& Catalogue();
const CatalogueEntry* FindCatalogueEntry(std::string_view id);
// The action a finding read back from outside (a report, a history row, a scrape) carries: its
// own `action_name` when it parses, else the catalogue default for `id` (reports and databases
// written before findings carried an action), else kWatch for an id this version does not know.
Action ActionOrDefault(std::string_view action_name, std::string_view id);

// `gpudoctor explain --runbook`: the emergency plan (drain → evidence → reset/reboot → swap → RMA)
// with every critical finding's first action, and placeholders for contacts.
// Its paragraphs are the translation units (core/i18n.h); the text is in the current language.
std::string EmergencyRunbook();
const std::vector<std::string_view>& RunbookParagraphs();

// Markdown for docs/findings.md (a test keeps the committed file equal to this).
std::string CatalogueMarkdown();

// A threshold value as written in docs and config: integers without a decimal point.
std::string FormatThreshold(double v);

}  // namespace gpudoctor
