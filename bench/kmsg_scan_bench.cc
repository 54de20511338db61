// Kernel-log scanner benchmark. Two modes:
//   kmsg_scan_bench --scan FILE   scans FILE with ScanLogPath once and prints one line of
//                                 key=value results (used by bench/kmsg_scan.sh next to grep);
//   kmsg_scan_bench [gbench flags] Google Benchmark micro-benchmarks of the line paths.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--scan") == 0) return ScanFile(argv[2]);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
