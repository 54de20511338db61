// Fuzzes kernel release ordering: antisymmetric, reflexive, and flavours never crash. The input
// is split at its first newline into two releases.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/kernel_version.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t nl = text.find('\n');
  std::string_view a = text.substr(0, nl);
  std::string_view b = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  int ab = gpudoctor::CompareKernelVersions(a, b);
  int ba = gpudoctor::CompareKernelVersions(b, a);
  if ((ab > 0) != (ba < 0) || (ab == 0) != (ba == 0)) __builtin_trap();
  if (gpudoctor::CompareKernelVersions(a, a) != 0) __builtin_trap();
  (void)gpudoctor::KernelFlavour(a);
  return 0;
}
