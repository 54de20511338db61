#include "facts/snapshot.h"

namespace gpudoctor {

const char* ProbeStateName(ProbeState s) {
  switch (s) {
    case ProbeState::kOk:
      return "ok";
    case ProbeState::kSkipped:
      return "skipped";
    case ProbeState::kFailed:
      return "failed";
    case ProbeState::kTimeout:
      return "timeout";
  }
  return "unknown";
}

}  // namespace gpudoctor
