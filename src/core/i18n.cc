// Language selection and the embedded gettext catalogue (see i18n.h).
#include "core/i18n.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace gpudoctor {

// build/generated/messages.cc (scripts/embed_mo.py): the msgfmt output of po/zh_CN.po.
extern const unsigned char kZhCnMo[];
extern const size_t kZhCnMoSize;

namespace {

std::atomic<Language> g_language{Language::kEnglish};

uint32_t Read32(std::string_view d, size_t off, bool swap) {
  uint32_t v;
  std::memcpy(&v, d.data() + off, 4);
  if (swap) v = __builtin_bswap32(v);
  return v;
}

const std::unordered_map<std::string, std::string>& ZhCatalogue() {
  static const auto* table = [] {
    auto parsed = ParseMo(std::string_view(reinterpret_cast<const char*>(kZhCnMo), kZhCnMoSize));
    using Table = std::unordered_map<std::string, std::string>;
    auto* t = new Table(parsed ? std::move(*parsed) : Table{});
    // A step labelled with its case ("`local`: ...") is shown without its label once a rule kept
    // it (KeepStepsFor): its translation is found under the text after the label as well.
    Table unlabelled;
    for (const auto& [k, v] : *t) {
      size_t close = k.starts_with("`") ? k.find('`', 1) : std::string::npos;
      if (close == std::string::npos || k.compare(close, 3, "`: ") != 0) continue;
      std::string label = k.substr(0, close + 1);
      std::string_view zh = v;
      if (!zh.starts_with(label)) continue;
      zh.remove_prefix(label.size());
      for (std::string_view colon : {"\uff1a", ": ", ":"}) {  // full-width colon first
        if (zh.starts_with(colon)) {
          zh.remove_prefix(colon.size());
          break;
        }
      }
      unlabelled.emplace(k.substr(close + 3), std::string(zh));
    }
    for (auto& [k, v] : unlabelled) t->emplace(k, std::move(v));
    return t;
  }();
  return *table;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

}  // namespace

std::optional<Language> ParseLanguage(std::string_view value) {
  std::string v = Lower(value);
  if (v.empty()) return std::nullopt;
  if (v.rfind("zh", 0) == 0 || v == "chinese" || v == "cn") return Language::kChinese;
  if (v.rfind("en", 0) == 0 || v == "c" || v.rfind("c.", 0) == 0 || v == "posix") {
    return Language::kEnglish;
  }
  return std::nullopt;
}

Language LanguageFromEnvironment() {
  for (const char* var : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    std::string_view s(v);
    if (std::string_view(var) == "LANGUAGE") s = s.substr(0, s.find(':'));
    if (auto lang = ParseLanguage(s)) return *lang;
    // gettext: LANGUAGE is ignored when the locale is "C"; a set LC_ALL/LC_MESSAGES/LANG with a
    // language we do not translate decides for English.
    if (std::string_view(var) != "LANGUAGE") return Language::kEnglish;
  }
  return Language::kEnglish;
}

void SetLanguage(Language lang) { g_language.store(lang, std::memory_order_relaxed); }
Language CurrentLanguage() { return g_language.load(std::memory_order_relaxed); }

std::optional<std::string_view> ChineseOf(std::string_view english) {
  const auto& table = ZhCatalogue();
  auto it = table.find(std::string(english));
  if (it == table.end() || it->second.empty()) return std::nullopt;
  return std::string_view(it->second);
}

std::string_view Tr(std::string_view english) {
  if (CurrentLanguage() != Language::kChinese) return english;
  return ChineseOf(english).value_or(english);
}

std::optional<std::unordered_map<std::string, std::string>> ParseMo(std::string_view d) {
  if (d.size() < 28) return std::nullopt;
  uint32_t magic;
  std::memcpy(&magic, d.data(), 4);
  bool swap;
  if (magic == 0x950412deu) {
    swap = false;
  } else if (magic == 0xde120495u) {
    swap = true;
  } else {
    return std::nullopt;
  }
  uint32_t n = Read32(d, 8, swap), orig = Read32(d, 12, swap), trans = Read32(d, 16, swap);
  if (n > d.size() / 16 || orig > d.size() || trans > d.size() || d.size() - orig < n * 8ull ||
      d.size() - trans < n * 8ull) {
    return std::nullopt;
  }
  auto str = [&](uint32_t table, uint32_t i) -> std::optional<std::string_view> {
    uint32_t len = Read32(d, table + i * 8, swap), off = Read32(d, table + i * 8 + 4, swap);
    if (off > d.size() || len >= d.size() - off) return std::nullopt;  // room for the NUL
    return d.substr(off, len);
  };
  std::unordered_map<std::string, std::string> out;
  for (uint32_t i = 0; i < n; ++i) {
    auto k = str(orig, i), v = str(trans, i);
    if (!k || !v) return std::nullopt;
    // msgctxt ("ctx\x04id") and plural forms ("id\0plural") are not used by gpudoctor.
    if (k->empty() || k->find('\x04') != std::string_view::npos ||
        k->find('\0') != std::string_view::npos) {
      continue;
    }
    out.emplace(std::string(*k), std::string(*v));
  }
  return out;
}

std::string PotEntry(std::string_view english, std::string_view comment) {
  std::string out;
  if (!comment.empty()) out += "#. " + std::string(comment) + "\n";
  out += "msgid \"";
  for (char c : english) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  out += "\"\nmsgstr \"\"\n\n";
  return out;
}

}  // namespace gpudoctor
