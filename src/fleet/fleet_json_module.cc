// The entry point of gpudoctor_fleet_json.so (fleet_json_module.h): built into the module only,
// together with report_parse.cc and simdjson; never part of gpudoctor_lib.
#include "fleet/fleet_json_module.h"

#include "core/version.h"

namespace {

const gpudoctor::fleet::FleetJsonModule kModule = {
    gpudoctor::fleet::kFleetJsonModuleAbi,
    sizeof(gpudoctor::fleet::ParsedReport),
    sizeof(gpudoctor::fleet::ParsedGpu),
    sizeof(gpudoctor::Result<gpudoctor::fleet::ParsedReport>),
    gpudoctor::GpudoctorRevision(),
    &gpudoctor::fleet::ParseReportJson,
    &gpudoctor::fleet::ParseReportJsonPadded,
    &gpudoctor::fleet::EncodeParsedReport,
    &gpudoctor::fleet::DecodeParsedReport,
};

}  // namespace

// The one symbol the module exports (the rest is hidden: -fvisibility=hidden, --exclude-libs).
extern "C" __attribute__((visibility("default"))) const gpudoctor::fleet::FleetJsonModule*
gpudoctor_fleet_json_module_v2() {
  return &kModule;
}
