// Fuzzes fleet ingestion: the input is read as a stream of check --json reports (truncated,
// wrong types, duplicates, odd times) and as Prometheus query_range answers (info, a metric,
// throttle reasons, findings) and as a report index record, then analysed.
// Must never crash, hang or throw.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fleet/analysis.h"
#include "fleet/prometheus_input.h"
#include "fleet/report_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor::fleet;
  std::string text(reinterpret_cast<const char*>(data), size);
  FleetData d;
  AddReportStream(text, "fuzz", 1900000000, d);
  // The report index's binary record (report_index.h): decoded, and applied when it decodes.
  {
    std::string_view in(text);
    ParsedReport r;
    if (DecodeParsedReport(in, r)) (void)AddParsedReport(r, "fuzz-index", 1900000000, d);
  }
  gpudoctor::Status s = AddPrometheusMatrix("gpudoctor_gpu_sm_clock_hertz", text, "fuzz", d);
  (void)s;
  // The streaming matrix reader (prom_matrix) behind the identity join, the reason bits and
  // the findings.
  GpuIdentities ids;
  s = ids.AddInfoMatrix(text, 300);
  s = AddPrometheusMatrix("gpudoctor_gpu_throttle_active", text, "fuzz", ids, d);
  s = AddPrometheusMatrix("gpudoctor_finding_active", text, "fuzz", ids, d);
  (void)s;
  FleetOptions opt;
  opt.outliers.persist_windows = 1;
  opt.outliers.min_peers = 2;
  FleetAnalysis a = Analyze(d, opt);
  std::string out = RenderFleetJson(d, a) + RenderFleetText(d, a);
  auto ledger = BuildLedger(d);
  (void)ledger;
  return 0;
}
