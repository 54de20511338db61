// Fuzz target: the kernel-log scanner (every line shape, Xid/NVRM and signal parsers, the anchor
// filter, the aggregator) on arbitrary bytes, plus the per-line entry points directly. The
// Xid-storm shortcut must give the facts of the full parse: both scans are compared.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
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
  options.repeat_shortcut = false;
  gpudoctor::KernelLogScanner reference(options);
  reference.ScanText(text);
  reference.ScanMessage(text, {});
  auto expected = reference.Finish();
  if (facts.lines_examined != expected.lines_examined ||
      facts.events.size() != expected.events.size()) {
    std::abort();
  }
  for (size_t i = 0; i < facts.events.size(); ++i) {
    const auto& a = facts.events[i];
    const auto& b = expected.events[i];
    if (a.count != b.count || a.subject != b.subject || a.xid != b.xid ||
        a.processes != b.processes || a.last.boot_us != b.last.boot_us ||
        a.first.boot_us != b.first.boot_us || a.sample != b.sample) {
      std::abort();
    }
  }
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
