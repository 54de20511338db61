// Fuzzes the config loader: any bytes must either apply or fail with a message naming the file,
// never crash; the defaults file must stay loadable afterwards.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpudoctor::Settings settings;
  auto r = gpudoctor::ApplyConfigText(text, "fuzz.toml", settings);
  if (!r.ok() && r.status().message().find("fuzz.toml") == std::string::npos) __builtin_trap();
  if (settings.deadline_s <= 0 || settings.sample_ms < 0) __builtin_trap();
  return 0;
}
