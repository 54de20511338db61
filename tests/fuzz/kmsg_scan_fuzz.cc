// Fuzz target: the kernel-log scanner (every line shape, Xid/NVRM and signal parsers, the anchor
// filter, the aggregator) on arbitrary bytes, plus the per-line entry points directly. The
// Xid-storm shortcut and the signal memo must give the facts of the full parse: both scans are
// compared, on the whole input and on it cut in pieces.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kmsg/kernel_signals.h"
#include "kmsg/line_format.h"
#include "kmsg/log_scanner.h"
#include "kmsg/xid_parser.h"

namespace {

// Everything a scan reports that the shortcuts (XidRepeatCache, SignalMemo, the aggregator slot
// hints) could change: equal for equal facts.
bool SameFacts(const gpudoctor::KernelLogFacts& a, const gpudoctor::KernelLogFacts& b) {
  if (a.lines_examined != b.lines_examined || a.garbled_lines != b.garbled_lines ||
      a.repaired_lines != b.repaired_lines || a.truncated_lines != b.truncated_lines ||
      a.before_since_lines != b.before_since_lines ||
      a.since_unapplied_lines != b.since_unapplied_lines || a.dropped_events != b.dropped_events ||
      a.boots_seen != b.boots_seen || a.events.size() != b.events.size()) {
    return false;
  }
  for (size_t i = 0; i < a.events.size(); ++i) {
    const auto& x = a.events[i];
    const auto& y = b.events[i];
    if (x.kind != y.kind || x.count != y.count || x.subject != y.subject || x.xid != y.xid ||
        x.processes != y.processes || x.processes_truncated != y.processes_truncated ||
        x.ids != y.ids || x.first.boot_us != y.first.boot_us ||
        x.first.wall_us != y.first.wall_us || x.last.boot_us != y.last.boot_us ||
        x.last.wall_us != y.last.wall_us || x.sample != y.sample ||
        x.reset_required != y.reset_required || x.drain_reset_required != y.drain_reset_required ||
        x.nvlink_unit != y.nvlink_unit || x.nvlink_fatal != y.nvlink_fatal ||
        x.recovery_actions != y.recovery_actions || x.link_down != y.link_down ||
        x.link_up != y.link_up || x.tx_timeouts != y.tx_timeouts ||
        x.nvidia_related != y.nvidia_related || x.max_blocked_s != y.max_blocked_s) {
      return false;
    }
  }
  return true;
}

// Scans text handed over in pieces cut after a '\n' about every `piece` bytes (as ScanLogFd
// hands them over; 0: in one piece), then the whole text as one journal message.
gpudoctor::KernelLogFacts Scan(std::string_view text, gpudoctor::KernelLogScanOptions options,
                               size_t piece) {
  gpudoctor::KernelLogScanner scanner(options);
  for (size_t from = 0; from < text.size();) {
    size_t cut = piece == 0 ? text.npos : text.find('\n', from + piece);
    cut = cut == text.npos ? text.size() : cut + 1;
    scanner.ScanText(text.substr(from, cut - from));
    from = cut;
  }
  scanner.ScanMessage(text, {});
  return scanner.Finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpudoctor::KernelLogScanOptions options;
  options.current_boot_only = size % 2 == 1;
  options.boot_wall_us = int64_t{1700000000} * 1000000;
  options.now_unix_s = 1700000000;
  if (size % 3 == 1) options.since_wall_us = *options.boot_wall_us + 2000000;
  // The storm loop's SSE2 form on some inputs, its AVX-512 form (where the CPU has it) on others.
  options.wide_simd = size % 5 != 0;
  // The shortcuts must give the facts of the full parse, in one piece and in small ones (lines
  // near a piece's end take the shortcuts' byte-run compares, the others their fixed blocks).
  const size_t piece = size > 0 ? 1 + data[0] % 200 : 0;
  gpudoctor::KernelLogScanOptions full = options;
  full.repeat_shortcut = false;
  if (!SameFacts(Scan(text, options, 0), Scan(text, full, 0)) ||
      !SameFacts(Scan(text, options, piece), Scan(text, full, piece))) {
    std::abort();
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
