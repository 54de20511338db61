// `gpudoctor explain ID`: one catalogue entry; --list: all ids; --markdown: docs/findings.md;
// --symptoms: the symptom table; --symptom TEXT: the findings and commands that decide it;
// --pot: the translatable texts as a gettext template. Text in the current language (--lang).
#include <cstdio>

#include "check/messages.h"
#include "cli/commands.h"
#include "core/i18n.h"
#include "core/strings.h"
#include "rules/catalogue.h"
#include "rules/symptoms.h"
#include "rules/xid_table.h"

namespace gpudoctor {

std::string ExplainEntryText(const CatalogueEntry& e) {
  std::string out = std::string(e.id) + " - " + std::string(Tr(e.title)) + "\n";
  out += "layer: " + std::string(LayerName(e.layer)) +
         ", severity up to: " + SeverityName(e.max_severity) + "\n";
  out += "action: " + std::string(ActionName(e.action)) + " (" + ActionPhrase(e.action) + ")" +
         (NeedsNodeOutOfService(e.action) ? "; takes the node out of service (Slurm drain, NPD)"
                                          : "; never drains a node") +
         "\n\n";
  out += std::string(e.description) + "\n";
  if (!e.thresholds.empty()) {
    out += "\nthresholds (config: [finding.\"" + std::string(e.id) + "\"]):\n";
    for (const auto& t : e.thresholds) {
      out += "  " + std::string(t.key) + " = " + FormatThreshold(t.default_value) + "  (" +
             std::string(t.help) + ")\n";
    }
  }
  if (!e.next_steps.empty()) {
    out += "\n" + std::string(Tr("next steps:")) + "\n";
    for (const auto& s : e.next_steps) out += "  - " + std::string(Tr(s)) + "\n";
  }
  return out;
}

namespace {

std::string ExplainSymptomText(const Symptom& s) {
  std::string out = std::string(Tr(s.title)) + " (" + std::string(s.key) + ")\n\n" +
                    std::string(Tr(s.reasoning)) + "\n\n" +
                    std::string(Tr("findings that decide it:")) + "\n";
  for (std::string_view id : s.finding_ids) {
    const CatalogueEntry* e = FindCatalogueEntry(id);
    out += "  " + std::string(id) + (e ? "  " + std::string(Tr(e->title)) : std::string()) + "\n";
  }
  out += "\n" + std::string(Tr("commands:")) + "\n";
  for (std::string_view c : s.commands) out += "  " + std::string(c) + "\n";
  out += "\n" + std::string(Tr("(`gpudoctor explain ID` for any finding above)")) + "\n";
  return out;
}

}  // namespace

int ExplainCommand(const CliOptions& o) {
  if (o.Has("--runbook")) {
    std::fputs(EmergencyRunbook().c_str(), stdout);
    return 0;
  }
  if (o.Has("--symptoms")) {
    for (const auto& s : Symptoms()) {
      std::printf("%-20s %s\n", std::string(s.key).c_str(), std::string(Tr(s.title)).c_str());
    }
    return 0;
  }
  if (o.Has("--pot")) {  // every translatable text, for po/zh_CN.po (rules/messages.h)
    std::string pot = "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n";
    for (const TranslatableText& m : TranslatableMessages()) pot += PotEntry(m.text, m.where);
    std::fputs(pot.c_str(), stdout);
    return 0;
  }
  if (o.Has("--symptom")) {
    std::string query;
    for (const auto& p : o.positional) query += (query.empty() ? "" : " ") + p;
    const Symptom* s = FindSymptom(query);
    if (s == nullptr) {
      return CouldNotRun("no symptom matches '" + Sanitize(query, 80) +
                         "' (see gpudoctor explain --symptoms)");
    }
    std::fputs(ExplainSymptomText(*s).c_str(), stdout);
    return 0;
  }
  if (o.Has("--markdown")) {
    std::fputs(CatalogueMarkdown().c_str(), stdout);
    return 0;
  }
  if (o.Has("--list") || o.positional.empty()) {
    for (const auto* e : Catalogue()) {
      std::printf("%-28s %-9s %s\n", std::string(e->id).c_str(), LayerName(e->layer),
                  std::string(Tr(e->title)).c_str());
    }
    return 0;
  }
  if (o.positional[0] == "xid") {  // `explain xid N`: the Xid table (src/rules/xid_table.cc)
    auto code = o.positional.size() == 2 ? ParseInt64(o.positional[1]) : std::nullopt;
    if (!code || *code < 0 || *code > 100000) return CouldNotRun("usage: gpudoctor explain xid N");
    std::fputs(ExplainXid(static_cast<int>(*code)).c_str(), stdout);
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
