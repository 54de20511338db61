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
  int line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    auto fields = Split(line, " \t");
    if (fields.size() < 2) continue;
    for (const Slot& slot : slots) {
      if (fields[0] != slot.key) continue;
      auto v = fields.size() == 2 ? ParseUint64(fields[1]) : std::nullopt;
      if (!v) {
        return ParseError("line " + std::to_string(line_no) + ": " + std::string(slot.key) +
                          " is not a number");
      }
      *slot.value = *v;
    }
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
