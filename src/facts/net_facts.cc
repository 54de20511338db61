#include "facts/net_facts.h"

namespace gpudoctor {

const char* TargetGroupName(TargetGroup g) {
  switch (g) {
    case TargetGroup::kTarget:
      return "target";
    case TargetGroup::kReference:
      return "reference";
    case TargetGroup::kGateway:
      return "gateway";
  }
  return "unknown";
}

}  // namespace gpudoctor
