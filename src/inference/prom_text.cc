#include "inference/prom_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

namespace gpudoctor {
namespace {

bool NameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9'); }
bool LabelStart(char c) { return NameStart(c) && c != ':'; }
bool LabelChar(char c) { return NameChar(c) && c != ':'; }

void SkipBlanks(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

// A Go-style float: decimal or exponent form, NaN, +Inf, -Inf (case-insensitive, as the Go
// client and Prometheus accept them).
std::optional<double> ParseValue(std::string_view t) {
  if (t.empty()) return std::nullopt;
  std::string lower;
  for (char c : t) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (lower == "+inf" || lower == "inf") return std::numeric_limits<double>::infinity();
  if (lower == "-inf") return -std::numeric_limits<double>::infinity();
  std::string_view body = t;
  if (body[0] == '+') body.remove_prefix(1);
  if (body.empty()) return std::nullopt;
  for (char c : body) {
    bool ok = (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
    if (!ok) return std::nullopt;
  }
  double v = 0;
  auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ec != std::errc() || p != body.data() + body.size()) return std::nullopt;
  return v;
}

std::string Where(size_t line) { return "metrics line " + std::to_string(line) + ": "; }

// Reads a quoted label value at s[i] == '"'; i ends after the closing quote.
Result<std::string> QuotedValue(std::string_view s, size_t& i, size_t line) {
  ++i;  // opening quote
  std::string out;
  while (i < s.size()) {
    char c = s[i++];
    if (c == '"') return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i >= s.size()) break;
    char e = s[i++];
    if (e == 'n') {
      out += '\n';
    } else if (e == '\\' || e == '"') {
      out += e;
    } else {
      return ParseError(Where(line) + "bad escape '\\" + std::string(1, e) +
                        "' in a label value (only \\\\, \\\" and \\n)");
    }
  }
  return ParseError(Where(line) + "unterminated label value");
}

// Parses `{k="v",...}` at s[i] == '{'; i ends after '}'.
Status Labels(std::string_view s, size_t& i, size_t line, PromLabelSet& out) {
  ++i;
  while (true) {
    SkipBlanks(s, i);
    if (i >= s.size()) return ParseError(Where(line) + "unterminated label block");
    if (s[i] == '}') {
      ++i;
      return Status::Ok();
    }
    size_t start = i;
    if (!LabelStart(s[i])) {
      return ParseError(Where(line) + "bad label name at column " + std::to_string(i + 1));
    }
    while (i < s.size() && LabelChar(s[i])) ++i;
    std::string key(s.substr(start, i - start));
    SkipBlanks(s, i);
    if (i >= s.size() || s[i] != '=') {
      return ParseError(Where(line) + "expected '=' after label '" + key + "'");
    }
    ++i;
    SkipBlanks(s, i);
    if (i >= s.size() || s[i] != '"') {
      return ParseError(Where(line) + "label '" + key + "' needs a quoted value");
    }
    Result<std::string> v = QuotedValue(s, i, line);
    if (!v.ok()) return v.status();
    out.emplace_back(std::move(key), std::move(*v));
    SkipBlanks(s, i);
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == '}') continue;
    return ParseError(Where(line) + "expected ',' or '}' after a label value");
  }
}

std::string Unescape(std::string_view s) {  // HELP text: \\ and \n
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '\\' || s[i + 1] == 'n')) {
      out += s[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Whether sample `name` belongs to the family `fam` of type `type`.
bool Owns(std::string_view fam, std::string_view type, std::string_view name) {
  if (name == fam) return true;
  if (name.size() <= fam.size() || name.substr(0, fam.size()) != fam) return false;
  std::string_view rest = name.substr(fam.size());
  if (type == "histogram") return rest == "_bucket" || rest == "_sum" || rest == "_count";
  if (type == "summary") return rest == "_sum" || rest == "_count";
  if (type == "counter") return rest == "_total";
  return false;
}

}  // namespace

Result<std::vector<PromTextFamily>> ParsePromText(std::string_view text,
                                                  const PromTextLimits& limits) {
  std::vector<PromTextFamily> families;
  std::map<std::string, size_t, std::less<>> by_name;  // declared (TYPE/HELP) families
  size_t samples = 0;
  size_t line_no = 0;
  size_t pos = 0;
  auto family_for = [&](const std::string& name) -> PromTextFamily& {
    auto it = by_name.find(name);
    if (it != by_name.end()) return families[it->second];
    families.push_back({});
    families.back().name = name;
    by_name.emplace(name, families.size() - 1);
    return families.back();
  };
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.size() > limits.max_line_bytes) {
      return InvalidArgument(Where(line_no) + "longer than " +
                             std::to_string(limits.max_line_bytes) + " bytes");
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t i = 0;
    SkipBlanks(line, i);
    if (i == line.size()) continue;
    if (line[i] == '#') {
      ++i;
      SkipBlanks(line, i);
      size_t kw = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      std::string_view keyword = line.substr(kw, i - kw);
      if (keyword != "HELP" && keyword != "TYPE") continue;  // a plain comment
      SkipBlanks(line, i);
      size_t ns = i;
      while (i < line.size() && NameChar(line[i])) ++i;
      std::string name(line.substr(ns, i - ns));
      if (name.empty() || !NameStart(name[0])) {
        return ParseError(Where(line_no) + "# " + std::string(keyword) + " needs a metric name");
      }
      if (i < line.size() && line[i] != ' ' && line[i] != '\t') {
        return ParseError(Where(line_no) + "bad metric name in # " + std::string(keyword));
      }
      SkipBlanks(line, i);
      std::string_view rest = line.substr(i);
      PromTextFamily& f = family_for(name);
      if (keyword == "HELP") {
        f.help = Unescape(rest);
      } else {
        while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
        if (rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" &&
            rest != "untyped") {
          return ParseError(Where(line_no) + "unknown type '" + std::string(rest.substr(0, 40)) +
                            "' for " + name);
        }
        f.type = std::string(rest);
      }
      continue;
    }
    // A sample.
    size_t ns = i;
    if (!NameStart(line[i])) {
      return ParseError(Where(line_no) + "a sample must start with a metric name");
    }
    while (i < line.size() && NameChar(line[i])) ++i;
    PromTextSample s;
    s.name = std::string(line.substr(ns, i - ns));
    SkipBlanks(line, i);
    if (i < line.size() && line[i] == '{') {
      if (Status st = Labels(line, i, line_no, s.labels); !st.ok()) return st;
    }
    SkipBlanks(line, i);
    size_t vs = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    std::string_view value = line.substr(vs, i - vs);
    auto v = ParseValue(value);
    if (!v) {
      return ParseError(Where(line_no) + "value '" + std::string(value.substr(0, 40)) + "' of " +
                        s.name + " is not a number");
    }
    s.value = *v;
    SkipBlanks(line, i);
    if (i < line.size()) {
      std::string_view ts = line.substr(i);
      while (!ts.empty() && (ts.back() == ' ' || ts.back() == '\t')) ts.remove_suffix(1);
      int64_t t = 0;
      auto [p, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
      if (ec != std::errc() || p != ts.data() + ts.size()) {
        return ParseError(Where(line_no) + "trailing '" + std::string(ts.substr(0, 40)) +
                          "' after the value of " + s.name + " is not a timestamp");
      }
      s.timestamp_ms = t;
    }
    if (++samples > limits.max_samples) {
      return InvalidArgument(Where(line_no) + "more than " + std::to_string(limits.max_samples) +
                             " samples");
    }
    // The family: the newest declared one that owns the name, else the name's own.
    PromTextFamily* owner = nullptr;
    if (!families.empty()) {
      PromTextFamily& last = families.back();
      if (Owns(last.name, last.type, s.name)) owner = &last;
    }
    if (owner == nullptr) {
      for (std::string_view suffix : {"_bucket", "_sum", "_count", "_total"}) {
        if (!EndsWith(s.name, suffix)) continue;
        auto it = by_name.find(std::string_view(s.name).substr(0, s.name.size() - suffix.size()));
        if (it != by_name.end() &&
            Owns(families[it->second].name, families[it->second].type, s.name)) {
          owner = &families[it->second];
          break;
        }
      }
    }
    if (owner == nullptr) owner = &family_for(s.name);
    owner->samples.push_back(std::move(s));
  }
  return families;
}

const PromTextFamily* FindPromFamily(const std::vector<PromTextFamily>& families,
                                     std::string_view name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const std::string* PromLabel(const PromLabelSet& labels, std::string_view key) {
  for (const auto& [k, v] : labels) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<std::vector<PromMatcher>> ParsePromSelector(std::string_view sel) {
  std::vector<PromMatcher> out;
  size_t i = 0;
  SkipBlanks(sel, i);
  bool braces = i < sel.size() && sel[i] == '{';
  if (braces) ++i;
  auto where = [&](size_t at) { return "selector column " + std::to_string(at + 1) + ": "; };
  while (true) {
    SkipBlanks(sel, i);
    if (i >= sel.size()) {
      if (braces) return InvalidArgument(where(i) + "missing '}'");
      return out;
    }
    if (sel[i] == '}') {
      if (!braces) return InvalidArgument(where(i) + "'}' without '{'");
      ++i;
      SkipBlanks(sel, i);
      if (i != sel.size()) return InvalidArgument(where(i) + "text after '}'");
      return out;
    }
    if (!LabelStart(sel[i])) return InvalidArgument(where(i) + "expected a label name");
    size_t ks = i;
    while (i < sel.size() && LabelChar(sel[i])) ++i;
    PromMatcher m;
    m.key = std::string(sel.substr(ks, i - ks));
    SkipBlanks(sel, i);
    if (sel.substr(i, 2) == "=~" || sel.substr(i, 2) == "!~") {
      return InvalidArgument(where(i) + "regex matchers (=~, !~) are not supported; use = or !=");
    }
    if (sel.substr(i, 2) == "!=") {
      m.negate = true;
      i += 2;
    } else if (i < sel.size() && sel[i] == '=') {
      ++i;
    } else {
      return InvalidArgument(where(i) + "expected = or != after '" + m.key + "'");
    }
    SkipBlanks(sel, i);
    if (i >= sel.size() || sel[i] != '"') {
      return InvalidArgument(where(i) + "the value of '" + m.key + "' must be double-quoted");
    }
    Result<std::string> v = QuotedValue(sel, i, 0);
    if (!v.ok()) return InvalidArgument(where(i) + "bad quoted value of '" + m.key + "'");
    m.value = std::move(*v);
    out.push_back(std::move(m));
    SkipBlanks(sel, i);
    if (i < sel.size() && sel[i] == ',') ++i;
  }
}

bool PromMatches(const PromLabelSet& labels, const std::vector<PromMatcher>& matchers) {
  for (const auto& m : matchers) {
    const std::string* v = PromLabel(labels, m.key);
    bool eq = (v ? *v : std::string()) == m.value;
    if (eq == m.negate) return false;
  }
  return true;
}

std::optional<PromHistogram> SumPromHistogram(const PromTextFamily& family,
                                              const std::vector<PromMatcher>& matchers) {
  if (family.type != "histogram") return std::nullopt;
  // Series key: labels without le.
  struct Series {
    std::map<double, double> buckets;
    double sum = 0, count = 0;
  };
  std::map<PromLabelSet, Series> series;
  for (const auto& s : family.samples) {
    if (!PromMatches(s.labels, matchers)) continue;
    PromLabelSet key;
    std::optional<double> le;
    for (const auto& [k, v] : s.labels) {
      if (k == "le") {
        le = ParseValue(v);
      } else {
        key.emplace_back(k, v);
      }
    }
    std::sort(key.begin(), key.end());
    Series& se = series[key];
    std::string_view rest = std::string_view(s.name).substr(family.name.size());
    if (rest == "_bucket" && le && !std::isnan(*le)) {
      se.buckets[*le] = s.value;
    } else if (rest == "_sum") {
      se.sum = s.value;
    } else if (rest == "_count") {
      se.count = s.value;
    }
  }
  if (series.empty()) return std::nullopt;
  PromHistogram h;
  std::map<double, std::pair<double, size_t>> all;  // le -> (sum of counts, series having it)
  for (const auto& [key, se] : series) {
    h.sum += se.sum;
    h.count += se.count;
    for (const auto& [le, c] : se.buckets) {
      auto& a = all[le];
      a.first += c;
      ++a.second;
    }
  }
  for (const auto& [le, a] : all) {
    if (a.second == series.size()) h.buckets.emplace_back(le, a.first);
  }
  return h;
}

std::optional<double> PromHistogramQuantile(const PromHistogram& h, double q) {
  if (h.buckets.empty() || !(q > 0 && q < 1)) return std::nullopt;
  double total = h.buckets.back().second;
  if (!(total > 0)) return std::nullopt;
  double rank = q * total;
  double prev_le = 0, prev_count = 0;
  for (size_t i = 0; i < h.buckets.size(); ++i) {
    auto [le, count] = h.buckets[i];
    if (count >= rank) {
      if (std::isinf(le)) {
        // In the +Inf bucket: the highest finite bound.
        return i > 0 ? std::optional<double>(h.buckets[i - 1].first) : std::nullopt;
      }
      double lower = (i == 0) ? (le > 0 ? 0.0 : le) : prev_le;
      double in_bucket = count - prev_count;
      if (in_bucket <= 0) return le;
      return lower + (le - lower) * (rank - prev_count) / in_bucket;
    }
    prev_le = le;
    prev_count = count;
  }
  return h.buckets.back().first;
}

}  // namespace gpudoctor
