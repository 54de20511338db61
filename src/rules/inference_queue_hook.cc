#include "rules/inference_queue_hook.h"

namespace gpudoctor {

// TODO(inference, issue 24 §3): return the waiting requests of the [[inference]] server that
// holds this GPU (vLLM num_requests_waiting, TGI queue size, ...) once the inference facts are
// in the snapshot. Until then the "scheduling" limiter of gpu.util.underused is never chosen.
std::optional<double> InferenceWaitingRequests(const Snapshot& /*snap*/, const GpuFacts& /*g*/) {
  return std::nullopt;
}

}  // namespace gpudoctor
