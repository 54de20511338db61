// Kernel-log scanner benchmark. Two modes:
//   kmsg_scan_bench --scan FILE   scans FILE with ScanLogPath once and prints one line of
//                                 key=value results (used by bench/kmsg_scan.sh next to grep);
//   kmsg_scan_bench --scan-text FILE [RUNS]  the scanner alone on FILE loaded into memory: best
//                                 CPU time of RUNS scans and nanoseconds per line;
//   kmsg_scan_bench [gbench flags] Google Benchmark micro-benchmarks of the line paths.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kmsg/log_scanner.h"

namespace {

std::string NoiseText(size_t lines, bool with_xid) {
  std::string s;
  for (size_t i = 0; i < lines; ++i) {
    s += "[ 1234.567890] usb 1-1.2: new high-speed USB device number 4 using xhci_hcd\n";
    s += "[ 1234.567891] audit: type=1400 audit(1700000000.123:45): apparmor=\"STATUS\" "
         "operation=\"profile_load\" profile=\"unconfined\" name=\"snap.lxd\" pid=1234\n";
    if (with_xid && i % 100 == 0) {
      s += "[ 1234.600000] NVRM: Xid (PCI:0000:3b:00): 31, pid=4242, name=python3, Ch 00000010, "
           "intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_34560000.\n";
    }
  }
  return s;
}

void BM_ScanNoise(benchmark::State& state) {
  std::string text = NoiseText(10000, false);
  for (auto _ : state) {
    gpudoctor::KernelLogScanner scanner;
    scanner.ScanText(text);
    benchmark::DoNotOptimize(scanner.facts().lines_examined);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ScanNoise);

void BM_ScanWithXid(benchmark::State& state) {
  std::string text = NoiseText(10000, true);
  for (auto _ : state) {
    gpudoctor::KernelLogScanner scanner;
    scanner.ScanText(text);
    benchmark::DoNotOptimize(scanner.Finish().events.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ScanWithXid);

int ScanFile(const char* path) {
  auto t0 = std::chrono::steady_clock::now();
  auto facts = gpudoctor::ScanLogPath(path, {});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!facts.ok()) {
    std::fprintf(stderr, "kmsg_scan_bench: %s\n", facts.status().ToString().c_str());
    return 1;
  }
  uint64_t xid_lines = 0;
  for (const auto& e : facts->events) {
    if (e.kind == gpudoctor::KernelEventKind::kXid) xid_lines += e.count;
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("bytes=%llu seconds=%.4f xid_lines=%llu events=%zu examined=%llu max_rss_kb=%ld\n",
              static_cast<unsigned long long>(facts->bytes_scanned), secs,
              static_cast<unsigned long long>(xid_lines), facts->events.size(),
              static_cast<unsigned long long>(facts->lines_examined), ru.ru_maxrss);
  return 0;
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The scanner alone, without the system calls: FILE is loaded into memory once, then, `runs`
// times, copied piece by piece (128 KiB cut at '\n', as ScanLogFd reads it) into a buffer that
// is scanned, as read(2) leaves it in the cache. The copy alone is timed too; the scanner's cost
// is the difference. Prints the best of the runs, in CPU milliseconds and nanoseconds per line.
int ScanTextInMemory(const char* path, int runs) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  std::vector<std::pair<size_t, size_t>> pieces;
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.size(), at + (128 << 10));
    if (end < text.size()) end = text.rfind('\n', end - 1) + 1;
    pieces.emplace_back(at, end - at);
    at = end;
  }
  std::unique_ptr<char[]> buf(new char[128 << 10]);
  double best_scan = 1e9, best_copy = 1e9;
  uint64_t xid_lines = 0, examined = 0, sink = 0;
  for (int r = 0; r < runs; ++r) {
    double t0 = CpuSeconds();
    for (const auto& [at, n] : pieces) {
      std::memcpy(buf.get(), text.data() + at, n);
      benchmark::DoNotOptimize(buf.get());
      sink += static_cast<unsigned char>(buf[n / 2]);
    }
    best_copy = std::min(best_copy, CpuSeconds() - t0);
    t0 = CpuSeconds();
    gpudoctor::KernelLogScanner scanner;
    for (const auto& [at, n] : pieces) {
      std::memcpy(buf.get(), text.data() + at, n);
      scanner.ScanText(std::string_view(buf.get(), n));
    }
    auto facts = scanner.Finish();
    best_scan = std::min(best_scan, CpuSeconds() - t0);
    xid_lines = 0;
    for (const auto& e : facts.events) {
      if (e.kind == gpudoctor::KernelEventKind::kXid) xid_lines += e.count;
    }
    examined = facts.lines_examined;
  }
  const double scan = best_scan - best_copy;
  std::printf(
      "bytes=%zu lines=%zu copy_ms=%.2f scan_ms=%.2f ns_per_line=%.1f xid_lines=%llu "
      "examined=%llu%s\n",
      text.size(), lines, best_copy * 1e3, scan * 1e3, scan * 1e9 / static_cast<double>(lines),
      static_cast<unsigned long long>(xid_lines), static_cast<unsigned long long>(examined),
      sink == 1 ? " " : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--scan") == 0) return ScanFile(argv[2]);
  if (argc >= 3 && std::strcmp(argv[1], "--scan-text") == 0) {
    return ScanTextInMemory(argv[2], argc > 3 ? std::atoi(argv[3]) : 5);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
