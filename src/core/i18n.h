// The language of what gpudoctor tells people: English (the source text) or simplified Chinese.
//
// Translations are gettext catalogues: po/zh_CN.po (msgid = the English text exactly as the
// catalogue, the symptom table, the runbook and the text report write it), compiled by msgfmt at
// build time and embedded into the binary (build/generated/messages.cc, scripts/embed_mo.py).
// The .mo is looked up in-process (ParseMo), not through libc's gettext(): the shipped binary is
// one static file, and gettext() would need a .mo under /usr/share/locale and the zh_CN locale
// generated on the host, which servers and containers rarely have. The environment is read the
// gettext way all the same: LANGUAGE, then LC_ALL, LC_MESSAGES, LANG; `--lang zh|en` overrides.
// A text without a translation is printed in English.
//
// Thread-safety: SetLanguage is called once at start-up (before threads); Tr and CurrentLanguage
// are safe concurrently after that.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gpudoctor {

enum class Language { kEnglish, kChinese };

// "zh", "zh_CN.UTF-8", "zh_TW", "chinese" → Chinese; "en", "C", "POSIX", "en_US.UTF-8" →
// English; nullopt for anything else (the caller goes on to the next variable).
std::optional<Language> ParseLanguage(std::string_view value);
// LANGUAGE (its first entry of a colon list), LC_ALL, LC_MESSAGES, LANG, in that order: the
// first one set to a language we know decides; English when none does.
Language LanguageFromEnvironment();

void SetLanguage(Language lang);
Language CurrentLanguage();
inline bool Chinese() { return CurrentLanguage() == Language::kChinese; }

// The translation of `english` into the current language; `english` itself when the language
// is English or no translation exists. The returned view lives as long as the process.
std::string_view Tr(std::string_view english);
// The Chinese translation, or nullopt: for tests and `explain --pot`.
std::optional<std::string_view> ChineseOf(std::string_view english);

// A GNU .mo file (either byte order) → msgid → msgstr; entries with an empty msgid (the header)
// or a msgctxt/plural form are skipped. nullopt when the data is not a well-formed .mo.
std::optional<std::unordered_map<std::string, std::string>> ParseMo(std::string_view data);

// Gettext .pot text of the given messages (msgid only), for translators (`explain --pot`).
std::string PotEntry(std::string_view english, std::string_view comment);

}  // namespace gpudoctor
