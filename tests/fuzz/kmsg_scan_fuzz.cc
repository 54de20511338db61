// Fuzz target: the kernel-log scanner (every line shape, Xid/NVRM and signal parsers, the anchor
// filter, the aggregator) on arbitrary bytes, plus the per-line entry points directly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kmsg/kernel_signals.h"
#include "kmsg/line_format.h"
#include "kmsg/log_scanner.h"
#include "kmsg/xid_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpudoctor::KernelLogScanOptions options;
  options.current_boot_only = size % 2 == 1;
  options.boot_wall_us = int64_t{1700000000} * 1000000;
  options.now_unix_s = 1700000000;
  gpudoctor::KernelLogScanner scanner(options);
  scanner.ScanText(text);
  scanner.ScanMessage(text, {});
  auto facts = scanner.Finish();
  (void)facts;
  gpudoctor::LineFormatState st;
  st.now_unix_s = 1700000000;
  auto parsed = gpudoctor::ParseLinePrefix(text, st);
  (void)gpudoctor::ParseNvrmLine(parsed.message);
  (void)gpudoctor::ParseAerLine(text);
  (void)gpudoctor::ParseHungTaskLine(text);
  (void)gpudoctor::ParseOomLine(text, false);
  (void)gpudoctor::ParseMceLine(text);
  (void)gpudoctor::ParseNetLinkLine(text);
  (void)gpudoctor::ParseCpuThermalLine(text);
  return 0;
}
