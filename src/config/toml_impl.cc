// toml++'s compiled part, built into gpudoctor instead of linking Debian's libtomlplusplus.so.3
// (one shared object less for every command to map and relocate; docs/cost.md). Every other
// translation unit sees toml++ exactly as before (TOML_HEADER_ONLY=0, TOML_SHARED_LIB=1 from the
// package's CMake target); this one defines the functions they call.
#define TOML_IMPLEMENTATION
#include "core/toml.h"
