#include "parsers/meminfo.h"

#include <limits>
#include <string>

#include "core/strings.h"

namespace gpudoctor {
namespace {

// "  16318480 kB" -> bytes. nullopt on garbage, unknown unit or overflow.
std::optional<uint64_t> ParseKbValue(std::string_view rest) {
  auto fields = Split(rest, " \t");
  if (fields.empty() || fields.size() > 2) return std::nullopt;
  auto v = ParseUint64(fields[0]);
  if (!v) return std::nullopt;
  if (fields.size() == 1) return *v;  // unitless (counts)
  if (fields[1] != "kB") return std::nullopt;
  if (*v > std::numeric_limits<uint64_t>::max() / 1024) return std::nullopt;
  return *v * 1024;
}

}  // namespace

Result<Meminfo> ParseMeminfo(std::string_view text) {
  Meminfo m;
  struct Slot {
    std::string_view key;
    std::optional<uint64_t>* value;
  };
  const Slot slots[] = {{"MemTotal", &m.total_bytes},     {"MemAvailable", &m.available_bytes},
                        {"MemFree", &m.free_bytes},       {"SwapTotal", &m.swap_total_bytes},
                        {"SwapFree", &m.swap_free_bytes}, {"Shmem", &m.shmem_bytes}};
  int line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, colon));
    for (const Slot& slot : slots) {
      if (key != slot.key) continue;
      auto bytes = ParseKbValue(line.substr(colon + 1));
      if (!bytes) {
        return ParseError("line " + std::to_string(line_no) + ": " + std::string(slot.key) +
                          " has a malformed value '" + Sanitize(Trim(line.substr(colon + 1)), 40) +
                          "'");
      }
      *slot.value = *bytes;
    }
  }
  if (!m.total_bytes) return ParseError("no MemTotal line");
  if (*m.total_bytes == 0) return ParseError("MemTotal is 0");
  if (m.available_bytes && *m.available_bytes > *m.total_bytes) {
    return ParseError("MemAvailable exceeds MemTotal");
  }
  if (m.free_bytes && *m.free_bytes > *m.total_bytes) {
    return ParseError("MemFree exceeds MemTotal");
  }
  if (m.swap_total_bytes && m.swap_free_bytes && *m.swap_free_bytes > *m.swap_total_bytes) {
    return ParseError("SwapFree exceeds SwapTotal");
  }
  return m;
}

}  // namespace gpudoctor
