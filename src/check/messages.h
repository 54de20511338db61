// Every text gpudoctor translates (core/i18n.h): catalogue titles and next steps, symptom titles
// and reasoning, the runbook's paragraphs, action phrases, the text report's and explain's
// labels. `gpudoctor explain --pot` prints them as a gettext template for po/zh_CN.po, and a
// test checks each has a Chinese translation. Thread-safe (built on each call).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

struct TranslatableText {
  std::string_view text;  // the English msgid
  std::string where;      // "catalogue gpu.lost title", for the translator
};

// Unique texts, in catalogue order then symptoms, runbook, labels.
std::vector<TranslatableText> TranslatableMessages();

// explain's own labels ("next steps:", "commands:", ...).
const std::vector<std::string_view>& ExplainLabels();

}  // namespace gpudoctor
