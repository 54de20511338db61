// gpu.readings_failed: a GPU whose reading calls (temperature, power, utilisation, memory,
// clocks, counters) answer an error, what `nvidia-smi` shows as `ERR!`: NVML_ERROR_UNKNOWN,
// RESET_REQUIRED ("GPU requires reset"), a call that answered before and now says
// NOT_SUPPORTED (GpuFacts::errors carries it as code 3), or any other known NVML error. Such a
// GPU is never "ok", even though every value it did return looks healthy.
//
// Not this rule's: a lost GPU (LostRule), a refused handle lookup and the codes that are
// findings of their own (INSUFFICIENT_POWER, IRQ_ISSUE, CORRUPTED_INFOROM, NO_PERMISSION,
// OPERATING_SYSTEM, LIB_RM_VERSION_MISMATCH: NvmlErrorRule), and return codes outside NVML's
// enum (garbage from the driver, dropped like garbage values).
// Action: reset_gpu when every failing call says RESET_REQUIRED, else drain_reset.
#pragma once

#include <vector>

#include "facts/gpu_facts.h"
#include "findings/finding.h"

namespace gpudoctor {

// True when `code` is a reading failure this rule reports (see above), for `call`.
bool IsReadingFailure(const NvmlCallError& e);

void ReadingsFailedRule(const GpuFacts& g, std::vector<Finding>& out);

}  // namespace gpudoctor
