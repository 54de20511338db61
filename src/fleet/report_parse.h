// One `gpudoctor check --json` report reduced to the fields `fleet` uses, before any judgement
// that depends on other reports or on the reading host's clock (report_reader.h does that).
// Parsed with simdjson's On Demand API: one pass over the document, unknown fields skipped
// without being materialised. Everything decided by the report alone is decided here: values
// outside their physical range are dropped and named in `rejected`, bus ids canonicalised,
// placeholder serials emptied, a finding repeated within the report kept once (and counted in
// `repeats`). A ParsedReport is also what the report index (report_index.h) stores per file, so
// a cached report and a freshly parsed one are judged by the same code.
// Thread-compatible: ParseReportJson uses one parser per thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct ParsedGpu {
  Card card;             // node left empty (the report's host)
  GpuSample sample;      // card and time_s left 0
  std::string job;       // the job running on this GPU ("job" in the GPU's facts), "" unknown
  std::string rejected;  // "temp_c 1e300 (expected -40..150 C), ..." or empty
};

struct ParsedReport {
  std::string host, time_text, verdict;
  std::string job;  // the report's "job" label (Slurm job id, K8s job), "" unknown
  int64_t time_s = 0;
  bool has_gpus = false;  // a "gpus" key was present (even empty)
  std::vector<ParsedGpu> gpus;
  std::vector<FindingEvent> findings;                // node and time_s left empty
  std::vector<std::pair<std::string, int>> repeats;  // finding id, times seen (>= 2)
};

// Parses one document. Errors (the message names the field; the caller adds the file):
// "invalid or truncated JSON", "not a JSON object (...)", "no \"host\" (...)",
// "node H: missing or malformed \"time\" '...'", "node H: no \"findings\" array (...)".
Result<ParsedReport> ParseReportJson(std::string_view json_text);

// Bytes ParseReportJsonPadded needs readable after the text (the parser's SIMD padding).
inline constexpr size_t kReportParsePadding = 64;

// As ParseReportJson, for text followed by at least kReportParsePadding readable bytes (a read
// buffer sized for it): parsed where it lies, without a copy.
Result<ParsedReport> ParseReportJsonPadded(std::string_view json_text);

// The index's binary form of a ParsedReport (report_index.h). Decode returns false on any
// inconsistency (short input, a length past the end); `in` is advanced past the record.
void EncodeParsedReport(const ParsedReport& r, std::string& out);
bool DecodeParsedReport(std::string_view& in, ParsedReport& r);

}  // namespace gpudoctor::fleet
