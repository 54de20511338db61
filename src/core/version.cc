#include "core/version.h"

#ifndef GPUDOCTOR_REVISION
#define GPUDOCTOR_REVISION "unknown"
#endif

namespace gpudoctor {

const char* GpudoctorVersion() { return "0.1.0"; }
const char* GpudoctorRevision() { return GPUDOCTOR_REVISION; }

}  // namespace gpudoctor
