#include "core/version.h"

// build/generated/revision/gpudoctor_revision.h (CMakeLists.txt): the git revision.
#if __has_include("gpudoctor_revision.h")
#include "gpudoctor_revision.h"
#endif
#ifndef GPUDOCTOR_REVISION
#define GPUDOCTOR_REVISION "unknown"
#endif

namespace gpudoctor {

const char* GpudoctorVersion() { return "0.1.0"; }
const char* GpudoctorRevision() { return GPUDOCTOR_REVISION; }

}  // namespace gpudoctor
