// Fuzzes the parsers of clamscan, dpkg --verify and debsums output (`gpudoctor scan`): any text
// must parse or fail with a clear error, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/scan_outputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpudoctor::ParseClamOutput(text);
  (void)gpudoctor::ParseDpkgVerify(text);
  (void)gpudoctor::ParseDebsums(text);
  return 0;
}
