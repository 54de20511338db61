#include "rules/inference_queue_hook.h"

#include "facts/inference_state.h"

namespace gpudoctor {

// The requests waiting, summed over the [[inference]] servers that serve this GPU (vLLM
// num_requests_waiting, TGI queue size, ...: facts/inference_state.h); nullopt when no engine
// that serves it has requests waiting (or none was read).
std::optional<double> InferenceWaitingRequests(const Snapshot& snap, const GpuFacts& g) {
  std::vector<InferenceWaiting> waiting = RequestsWaitingNow(snap.inference, snap.gpu.gpus, g);
  if (waiting.empty()) return std::nullopt;
  double total = 0;
  for (const InferenceWaiting& w : waiting) total += w.waiting;
  return total;
}

}  // namespace gpudoctor
