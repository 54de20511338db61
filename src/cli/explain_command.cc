// `gpudoctor explain ID`: one catalogue entry; --list: all ids; --markdown: docs/findings.md.
#include <cstdio>

#include "cli/commands.h"
#include "rules/catalogue.h"

namespace gpudoctor {

std::string ExplainEntryText(const CatalogueEntry& e) {
  std::string out = std::string(e.id) + " - " + std::string(e.title) + "\n";
  out += "layer: " + std::string(LayerName(e.layer)) +
         ", severity up to: " + SeverityName(e.max_severity) + "\n\n";
  out += std::string(e.description) + "\n";
  if (!e.thresholds.empty()) {
    out += "\nthresholds (config: [finding.\"" + std::string(e.id) + "\"]):\n";
    for (const auto& t : e.thresholds) {
      out += "  " + std::string(t.key) + " = " + FormatThreshold(t.default_value) + "  (" +
             std::string(t.help) + ")\n";
    }
  }
  if (!e.next_steps.empty()) {
    out += "\nnext steps:\n";
    for (const auto& s : e.next_steps) out += "  - " + std::string(s) + "\n";
  }
  return out;
}

int ExplainCommand(const CliOptions& o) {
  if (o.Has("--markdown")) {
    std::fputs(CatalogueMarkdown().c_str(), stdout);
    return 0;
  }
  if (o.Has("--list") || o.positional.empty()) {
    for (const auto* e : Catalogue()) {
      std::printf("%-28s %-9s %s\n", std::string(e->id).c_str(), LayerName(e->layer),
                  std::string(e->title).c_str());
    }
    return 0;
  }
  const std::string& id = o.positional[0];
  const CatalogueEntry* e = FindCatalogueEntry(id);
  if (e == nullptr) {
    return CouldNotRun("no finding '" + id + "' in the catalogue (see gpudoctor explain --list)");
  }
  std::fputs(ExplainEntryText(*e).c_str(), stdout);
  return 0;
}

}  // namespace gpudoctor
