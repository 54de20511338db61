// NVML loader: dlopen of libnvidia-ml and dlsym of every entry in functions.def into one
// immutable table of function pointers. No NVIDIA header or library is needed at build time.
//
// Search order without an override: "libnvidia-ml.so.1" (the driver's runtime soname, via the
// dynamic linker's search path), then the absolute paths DCGM uses (nvml.md §1). With an
// override (--nvml-lib PATH) only that path is tried. A missing required symbol fails the load;
// a missing optional symbol leaves its pointer null (the caller skips that one probe).
// The library is never dlclosed: abandoned worker threads may still be executing inside it.
// Thread-safety: LoadNvml may be called concurrently; the returned table is immutable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "nvml/abi.h"

namespace gpudoctor::nvml {

enum class Requirement { kRequired, kOptional };

struct Api {
#define NVML_FUNCTION(member, requirement, ret, params, ...) ret(*member) params = nullptr;
#include "nvml/functions.def"
#undef NVML_FUNCTION
};

// The symbol each member resolved to (or its first candidate when unresolved), for messages and
// breadcrumbs: "nvmlDeviceGetPciInfo_v3".
struct SymbolNames {
#define NVML_FUNCTION(member, requirement, ret, params, ...) std::string member;
#include "nvml/functions.def"
#undef NVML_FUNCTION
};

struct ResolvedSymbol {
  const char* member;  // entry name in functions.def
  Requirement requirement;
  std::string symbol;  // the symbol found, empty when none of the candidates exists
};

struct Library {
  std::string path;  // what dlopen succeeded with
  // Driver version from the real file name (libnvidia-ml.so.550.54.15 -> "550.54.15"); empty
  // when the name carries none. Readable even when nvmlInit fails (driver.mismatch evidence).
  std::string file_version;
  Api api;
  SymbolNames names;
  std::vector<ResolvedSymbol> symbols;  // one per functions.def entry, in file order
};

// Candidates tried when no override is given, in order.
const std::vector<std::string>& DefaultLibraryCandidates();

// Errors: not_found (no candidate could be opened; message lists each dlerror), unsupported (a
// required symbol is missing; message names it).
Result<std::shared_ptr<const Library>> LoadNvml(const std::string& override_path);

// "NVML_ERROR_GPU_IS_LOST" for known codes, "unknown NVML error 12345" otherwise. Never indexes
// a table with the raw code.
std::string ReturnCodeName(nvmlReturn_t code);
// ReturnCodeName plus nvmlErrorString(code) when the library provides it (sanitised).
std::string DescribeReturn(const Library* lib, nvmlReturn_t code);

}  // namespace gpudoctor::nvml
