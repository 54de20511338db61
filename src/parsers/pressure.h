// Parser for one pressure stall information file, /proc/pressure/{cpu,memory,io} (kernel
// Documentation/accounting/psi.rst). Pure function; thread-safe.
//
// Format, one or two lines:
//   some avg10=1.23 avg60=0.50 avg300=0.10 total=123456
//   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
// avgN are percentages of wall time (0..100) over the last N seconds; total is cumulative stall
// time in microseconds. `full` is absent for cpu before kernel 5.13.
#pragma once

#include <string_view>

#include "core/status.h"
#include "facts/host_facts.h"

namespace gpudoctor {

// Errors: parse_error when the "some" line is missing, a line is malformed, a field is missing
// or not a number, or a percentage lies outside 0..100. Unknown extra key=value fields are
// ignored (forward compatibility).
Result<PressureResource> ParsePressure(std::string_view text);

}  // namespace gpudoctor
