// This machine's host name (gethostname), sanitised for reports and labels; "unknown" when the
// call fails. Thread-safe.
#pragma once

#include <string>

namespace gpudoctor {

std::string LocalHostname();

}  // namespace gpudoctor
