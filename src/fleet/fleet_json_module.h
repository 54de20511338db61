// The fleet report parser as a loadable module. simdjson (Debian ships it as a shared library
// only) is needed by `gpudoctor fleet` alone, so report_parse.cc and simdjson live in
// gpudoctor_fleet_json.so, built next to the binary and installed in <prefix>/lib/gpudoctor/; the
// binary loads it with dlopen the first time report_parse.h is used (report_parse_module.cc), and
// every other command maps neither the module nor libsimdjson.
//
// The module exports one C symbol, kFleetJsonModuleSymbol, returning the table below. The table
// passes C++ objects (std::string, std::vector) across the boundary, so the module must come from
// the same build as the binary: the loader refuses a table whose ABI number, struct sizes or
// source revision differ from its own. Thread-safety: the table is immutable; its functions are
// those of report_parse.h (thread-compatible, one parser per thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "fleet/report_parse.h"

namespace gpudoctor::fleet {

// Bumped whenever FleetJsonModule or the functions' signatures change.
inline constexpr uint32_t kFleetJsonModuleAbi = 2;
inline constexpr const char* kFleetJsonModuleFile = "gpudoctor_fleet_json.so";
inline constexpr const char* kFleetJsonModuleSymbol = "gpudoctor_fleet_json_module_v2";

struct FleetJsonModule {
  uint32_t abi;            // kFleetJsonModuleAbi of the module's build
  uint32_t sizeof_report;  // sizeof(ParsedReport) there
  uint32_t sizeof_gpu;     // sizeof(ParsedGpu)
  uint32_t sizeof_result;  // sizeof(Result<ParsedReport>)
  const char* revision;    // GpudoctorRevision() of the module's build
  Result<ParsedReport> (*parse)(std::string_view json_text);
  // ParseReportJsonPadded: kReportParsePadding readable bytes follow the text.
  Result<ParsedReport> (*parse_padded)(std::string_view json_text);
  void (*encode)(const ParsedReport& r, std::string& out);
  bool (*decode)(std::string_view& in, ParsedReport& r);
};

}  // namespace gpudoctor::fleet

extern "C" {
// What kFleetJsonModuleSymbol names; never null.
using GpudoctorFleetJsonModuleFn = const gpudoctor::fleet::FleetJsonModule* (*)();
}
