// [[inference]] tables: inference servers whose own Prometheus metrics `watch` and `check` read
// (probes/inference_probe.cc).
//
//   [[inference]]
//   url = "http://127.0.0.1:8000/metrics"  # required; http or https; path defaults to /metrics
//   engine = "vllm"                        # vllm|tgi|sglang|triton|auto (default auto)
//   name = "chat"                          # optional, unique, [A-Za-z0-9_.-]{1,64}
//
// Local listeners of known engines are also found without a table (Settings::inference_discover;
// off with `[inference_discovery] enabled = false` or --no-inference-discovery: config_schema.cc).
// url is checked as every other URL of the config is (HttpUrlProblem, core/notify_target.h).
// At most kMaxInference tables. Errors name the file, line, the table's index and the key, as
// [[job]] does. Unknown keys are warnings. Not thread-safe (config loading, main thread).
#pragma once

#include <string>
#include <vector>

#include "core/settings.h"
#include "core/status.h"
#include "core/toml.h"

namespace gpudoctor {

inline constexpr size_t kMaxInference = 32;

Status ApplyInferenceConfig(const toml::table& root, const std::string& source, Settings& settings,
                            std::vector<std::string>& warnings);

}  // namespace gpudoctor
