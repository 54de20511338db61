// The gpudoctor release and the source revision it was built from. Thread-safe (constants).
#pragma once

namespace gpudoctor {

// "0.1.0".
const char* GpudoctorVersion();
// The git commit of the source tree at configure time ("3f2a9c1"), "unknown" outside a git
// checkout.
const char* GpudoctorRevision();

}  // namespace gpudoctor
