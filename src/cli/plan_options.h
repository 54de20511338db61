// Command line of `gpudoctor plan kv|batching`: the plan flags (a table, like src/cli/flags.cc)
// plus every global flag (--json, --nvml-lib, ...) handled by the shared flag table. Parsing
// only: values are checked for range here, consistency between flags in plan_command.cc.
// Not thread-safe (main thread only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_options.h"
#include "core/status.h"
#include "plan/trace.h"
#include "plan/units.h"

namespace gpudoctor::plan {

struct PlanOptions {
  CliOptions cli;  // global flags; cli.command == "plan", cli.positional[0] the subcommand
  bool list_models = false;
  std::optional<std::string> model;
  std::optional<int> layers, kv_heads, head_dim;
  std::optional<double> params, active_params;
  std::optional<std::pair<int, int>> experts;  // routed experts : experts per token
  DType weight_dtype = DType::kBf16;
  DType kv_dtype = DType::kFp16;
  int tp = 1;
  std::optional<uint64_t> gpu_mem_bytes;
  int gpu_index = 0;
  std::optional<uint64_t> reserve_bytes;
  std::optional<double> reserve_fraction;
  std::optional<double> memory_fraction;  // vLLM gpu_memory_utilization
  uint32_t max_batched_tokens = 8192;
  std::optional<uint64_t> activation_bytes, non_torch_bytes;
  uint32_t block_tokens = 16;
  std::optional<uint32_t> context;
  std::optional<std::string> context_dist_file;
  std::optional<uint32_t> max_context;
  std::optional<std::string> gpu_type;
  // kv
  bool compare = false;
  std::optional<double> prefix_share;  // fraction of each sequence shared, [0, 1)
  // batching
  std::optional<std::string> trace_file;
  double rate_per_s = 2;
  uint64_t requests = 2000;
  uint64_t seed = 1;
  LengthRange prompt{256, 2048};
  LengthRange output{1, 2048, true, 256};
  uint32_t batch_size = 16;
  double max_wait_s = 0.05;
  uint32_t max_seqs = 256;
  uint64_t max_queue = 100000;
  std::optional<double> step_ms, weights_ms, token_us, kv_ns;
  bool no_knobs = false;
  uint32_t chunked_prefill_tokens = 0;  // 0: off
  double prefix_cache_hit = 0;          // fraction of each prompt, [0, 1)
};

struct PlanFlag {
  std::string_view name;
  std::string_view value_name;  // empty: a switch
  std::string_view help;
  Status (*apply)(std::string_view value, PlanOptions& options);
};
const std::vector<PlanFlag>& PlanFlagTable();

// True when the first positional argument of argv is "plan" (flag values are skipped using both
// flag tables).
bool IsPlanCommandLine(int argc, const char* const* argv);

// Errors: invalid_argument "flag --context: ..." naming the flag and the value.
Result<PlanOptions> ParsePlanCommandLine(int argc, const char* const* argv);

std::string PlanUsageText();

}  // namespace gpudoctor::plan
