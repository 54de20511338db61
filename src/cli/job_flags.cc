// Flags of the job commands: `why` (--job, --at), `mark step` (--job, --seconds, --step) and
// `history --job`. Values go to CliOptions::values, validated here.
#include <ctime>

#include "cli/cli_options.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "job/step_inbox.h"

namespace gpudoctor {

std::vector<FlagSpec> WithJobFlags(std::vector<FlagSpec> flags) {
  std::vector<FlagSpec> mine = {
      {"--job", "NAME",
       "why, mark, history: the [[job]] (why/history: as stored; mark: the daemon's job name)",
       [](std::string_view v, CliOptions& o) {
         if (!ValidJobName(v)) {
           return InvalidArgument("expected a job name (1-64 of A-Z a-z 0-9 _ . -), got '" +
                                  Sanitize(v, 40) + "'");
         }
         o.values["--job"] = std::string(v);
         return Status::Ok();
       }},
      {"--at", "TIME", "why: the onset of the slowdown, instead of finding it (time grammar)",
       [](std::string_view v, CliOptions& o) {
         if (!ParseTimeSpec(v, static_cast<int64_t>(std::time(nullptr)))) {
           return InvalidArgument("expected " + TimeSpecExpectation() + ", got '" +
                                  Sanitize(v, 40) + "'");
         }
         o.values["--at"] = std::string(v);
         return Status::Ok();
       }},
      {"--seconds", "S",
       "mark step: the step's own duration in seconds (else: since the last mark)",
       [](std::string_view v, CliOptions& o) {
         if (!ParseStepMarkQuery("seconds=" + std::string(v)).ok()) {
           return InvalidArgument("expected seconds in (0, 1e7), got '" + Sanitize(v, 40) + "'");
         }
         o.values["--seconds"] = std::string(v);
         return Status::Ok();
       }},
      {"--step", "N", "mark step: the loop's step counter",
       [](std::string_view v, CliOptions& o) {
         if (!ParseStepMarkQuery("step=" + std::string(v)).ok()) {
           return InvalidArgument("expected a non-negative step number, got '" + Sanitize(v, 40) +
                                  "'");
         }
         o.values["--step"] = std::string(v);
         return Status::Ok();
       }},
      // report bandwidth (report_command.cc).
      {"--nic", "NAME", "report bandwidth: only this NIC (as stored, e.g. eth0)",
       [](std::string_view v, CliOptions& o) {
         if (v.empty() || v.size() > 64 || v.find_first_of(",= /") != std::string_view::npos) {
           return InvalidArgument("expected a NIC name (e.g. eth0), got '" + Sanitize(v, 40) + "'");
         }
         o.values["--nic"] = std::string(v);
         return Status::Ok();
       }},
      {"--plan-mbps", "N",
       "report bandwidth: the plan in Mb/s (default: [network] plan_mbps_nics / plan_mbps, else "
       "the link speed)",
       [](std::string_view v, CliOptions& o) {
         std::optional<double> d = ParseDouble(v);
         if (!d || !(*d > 0) || *d > 1e7) {
           return InvalidArgument("expected Mb/s in (0, 1e7], got '" + Sanitize(v, 40) + "'");
         }
         o.values["--plan-mbps"] = std::string(v);
         return Status::Ok();
       }},
  };
  flags.insert(flags.end(), mine.begin(), mine.end());
  return flags;
}

}  // namespace gpudoctor
