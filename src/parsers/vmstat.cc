#include "parsers/vmstat.h"

#include <string>

#include "core/strings.h"

namespace gpudoctor {

Result<VmstatCounters> ParseVmstat(std::string_view text) {
  VmstatCounters c;
  struct Slot {
    std::string_view key;
    std::optional<uint64_t>* value;
  };
  const Slot slots[] = {{"pswpin", &c.pswpin}, {"pswpout", &c.pswpout}, {"oom_kill", &c.oom_kill}};
  // /proc/vmstat has ~190 lines a tick under `watch` and three are used: a line is looked at
  // further only when its first field is one of them (no per-line split or allocation).
  int line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    size_t key_begin = 0;
    while (key_begin < line.size() && (line[key_begin] == ' ' || line[key_begin] == '\t')) {
      ++key_begin;
    }
    // Every used name starts with 'p' or 'o': most lines end here.
    if (key_begin == line.size() || (line[key_begin] != 'p' && line[key_begin] != 'o')) continue;
    size_t key_end = key_begin;
    while (key_end < line.size() && line[key_end] != ' ' && line[key_end] != '\t') ++key_end;
    std::string_view key = line.substr(key_begin, key_end - key_begin);
    const Slot* slot = nullptr;
    for (const Slot& s : slots) {
      if (key == s.key) slot = &s;
    }
    if (slot == nullptr) continue;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto fields = Split(line, " \t");
    if (fields.size() < 2) continue;
    auto v = fields.size() == 2 ? ParseUint64(fields[1]) : std::nullopt;
    if (!v) {
      return ParseError("line " + std::to_string(line_no) + ": " + std::string(slot->key) +
                        " is not a number");
    }
    *slot->value = *v;
  }
  if (!c.pswpin && !c.pswpout && !c.oom_kill) {
    return ParseError("none of pswpin, pswpout, oom_kill present");
  }
  return c;
}

std::optional<double> CounterRate(std::optional<uint64_t> before, std::optional<uint64_t> after,
                                  double window_s) {
  if (!before || !after || !(window_s > 0) || *after < *before) return std::nullopt;
  return static_cast<double>(*after - *before) / window_s;
}

}  // namespace gpudoctor
