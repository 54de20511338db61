#include "job/step_line.h"

#include <charconv>
#include <cmath>

#include "core/civil_time.h"

namespace gpudoctor {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// A non-negative decimal number starting at `pos` (digits, optional fraction, optional exponent).
std::optional<double> NumberAt(std::string_view s, size_t pos, size_t* end = nullptr) {
  if (pos >= s.size() || !(IsDigit(s[pos]) || s[pos] == '.')) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data() + pos, s.data() + s.size(), v);
  if (ec != std::errc() || !std::isfinite(v) || v < 0) return std::nullopt;
  if (end) *end = static_cast<size_t>(p - s.data());
  return v;
}

std::optional<int64_t> IntAt(std::string_view s, size_t pos, size_t* end = nullptr) {
  if (pos >= s.size() || !IsDigit(s[pos])) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data() + pos, s.data() + s.size(), v);
  if (ec != std::errc() || v < 0) return std::nullopt;
  if (end) *end = static_cast<size_t>(p - s.data());
  return v;
}

size_t SkipBlanks(std::string_view s, size_t pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  return pos;
}

std::optional<double> PositiveSeconds(double v) {
  if (!(v > 0) || !std::isfinite(v) || v > 1e7) return std::nullopt;
  return v;
}

// tqdm's rate: the last "X.XXit/s" or "X.XXs/it" of the line, and the last "N/M" before it
// (Lightning's "Epoch 1/9" comes first; the bar's counter is the last pair before the rate).
std::optional<StepLine> ParseRate(std::string_view line, bool need_epoch) {
  if (need_epoch && line.find("Epoch") == std::string_view::npos) return std::nullopt;
  size_t best = std::string_view::npos;
  bool per_second = false;
  for (std::string_view unit : {std::string_view("it/s"), std::string_view("s/it")}) {
    size_t at = line.rfind(unit);
    if (at == std::string_view::npos || at == 0) continue;
    if (best == std::string_view::npos || at > best) {
      best = at;
      per_second = unit == "it/s";
    }
  }
  if (best == std::string_view::npos) return std::nullopt;
  size_t start = best;
  while (start > 0 && (IsDigit(line[start - 1]) || line[start - 1] == '.')) --start;
  if (start == best) return std::nullopt;  // "?it/s": no rate yet
  std::optional<double> v = NumberAt(line.substr(0, best), start);
  if (!v || *v <= 0) return std::nullopt;
  StepLine out;
  out.seconds_per_step = PositiveSeconds(per_second ? 1.0 / *v : *v);
  if (!out.seconds_per_step) return std::nullopt;
  // The counter: last "N/M" before the rate.
  for (size_t slash = line.rfind('/', start); slash != std::string_view::npos && slash > 0;
       slash = line.rfind('/', slash - 1)) {
    if (!IsDigit(line[slash - 1]) || slash + 1 >= line.size() || !IsDigit(line[slash + 1])) {
      if (slash == 0) break;
      continue;
    }
    size_t n = slash;
    while (n > 0 && IsDigit(line[n - 1])) --n;
    out.step = IntAt(line, n);
    break;
  }
  out.unix_ms = ParseLeadingTimestampMs(line);
  return out;
}

// Megatron-LM: "iteration      100/  500000 | ... | elapsed time per iteration (ms): 1234.5 |".
std::optional<StepLine> ParseMegatron(std::string_view line) {
  constexpr std::string_view kElapsed = "elapsed time per iteration (ms):";
  size_t e = line.find(kElapsed);
  if (e == std::string_view::npos) return std::nullopt;
  std::optional<double> ms = NumberAt(line, SkipBlanks(line, e + kElapsed.size()));
  if (!ms) return std::nullopt;
  StepLine out;
  out.seconds_per_step = PositiveSeconds(*ms / 1000.0);
  if (!out.seconds_per_step) return std::nullopt;
  size_t it = line.find("iteration");
  if (it != std::string_view::npos && it < e) out.step = IntAt(line, SkipBlanks(line, it + 9));
  out.unix_ms = ParseLeadingTimestampMs(line);
  return out;
}

// A "step" word followed by [ :=]* and a number; `word` is "step" or "global_step".
std::optional<int64_t> StepNumber(std::string_view line, std::string_view word, bool any_case) {
  for (size_t from = 0; from < line.size();) {
    size_t at = std::string_view::npos;
    if (any_case) {
      for (size_t i = from; i + word.size() <= line.size(); ++i) {
        bool eq = true;
        for (size_t k = 0; k < word.size() && eq; ++k) {
          char c = line[i + k];
          if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
          eq = c == word[k];
        }
        if (eq) {
          at = i;
          break;
        }
      }
    } else {
      at = line.find(word, from);
    }
    if (at == std::string_view::npos) return std::nullopt;
    from = at + word.size();
    if (at > 0 && IsAlnum(line[at - 1])) continue;
    size_t p = at + word.size();
    if (p < line.size() && IsAlnum(line[p])) continue;  // "steps", "stepwise"
    while (p < line.size() && (line[p] == ' ' || line[p] == '=' || line[p] == ':')) ++p;
    if (std::optional<int64_t> n = IntAt(line, p)) return n;
  }
  return std::nullopt;
}

std::optional<StepLine> ParsePlainStep(std::string_view line, bool deepspeed) {
  if (deepspeed && line.find("time (ms)") != std::string_view::npos) return std::nullopt;
  std::optional<int64_t> ts = ParseLeadingTimestampMs(line);
  if (!ts) return std::nullopt;
  std::optional<int64_t> step;
  if (deepspeed) step = StepNumber(line, "global_step", false);
  if (!step) step = StepNumber(line, "step", !deepspeed);
  if (!step) return std::nullopt;
  StepLine out;
  out.step = step;
  out.unix_ms = ts;
  return out;
}

std::optional<StepLine> ParseRegex(std::string_view line, const StepPattern& p) {
  if (!p.regex) return std::nullopt;
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(line.begin(), line.end(), m, *p.regex) || m.size() < 2 || !m[1].matched) {
    return std::nullopt;
  }
  std::string_view g(&*m[1].first, static_cast<size_t>(m[1].length()));
  StepLine out;
  out.unix_ms = ParseLeadingTimestampMs(line);
  if (p.capture == StepCapture::kStep) {
    size_t end = 0;
    out.step = IntAt(g, 0, &end);
    if (!out.step || end != g.size()) return std::nullopt;
    return out;
  }
  size_t end = 0;
  std::optional<double> v = NumberAt(g, 0, &end);
  if (!v || end != g.size()) return std::nullopt;
  double s = p.capture == StepCapture::kMilliseconds  ? *v / 1000.0
             : p.capture == StepCapture::kItPerSecond ? (*v > 0 ? 1.0 / *v : 0)
                                                      : *v;
  out.seconds_per_step = PositiveSeconds(s);
  if (!out.seconds_per_step) return std::nullopt;
  return out;
}

int Digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!IsDigit(s[pos + i])) return -1;
    v = v * 10 + (s[pos + i] - '0');
  }
  return v;
}

}  // namespace

const char* StepPresetName(StepPreset p) {
  switch (p) {
    case StepPreset::kAuto:
      return "auto";
    case StepPreset::kTqdm:
      return "tqdm";
    case StepPreset::kLightning:
      return "lightning";
    case StepPreset::kMegatron:
      return "megatron";
    case StepPreset::kDeepSpeed:
      return "deepspeed";
    case StepPreset::kStep:
      return "step";
    case StepPreset::kRegex:
      return "regex";
  }
  return "?";
}

std::optional<StepPreset> ParseStepPreset(std::string_view name) {
  for (StepPreset p :
       {StepPreset::kAuto, StepPreset::kTqdm, StepPreset::kLightning, StepPreset::kMegatron,
        StepPreset::kDeepSpeed, StepPreset::kStep, StepPreset::kRegex}) {
    if (name == StepPresetName(p)) return p;
  }
  return std::nullopt;
}

const char* StepCaptureName(StepCapture c) {
  switch (c) {
    case StepCapture::kSeconds:
      return "seconds";
    case StepCapture::kMilliseconds:
      return "ms";
    case StepCapture::kItPerSecond:
      return "it_per_s";
    case StepCapture::kStep:
      return "step";
  }
  return "?";
}

std::optional<StepCapture> ParseStepCapture(std::string_view name) {
  for (StepCapture c : {StepCapture::kSeconds, StepCapture::kMilliseconds,
                        StepCapture::kItPerSecond, StepCapture::kStep}) {
    if (name == StepCaptureName(c)) return c;
  }
  return std::nullopt;
}

std::shared_ptr<const std::regex> CompileStepRegex(const std::string& text, std::string* error) {
  if (text.empty() || text.size() > 1024) {
    *error = "must be a regular expression of 1 to 1024 characters";
    return nullptr;
  }
  try {
    auto re = std::make_shared<const std::regex>(text, std::regex::ECMAScript);
    if (re->mark_count() < 1) {
      *error = "needs a capture group: ( ) around the number";
      return nullptr;
    }
    return re;
  } catch (const std::regex_error& e) {
    *error = std::string("does not compile: ") + e.what();
    return nullptr;
  }
}

std::optional<int64_t> ParseLeadingTimestampMs(std::string_view line) {
  size_t p = 0;
  while (p < line.size() && p < 4 && (line[p] == ' ' || line[p] == '[')) ++p;
  int y = Digits(line, p, 4), mo = Digits(line, p + 5, 2), d = Digits(line, p + 8, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || line[p + 4] != '-' || line[p + 7] != '-')
    return std::nullopt;
  p += 10;
  if (p >= line.size() || (line[p] != ' ' && line[p] != 'T')) return std::nullopt;
  int h = Digits(line, p + 1, 2), mi = Digits(line, p + 4, 2), s = Digits(line, p + 7, 2);
  if (h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60 || line[p + 3] != ':' ||
      line[p + 6] != ':')
    return std::nullopt;
  p += 9;
  int64_t ms = 0;
  if (p < line.size() && (line[p] == '.' || line[p] == ',')) {
    ++p;
    int scale = 100;
    while (p < line.size() && IsDigit(line[p])) {
      ms += (line[p] - '0') * scale;
      scale /= 10;
      ++p;
    }
  }
  int64_t offset_s = 0;
  if (p < line.size() && (line[p] == '+' || line[p] == '-')) {
    int oh = Digits(line, p + 1, 2), om = Digits(line, p + 4, 2);
    if (oh >= 0 && om >= 0 && p + 3 < line.size() && line[p + 3] == ':') {
      offset_s = (oh * 3600 + om * 60) * (line[p] == '+' ? 1 : -1);
    }
  }
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  int64_t unix_s = days * 86400 + h * 3600 + mi * 60 + s - offset_s;
  return unix_s * 1000 + ms;
}

std::optional<StepLine> ParseStepLine(std::string_view line, const StepPattern& pattern) {
  if (line.size() > kMaxStepLineBytes || line.empty()) return std::nullopt;
  switch (pattern.preset) {
    case StepPreset::kTqdm:
      return ParseRate(line, false);
    case StepPreset::kLightning:
      return ParseRate(line, true);
    case StepPreset::kMegatron:
      return ParseMegatron(line);
    case StepPreset::kDeepSpeed:
      return ParsePlainStep(line, true);
    case StepPreset::kStep:
      return ParsePlainStep(line, false);
    case StepPreset::kRegex:
      return ParseRegex(line, pattern);
    case StepPreset::kAuto:
      if (auto m = ParseMegatron(line)) return m;
      if (auto r = ParseRate(line, false)) return r;
      if (auto d = ParsePlainStep(line, true)) return d;
      return ParsePlainStep(line, false);
  }
  return std::nullopt;
}

}  // namespace gpudoctor
