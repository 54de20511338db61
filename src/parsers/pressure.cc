#include "parsers/pressure.h"

#include <string>
#include <vector>

#include "core/strings.h"

namespace gpudoctor {
namespace {

Result<PressureLine> ParsePressureLine(std::string_view kind,
                                       const std::vector<std::string_view>& fields) {
  PressureLine line;
  for (size_t i = 1; i < fields.size(); ++i) {
    size_t eq = fields[i].find('=');
    if (eq == std::string_view::npos) {
      return ParseError("pressure '" + std::string(kind) + "' line: field '" +
                        Sanitize(fields[i], 32) + "' is not key=value");
    }
    std::string_view key = fields[i].substr(0, eq), value = fields[i].substr(eq + 1);
    std::optional<double>* pct = key == "avg10"    ? &line.avg10_pct
                                 : key == "avg60"  ? &line.avg60_pct
                                 : key == "avg300" ? &line.avg300_pct
                                                   : nullptr;
    if (pct != nullptr) {
      auto v = ParseDouble(value);
      if (!v || *v < 0 || *v > 100) {
        return ParseError("pressure '" + std::string(kind) + "' line: " + std::string(key) +
                          " is not a percentage: '" + Sanitize(value, 32) + "'");
      }
      *pct = *v;
    } else if (key == "total") {
      auto v = ParseUint64(value);
      if (!v) {
        return ParseError("pressure '" + std::string(kind) + "' line: total is not a number");
      }
      line.total_us = *v;
    }
  }
  if (!line.avg10_pct || !line.avg60_pct || !line.avg300_pct || !line.total_us) {
    return ParseError("pressure '" + std::string(kind) +
                      "' line: missing one of avg10, avg60, avg300, total");
  }
  return line;
}

}  // namespace

Result<PressureResource> ParsePressure(std::string_view text) {
  std::optional<PressureLine> some, full;
  for (std::string_view raw : SplitLines(text)) {
    auto fields = Split(raw, " \t");
    if (fields.empty()) continue;
    std::optional<PressureLine>* target = fields[0] == "some"   ? &some
                                          : fields[0] == "full" ? &full
                                                                : nullptr;
    if (target == nullptr) {
      return ParseError("pressure: unexpected line starting with '" + Sanitize(fields[0], 32) +
                        "'");
    }
    auto line = ParsePressureLine(fields[0], fields);
    if (!line.ok()) return line.status();
    *target = *line;
  }
  if (!some) return ParseError("pressure: no 'some' line");
  PressureResource r;
  r.some = *some;
  r.full = full;
  return r;
}

}  // namespace gpudoctor
