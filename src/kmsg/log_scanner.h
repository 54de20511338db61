// KernelLogScanner: turns kernel log text into KernelLogFacts, streaming and in bounded memory.
// Text is searched for event keywords with AnchorFilter; only lines that carry one are parsed
// (prefix shape, then the NVRM / AER / hung-task / OOM / MCE / NIC / thermal parsers) and folded
// into an EventAggregator. Invalid UTF-8 and control bytes in such a line are replaced by '?' and
// the line is still parsed (counted as repaired); trailing '\r' (CRLF files) is dropped, and a run
// of NUL bytes ends a line like '\n' does. Over-long text and absurd numbers are skipped and
// counted (truncated/garbled), never fatal.
// Boot markers ("Linux version ...", journalctl "-- Boot") are counted; with current_boot_only
// everything before the last marker is discarded. Not thread-safe; one scanner per stream.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "facts/kernel_facts.h"
#include "facts/pci_tuple.h"
#include "kmsg/event_aggregator.h"
#include "kmsg/line_format.h"
#include "kmsg/mapped_pages.h"
#include "kmsg/signal_memo.h"
#include "kmsg/xid_repeat_cache.h"

namespace gpudoctor {

struct KernelLogScanOptions {
  // Drop lines older than this. Lines without a wall-clock time (dmesg without -T, no boot time
  // known) cannot be judged: they are kept and counted in since_unapplied_lines.
  std::optional<int64_t> since_wall_us;
  bool current_boot_only = false;  // keep only what follows the last boot marker
  // Wall time of boot (µs): converts boot-relative stamps (live /dev/kmsg) to wall time.
  std::optional<int64_t> boot_wall_us;
  int64_t now_unix_s = 0;  // syslog year inference; 0 = the clock
  // Xid-storm shortcut (XidRepeatCache): a dmesg line that repeats an Xid line already parsed,
  // but for its pid, is not parsed again; nor is a NIC link message seen before (SignalMemo).
  // Same facts either way; false only in tests that prove it.
  bool repeat_shortcut = true;
  // The storm loop compares with AVX-512 where the CPU has it; false: with SSE2 everywhere
  // (tests compare both). Same facts either way.
  bool wide_simd = true;
};

class KernelLogScanner {
 public:
  static constexpr size_t kMaxLineBytes = 16 * 1024;
  static constexpr size_t kMaxGpus = 64;

  explicit KernelLogScanner(KernelLogScanOptions options = {});
  ~KernelLogScanner();
  KernelLogScanner(const KernelLogScanner&) = delete;
  KernelLogScanner& operator=(const KernelLogScanner&) = delete;

  // Complete lines ('\n'-separated; the last may lack its '\n'), in any shape.
  void ScanText(std::string_view text);
  // One kernel message without prefix and its time (journal entries).
  void ScanMessage(std::string_view message, const LogTime& time);

  KernelLogFacts& facts() { return facts_; }
  // A copy of the facts so far, events included (not an "API mismatch" report still waiting for
  // its continuation lines); the scanner goes on.
  KernelLogFacts Current() const;
  // Moves the events into the facts and returns them; the scanner is spent afterwards.
  KernelLogFacts Finish();

  // For a large input (ScanLogFd: a regular file of kLargeInputBytes or more): a read buffer of
  // kLargeReadBytes in one huge page (MappedPages) that also holds the Xid repeat cache's
  // table when it does not exist yet; the same buffer on later calls; nullptr when no region
  // could be mapped (then the caller's own buffer). Valid as long as the scanner.
  static constexpr size_t kReadBufferBytes = 128 << 10;
  static constexpr size_t kLargeReadBytes = 1024 << 10;
  char* LargeInputBuffer();

 private:
  // The line itself when clean, else a repaired copy in repaired_ (valid until the next call).
  std::string_view Repair(std::string_view line);
  void ProcessLine(std::string_view line);
  // The Xid-storm shortcut at the start of a line (`from`, text ends at `end`): returns the end
  // of the line when it was a repeat and has been counted, else nullptr (nothing done).
  const char* TryRepeatXid(const char* from, const char* end);
  // The storm loop, after a line TryRepeatXid counted: counts the lines from `from` on (a line
  // start) while they repeat cached Xid lines in MatchFast's common form, inline, as
  // TryRepeatXid would, and returns where it stopped (a line start, `from` itself when its first
  // line is not such a repeat, or `end`).
  const char* ScanRepeats(const char* from, const char* end);
  const char* ScanRepeatsAvx512(const char* from, const char* end);  // the same, AVX-512BW
  void ProcessMessage(const ParsedLine& parsed, std::string_view line);
  void HandleNvrm(std::string_view msg, const LogTime& t, std::string_view line);
  void HandleNvrmLine(std::string_view msg, const LogTime& t, std::string_view line);
  // "API mismatch" report spread over up to kMaxMismatchLines NVRM lines: emits the event once
  // the kernel module's version is read, or with what it has when `force`. Returns true when
  // it emitted.
  bool FinishMismatch(bool force);
  void FlushMismatch();
  bool HandleSignals(std::string_view msg, const LogTime& t, std::string_view line);
  void Observe(const KernelEvent& delta, const LogTime& t, std::string_view line);
  void OnBoot();
  void OnDriverLoad(std::string_view msg, const LogTime& t);

  KernelLogScanOptions options_;
  // Declared before repeats_, whose table it may hold: destroyed after it.
  std::unique_ptr<MappedPages> scratch_;
  std::string repaired_;
  LineFormatState format_state_;
  EventAggregator aggregator_;
  XidRepeatCache repeats_;
  SignalMemo signal_memo_;     // with repeat_shortcut: NIC link lines that repeat are not parsed
  bool storm_avx512_ = false;  // ScanRepeatsAvx512 instead of ScanRepeats
  bool learn_xid_ = false;     // the line in ProcessLine is a clean dmesg line: Xids may be learnt
  KernelLogFacts facts_;
  // Multi-line state.
  int lost_stage_ = 0;  // three-line "fallen off the bus": 1 after line 1, 2 after line 2
  std::optional<PciTuple> lost_pci_;
  std::string lost_sample_;
  std::optional<size_t> last_gpu_at_;  // index into facts_.gpus for the serial line
  static constexpr int kMaxMismatchLines = 6;
  int mismatch_lines_ = 0;  // lines of the open "API mismatch" report; 0 = none open
  // Lines after a "PCIe Bus Error" report still to read whatever their anchors: its detail lines
  // ("device [8086:6f08] error status/mask=...", "   [14] CmpltTO") hold none.
  int aer_details_left_ = 0;
  bool aer_detail_line_ = false;  // the line being handled is read as such a detail line
  std::string mismatch_text_, mismatch_sample_;
  LogTime mismatch_time_;
  bool pending_memcg_ = false;
  // The GPU of the last GSP-CrashCat report, for its unprefixed reason line.
  std::string crashcat_subject_;
  std::optional<PciTuple> crashcat_pci_;
  LogTime crashcat_time_;
  // NVSwitch SXid records whose description line came and whose "Severity" line has not yet
  // ("BDF|code", oldest first, bounded).
  static constexpr size_t kMaxSxidDescribed = 64;
  std::vector<std::string> sxid_described_;
  // The hung task or CPU stall whose stack trace may follow.
  KernelEventKind hung_kind_ = KernelEventKind::kHungTask;
  std::string hung_subject_;
  LogTime hung_time_;
};

// Regular files of this size or more are read into KernelLogScanner::LargeInputBuffer().
inline constexpr uint64_t kLargeInputBytes = uint64_t{1} << 20;

// Reads fd to its end with a fixed buffer (never the whole input: 128 KiB, 1 MiB for a regular
// file of kLargeInputBytes or more) and scans it; a line of 128 KiB or more is dropped and
// counted in truncated_lines, whichever the buffer. Stops at
// `deadline` (facts.stopped_at_deadline), also on a pipe or FIFO that never ends or stays silent
// (non-regular files are polled). Errors: io_error from read(2).
Status ScanLogFd(int fd, KernelLogScanner& scanner, TimePoint deadline = TimePoint::max());

// Scans a file, or standard input for "-". A FIFO is opened without waiting for a writer.
// Errors: not_found, permission_denied, io_error, invalid_argument (a directory).
Result<KernelLogFacts> ScanLogPath(const std::string& path, const KernelLogScanOptions& options,
                                   TimePoint deadline = TimePoint::max());

// True when s is valid UTF-8 without control bytes other than tab.
bool IsCleanLogText(std::string_view s);
// s with every byte that breaks IsCleanLogText (invalid UTF-8, control bytes) replaced by '?'.
std::string RepairLogText(std::string_view s);

}  // namespace gpudoctor
