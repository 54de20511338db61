#include "kmsg/month_names.h"

namespace gpudoctor {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// journalctl prints the month with strftime("%b") in the reader's LC_TIME, so a saved journal
// can carry any locale's abbreviated month. These are glibc's abmon strings (localedata of glibc
// 2.36, plus the older spellings fr "avr." and es "sept" of earlier releases) of the locales seen
// in bug reports (fr, de, es, ru; nb/nn "jan.", found in a public AER report) and of the other
// European locales whose abbreviations differ from English (da, sv, nl, it, pt, pl, tr, cs, fi,
// uk, hu); no name stands for two months. CJK locales print "N月" (zh, ja; ja with a leading
// space for 1-9) or "N월" (ko, also with the space).
struct MonthName {
  std::string_view name;
  int month;
};
constexpr MonthName kLocaleMonths[] = {
    // fr_FR
    {"janv.", 1},
    {"f\u00e9vr.", 2},
    {"mars", 3},
    {"avr.", 4},
    {"avril", 4},
    {"mai", 5},
    {"juin", 6},
    {"juil.", 7},
    {"ao\u00fbt", 8},
    {"sept.", 9},
    {"oct.", 10},
    {"nov.", 11},
    {"d\u00e9c.", 12},
    // de_DE (the others equal English)
    {"M\u00e4r", 3},
    {"Mai", 5},
    {"Okt", 10},
    {"Dez", 12},
    // es_ES
    {"ene", 1},
    {"feb", 2},
    {"mar", 3},
    {"abr", 4},
    {"may", 5},
    {"jun", 6},
    {"jul", 7},
    {"ago", 8},
    {"sep", 9},
    {"sept", 9},
    {"oct", 10},
    {"nov", 11},
    {"dic", 12},
    // ru_RU
    {"\u044f\u043d\u0432", 1},
    {"\u0444\u0435\u0432", 2},
    {"\u043c\u0430\u0440", 3},
    {"\u0430\u043f\u0440", 4},
    {"\u043c\u0430\u044f", 5},
    {"\u043c\u0430\u0439", 5},
    {"\u0438\u044e\u043d", 6},
    {"\u0438\u044e\u043b", 7},
    {"\u0430\u0432\u0433", 8},
    {"\u0441\u0435\u043d", 9},
    {"\u043e\u043a\u0442", 10},
    {"\u043d\u043e\u044f", 11},
    {"\u0434\u0435\u043a", 12},
    // nb_NO, nn_NO
    {"jan.", 1},
    {"feb.", 2},
    {"april", 4},
    {"juni", 6},
    {"juli", 7},
    {"aug.", 8},
    {"sep.", 9},
    {"okt.", 10},
    {"des.", 12},
    // da_DK, sv_SE
    {"jan", 1},
    {"apr", 4},
    {"maj", 5},
    {"aug", 8},
    {"okt", 10},
    {"dec", 12},
    // nl_NL
    {"mrt", 3},
    {"mei", 5},
    // it_IT
    {"gen", 1},
    {"mag", 5},
    {"giu", 6},
    {"lug", 7},
    {"set", 9},
    {"ott", 10},
    // pt_BR, pt_PT
    {"fev", 2},
    {"out", 10},
    {"dez", 12},
    // pl_PL
    {"sty", 1},
    {"lut", 2},
    {"kwi", 4},
    {"cze", 6},
    {"lip", 7},
    {"sie", 8},
    {"wrz", 9},
    {"pa\u017a", 10},
    {"lis", 11},
    {"gru", 12},
    // tr_TR
    {"Oca", 1},
    {"\u015eub", 2},
    {"Nis", 4},
    {"Haz", 6},
    {"Tem", 7},
    {"A\u011fu", 8},
    {"Eyl", 9},
    {"Eki", 10},
    {"Kas", 11},
    {"Ara", 12},
    // cs_CZ
    {"led", 1},
    {"\u00fano", 2},
    {"b\u0159e", 3},
    {"dub", 4},
    {"kv\u011b", 5},
    {"\u010den", 6},
    {"\u010dec", 7},
    {"srp", 8},
    {"z\u00e1\u0159", 9},
    {"\u0159\u00edj", 10},
    {"pro", 12},
    // fi_FI
    {"tammi", 1},
    {"helmi", 2},
    {"maalis", 3},
    {"huhti", 4},
    {"touko", 5},
    {"kes\u00e4", 6},
    {"hein\u00e4", 7},
    {"elo", 8},
    {"syys", 9},
    {"loka", 10},
    {"marras", 11},
    {"joulu", 12},
    // uk_UA
    {"\u0441\u0456\u0447", 1},
    {"\u043b\u044e\u0442", 2},
    {"\u0431\u0435\u0440", 3},
    {"\u043a\u0432\u0456", 4},
    {"\u0442\u0440\u0430", 5},
    {"\u0447\u0435\u0440", 6},
    {"\u043b\u0438\u043f", 7},
    {"\u0441\u0435\u0440", 8},
    {"\u0432\u0435\u0440", 9},
    {"\u0436\u043e\u0432", 10},
    {"\u043b\u0438\u0441", 11},
    {"\u0433\u0440\u0443", 12},
    // hu_HU
    {"febr", 2},
    {"m\u00e1rc", 3},
    {"\u00e1pr", 4},
    {"m\u00e1j", 5},
    {"j\u00fan", 6},
    {"j\u00fal", 7},
    {"szept", 9},
};

}  // namespace

int EnglishMonthFromName(std::string_view m) {
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int k = 0; k < 12; ++k) {
    if (m == kMonths[k]) return k + 1;
  }
  return 0;
}

int SyslogMonthAt(std::string_view line, size_t& len) {
  size_t i = 0;
  if (line.size() > 1 && line[0] == ' ' && IsDigit(line[1])) i = 1;  // ja_JP " 3月", ko " 3월"
  if (i < line.size() && IsDigit(line[i])) {
    size_t d = i;
    int m = 0;
    while (d < line.size() && IsDigit(line[d]) && d - i < 2) m = m * 10 + (line[d++] - '0');
    constexpr std::string_view kYue = "\u6708";  // 月 (zh, ja)
    constexpr std::string_view kWol = "\uc6d4";  // 월 (ko)
    static_assert(kYue.size() == kWol.size());
    if (m < 1 || m > 12) return 0;
    std::string_view unit = line.substr(d, kYue.size());
    if (unit != kYue && unit != kWol) return 0;
    len = d + kYue.size();
    return len < line.size() && line[len] == ' ' ? m : 0;
  }
  if (line.size() > 3 && line[3] == ' ') {
    if (int m = EnglishMonthFromName(line.substr(0, 3))) {
      len = 3;
      return m;
    }
  }
  for (const MonthName& n : kLocaleMonths) {
    if (line.size() > n.name.size() && line[n.name.size()] == ' ' &&
        line.substr(0, n.name.size()) == n.name) {
      len = n.name.size();
      return n.month;
    }
  }
  return 0;
}

}  // namespace gpudoctor
