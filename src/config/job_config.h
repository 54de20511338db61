// [[job]] tables: the jobs whose speed `watch` follows (job probe, job.slowdown, `gpudoctor why`).
//
//   [[job]]
//   name = "llama-pretrain"          # required, unique, [A-Za-z0-9_.-]{1,64}
//   log = "/scratch/run7/train.log"  # optional: the training log to tail
//   preset = "auto"                  # auto|tqdm|lightning|megatron|deepspeed|step|regex
//   regex = 'step_time=([0-9.]+)'    # preset "regex" only: group 1 is the value
//   capture = "seconds"              # what group 1 holds: seconds|ms|it_per_s|step
//   baseline_steps = 20              # baseline = median of the first N step times (1-100000)
//   baseline_s = 0                   # > 0: a known good step time instead
//   prometheus_url = "http://127.0.0.1:9100/metrics"  # optional: the job's own exporter
//   metric = "train_step_seconds"    # a step counter, a step-time gauge or histogram/summary
//   selector = '{rank="0"}'          # optional label matchers (= and !=)
//
// A job without `log` is fed by pushes only (POST /api/v1/job/NAME/step, `gpudoctor mark step`).
// At most kMaxJobs tables. Errors name the file, line, the table's index (#1 first) and the key:
// "gpudoctor.toml:12: [[job]] #2 key 'preset': must be one of ...". Unknown keys are warnings.
// Not thread-safe (config loading, main thread).
#pragma once

#include <string>
#include <vector>

#include "core/settings.h"
#include "core/status.h"
#include "core/toml.h"

namespace gpudoctor {

inline constexpr size_t kMaxJobs = 32;

Status ApplyJobConfig(const toml::table& root, const std::string& source, Settings& settings,
                      std::vector<std::string>& warnings);

}  // namespace gpudoctor
