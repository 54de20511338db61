// Fuzzes the /proc/stat and /proc/loadavg parsers: any input must parse or fail cleanly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/proc_stat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto st = gpudoctor::ParseProcStat(text);
  if (st.ok()) {
    auto shares = gpudoctor::CpuSharesBetween(gpudoctor::CpuTimes{}, st->total);
    if (shares && (shares->busy_pct < 0 || shares->busy_pct > 100)) __builtin_trap();
  }
  (void)gpudoctor::ParseLoadAvg(text);
  return 0;
}
