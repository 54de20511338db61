// Fuzzes `compare`: two JSON documents from any bytes (split at the first NUL) must compare or
// fail with a message, never crash.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "report/compare.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t cut = text.find('\0');
  std::string_view a = text.substr(0, cut);
  std::string_view b = cut == std::string_view::npos ? a : text.substr(cut + 1);
  auto ja = nlohmann::json::parse(a, nullptr, false);
  auto jb = nlohmann::json::parse(b, nullptr, false);
  if (ja.is_discarded() || jb.is_discarded()) return 0;
  auto c = gpudoctor::CompareReports(ja, jb);
  if (c.ok()) (void)gpudoctor::RenderComparisonText(*c);
  return 0;
}
