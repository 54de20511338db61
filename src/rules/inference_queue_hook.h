// The hook through which gpu.util.underused learns that an inference server on a GPU has
// requests waiting (the "scheduling" limiter: a queue while the GPU idles). Thread-safe (pure).
#pragma once

#include <optional>

#include "facts/snapshot.h"

namespace gpudoctor {

// Requests waiting in the queue of the inference server that holds `g` this tick, from the
// server's own metrics; nullopt when unknown (no server, or its metrics are not read).
std::optional<double> InferenceWaitingRequests(const Snapshot& snap, const GpuFacts& g);

}  // namespace gpudoctor
