#include "facts/upkeep_facts.h"

namespace gpudoctor {

const char* SensorKindName(SensorKind k) { return k == SensorKind::kBoard ? "board" : "inlet"; }

}  // namespace gpudoctor
