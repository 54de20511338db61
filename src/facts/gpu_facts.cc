#include "facts/gpu_facts.h"

namespace gpudoctor {

const char* NvmlStateName(NvmlState s) {
  switch (s) {
    case NvmlState::kNotRun:
      return "not_run";
    case NvmlState::kLibraryMissing:
      return "library_missing";
    case NvmlState::kSymbolMissing:
      return "symbol_missing";
    case NvmlState::kInitFailed:
      return "init_failed";
    case NvmlState::kInitHung:
      return "init_hung";
    case NvmlState::kInitUnfinished:
      return "init_unfinished";
    case NvmlState::kOk:
      return "ok";
  }
  return "unknown";
}

}  // namespace gpudoctor
