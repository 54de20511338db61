// The push path of job step times: `POST /api/v1/job/NAME/step?seconds=S&step=N` (and
// `gpudoctor mark step`, which sends it) leaves a mark here; the job probe takes the marks of its
// jobs each tick. The request carries its values in the query string, never in a body: the HTTP
// server reads no request bodies (serve/http_loop.h), which keeps request smuggling impossible.
// Bounded: marks for names not configured in [[job]] are refused; at most kMaxQueued marks wait
// per job (the oldest are dropped and counted). Thread-safe (the HTTP workers push, the probe
// takes).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

struct StepMark {
  int64_t unix_ms = 0;            // when it was received
  std::optional<int64_t> step;    // the loop's own step counter
  std::optional<double> seconds;  // the loop's own measure of the step
};

// A job name: 1-64 characters of [A-Za-z0-9_.-].
bool ValidJobName(std::string_view name);

// The query of a step mark: "", "seconds=2.5", "step=120", "step=120&seconds=2.5" (both
// optional; seconds in (0, 1e7), step 0..2^62). Unknown, repeated or malformed parameters are
// InvalidArgument naming the parameter.
Result<StepMark> ParseStepMarkQuery(std::string_view query);

class JobInbox {
 public:
  static constexpr size_t kMaxQueued = 4096;
  // The names pushes are accepted for (the [[job]] tables); the probe sets them each run.
  void SetKnownJobs(const std::vector<std::string>& names);
  // NotFound naming the job when it is not configured (or no job probe ran yet).
  Status Push(const std::string& job, const StepMark& mark);
  // The marks queued for `job`, oldest first, and how many were dropped since the last Take.
  std::vector<StepMark> Take(const std::string& job, uint64_t* dropped = nullptr);

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<StepMark>, std::less<>> queued_;
  std::map<std::string, uint64_t, std::less<>> dropped_;
};

// The process's one inbox (the HTTP server and the job probe of one `watch`).
JobInbox& GlobalJobInbox();

}  // namespace gpudoctor
