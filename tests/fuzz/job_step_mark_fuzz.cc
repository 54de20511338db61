// Fuzzes the query of a pushed step mark (POST /api/v1/job/NAME/step?...) and the path that names
// the job: a parsed mark has a positive finite duration and a non-negative step; a name taken
// from the path is only accepted when ValidJobName holds.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "job/step_inbox.h"
#include "serve/job_push.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = ParseStepMarkQuery(text);
  if (m.ok()) {
    if (m->seconds && (!(*m->seconds > 0) || !std::isfinite(*m->seconds))) __builtin_trap();
    if (m->step && *m->step < 0) __builtin_trap();
  }
  if (auto name = JobStepPathName(text)) {
    HttpResponse r = HandleJobStep(*name, "", 0);
    // No job is configured in the fuzzer: a valid name is 404, any other 400.
    if (r.status != (ValidJobName(*name) ? 404 : 400)) __builtin_trap();
  }
  return 0;
}
