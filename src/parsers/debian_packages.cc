// Debian control-file parsers and version ordering (see debian_packages.h).
#include "parsers/debian_packages.h"

#include <cctype>

#include "core/civil_time.h"
#include "core/strings.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxField = 200;

// dpkg's character order inside a non-digit run: '~' first (even before the end), then the
// end, then letters, then everything else.
int Order(std::string_view s, size_t i) {
  if (i >= s.size()) return 0;
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (std::isdigit(c)) return 0;
  if (std::isalpha(c)) return c;
  if (c == '~') return -1;
  return c + 256;
}

bool DigitAt(std::string_view s, size_t i) {
  return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
}

int CompareParts(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    while ((i < a.size() && !DigitAt(a, i)) || (j < b.size() && !DigitAt(b, j))) {
      int ac = Order(a, i), bc = Order(b, j);
      if (ac != bc) return ac < bc ? -1 : 1;
      ++i;
      ++j;
    }
    while (i < a.size() && a[i] == '0') ++i;
    while (j < b.size() && b[j] == '0') ++j;
    int first_diff = 0;
    while (DigitAt(a, i) && DigitAt(b, j)) {
      if (first_diff == 0) first_diff = a[i] - b[j];
      ++i;
      ++j;
    }
    if (DigitAt(a, i)) return 1;
    if (DigitAt(b, j)) return -1;
    if (first_diff != 0) return first_diff < 0 ? -1 : 1;
  }
  return 0;
}

struct SplitVersion {
  int64_t epoch = 0;
  std::string_view upstream, revision;
};

SplitVersion Split3(std::string_view v) {
  SplitVersion out;
  v = Trim(v);
  if (size_t colon = v.find(':'); colon != std::string_view::npos) {
    out.epoch = ParseBoundedDecimal(v.substr(0, colon), 9).value_or(0);
    v = v.substr(colon + 1);
  }
  if (size_t dash = v.rfind('-'); dash != std::string_view::npos) {
    out.revision = v.substr(dash + 1);
    v = v.substr(0, dash);
  }
  out.upstream = v;
  return out;
}

// Calls fn(field, value) for each "Field: value" line of one stanza and end(stanza) after each
// stanza; continuation lines (leading space or tab) are ignored.
template <typename FieldFn, typename EndFn>
void ForEachStanza(std::string_view text, FieldFn fn, EndFn end) {
  bool open = false;
  for (std::string_view line : SplitLines(text)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty()) {
      if (open) end();
      open = false;
      continue;
    }
    if (line[0] == ' ' || line[0] == '\t') continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    open = true;
    fn(line.substr(0, colon), Trim(line.substr(colon + 1)));
  }
  if (open) end();
}

std::vector<DebPackage> ParseStanzas(std::string_view text, bool installed_only) {
  std::vector<DebPackage> out;
  DebPackageStream stream(installed_only);
  for (std::string_view line : SplitLines(text)) {
    if (DebPackage* p = stream.Line(line)) out.push_back(std::move(*p));
  }
  if (DebPackage* p = stream.Finish()) out.push_back(std::move(*p));
  return out;
}

int MonthIndex(std::string_view m) {
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (m == kMonths[i]) return i + 1;
  }
  return 0;
}

}  // namespace

DebPackage* DebPackageStream::End() {
  bool keep = !cur_.name.empty() && !cur_.version.empty() && (installed_ || !installed_only_);
  if (keep) done_ = std::move(cur_);
  cur_ = DebPackage{};
  installed_ = false;
  open_ = false;
  return keep ? &done_ : nullptr;
}

DebPackage* DebPackageStream::Line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (Trim(line).empty()) return open_ ? End() : nullptr;
  if (line[0] == ' ' || line[0] == '\t') return nullptr;  // a continuation line
  size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return nullptr;
  open_ = true;
  std::string_view k = line.substr(0, colon);
  std::string_view v = Trim(line.substr(colon + 1));
  if (k == "Package") cur_.name = Sanitize(v, kMaxField);
  if (k == "Architecture") cur_.arch = Sanitize(v, 32);
  if (k == "Version") cur_.version = Sanitize(v, kMaxField);
  if (k == "Status") installed_ = v == "install ok installed";
  return nullptr;
}

DebPackage* DebPackageStream::Finish() { return open_ ? End() : nullptr; }

int CompareDebianVersions(std::string_view a, std::string_view b) {
  SplitVersion x = Split3(a), y = Split3(b);
  if (x.epoch != y.epoch) return x.epoch < y.epoch ? -1 : 1;
  if (int c = CompareParts(x.upstream, y.upstream); c != 0) return c;
  return CompareParts(x.revision, y.revision);
}

std::vector<DebPackage> ParseDpkgStatus(std::string_view text) { return ParseStanzas(text, true); }

std::vector<DebPackage> ParsePackagesList(std::string_view text) {
  return ParseStanzas(text, false);
}

ReleaseInfo ParseRelease(std::string_view text) {
  ReleaseInfo r;
  bool done = false;
  ForEachStanza(
      text,
      [&](std::string_view k, std::string_view v) {
        if (done) return;
        if (k == "Suite") r.suite = Sanitize(v, 64);
        if (k == "Codename") r.codename = Sanitize(v, 64);
        if (k == "Date") r.date_unix_s = ParseRfc2822Date(v);
      },
      [&] {
        // The first stanza with a Suite is the release; an InRelease's PGP header line
        // ("Hash: SHA512") forms its own stanza before it.
        if (!r.suite.empty() || r.date_unix_s) done = true;
      });
  return r;
}

std::optional<int64_t> ParseRfc2822Date(std::string_view s) {
  s = Trim(s);
  if (size_t comma = s.find(','); comma != std::string_view::npos) s = Trim(s.substr(comma + 1));
  std::vector<std::string_view> f = Split(s, " ");
  if (f.size() < 4) return std::nullopt;
  auto day = ParseBoundedDecimal(f[0], 2);
  int month = MonthIndex(f[1]);
  auto year = ParseBoundedDecimal(f[2], 4);
  std::vector<std::string_view> hms = Split(f[3], ":");
  // Four-digit years from 1970: an archive index is never older than the Unix epoch.
  if (!day || month == 0 || !year || f[2].size() != 4 || *year < 1970 || *day < 1 || *day > 31 ||
      hms.size() != 3) {
    return std::nullopt;
  }
  auto h = ParseBoundedDecimal(hms[0], 2), m = ParseBoundedDecimal(hms[1], 2),
       sec = ParseBoundedDecimal(hms[2], 2);
  if (!h || !m || !sec || *h > 23 || *m > 59 || *sec > 60) return std::nullopt;
  int64_t offset_s = 0;
  if (f.size() >= 5 && (f[4][0] == '+' || f[4][0] == '-') && f[4].size() == 5) {
    auto hhmm = ParseBoundedDecimal(f[4].substr(1), 4);
    if (!hhmm) return std::nullopt;
    offset_s = (*hhmm / 100 * 3600 + *hhmm % 100 * 60) * (f[4][0] == '-' ? -1 : 1);
  }
  return DaysFromCivil(*year, static_cast<unsigned>(month), static_cast<unsigned>(*day)) * 86400 +
         *h * 3600 + *m * 60 + *sec - offset_s;
}

}  // namespace gpudoctor
