#include "check/messages.h"

#include <set>

#include "findings/finding.h"
#include "report/report.h"
#include "rules/catalogue.h"
#include "rules/symptoms.h"

namespace gpudoctor {

const std::vector<std::string_view>& ExplainLabels() {
  static const std::vector<std::string_view> labels = {
      "next steps:", "findings that decide it:", "commands:",
      "(`gpudoctor explain ID` for any finding above)"};
  return labels;
}

std::vector<TranslatableText> TranslatableMessages() {
  std::vector<TranslatableText> out;
  std::set<std::string_view> seen;
  auto add = [&](std::string_view text, std::string where) {
    if (!text.empty() && seen.insert(text).second) out.push_back({text, std::move(where)});
  };
  for (const CatalogueEntry* e : Catalogue()) {
    add(e->title, std::string(e->id) + " title");
    for (size_t i = 0; i < e->next_steps.size(); ++i) {
      add(e->next_steps[i], std::string(e->id) + " next step " + std::to_string(i + 1));
    }
  }
  for (const Symptom& s : Symptoms()) {
    add(s.title, "symptom " + std::string(s.key) + " title");
    add(s.reasoning, "symptom " + std::string(s.key) + " reasoning");
  }
  for (std::string_view p : RunbookParagraphs()) add(p, "runbook");
  for (Action a : {Action::kNone, Action::kWatch, Action::kFixConfig, Action::kContactProvider,
                   Action::kRestartApp, Action::kResetGpu, Action::kReboot, Action::kDrainReset,
                   Action::kInspectHardware}) {
    add(ActionPhrase(a), std::string("action ") + ActionName(a));
  }
  for (std::string_view l : TextReportLabels()) add(l, "text report");
  for (std::string_view l : ExplainLabels()) add(l, "explain");
  return out;
}

}  // namespace gpudoctor
