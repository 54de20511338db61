// driver.release.old (below): an older point release than driver_releases.cc knows.
// driver.branch.eol: the running driver's branch (rules/driver_branches.h) past its end of
// life → warn; within info_days_before_eol of it → info; a branch the table does not list, or
// one without a published date, → nothing. The version is NVML's, else the loaded kernel
// module's (/sys/module/nvidia/version) when NVML could not be used.
#include <string>

#include "rules/driver_branches.h"
#include "rules/driver_releases.h"
#include "rules/upkeep_rules.h"

namespace gpudoctor {

void DriverBranchRules(const DriverFacts& driver, std::chrono::system_clock::time_point now,
                       const Thresholds& t, std::vector<Finding>& out) {
  const std::string& version =
      driver.driver_version.empty() ? driver.kernel_module_version : driver.driver_version;
  if (version.empty() || now.time_since_epoch().count() <= 0) return;
  std::optional<int> branch = DriverBranchOf(version);
  if (!branch) return;
  std::optional<DriverBranch> b = FindDriverBranch(*branch);
  if (!b) return;
  std::optional<int64_t> eol = EndOfLifeUnixS(*b);
  if (!eol) return;
  const char* id = "driver.branch.eol";
  int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  double days_left = static_cast<double>(*eol - now_s) / 86400.0;
  std::string name = "R" + std::to_string(*branch) + " (" + BranchTypeName(b->type) + ")";
  Finding f;
  if (days_left <= 0) {
    f = MakeFinding(id, Severity::kWarn,
                    "driver " + version + " is branch " + name +
                        ", at end of life: no security fixes since " + EndOfLifeText(*b));
  } else if (days_left <= t.Get(id, "info_days_before_eol")) {
    f = MakeFinding(id, Severity::kInfo,
                    "driver " + version + " is branch " + name +
                        ", supported only until the end of " + EndOfLifeText(*b));
  } else {
    return;
  }
  f.Add("driver_version", version).Add("branch", "R" + std::to_string(*branch));
  f.Add("branch_type", BranchTypeName(b->type)).Add("end_of_life", EndOfLifeText(*b));
  f.Add("days_to_end_of_life", static_cast<int64_t>(days_left >= 0 ? days_left : days_left - 1));
  f.Add("table_as_of", std::string(kDriverBranchesAsOf));
  out.push_back(std::move(f));
}

}  // namespace gpudoctor

namespace gpudoctor {

void DriverReleaseRules(const DriverFacts& driver, std::chrono::system_clock::time_point now,
                        std::vector<Finding>& out) {
  const std::string& version =
      driver.driver_version.empty() ? driver.kernel_module_version : driver.driver_version;
  if (version.empty()) return;
  std::optional<int> branch = DriverBranchOf(version);
  if (!branch) return;
  // Only inside a supported branch: past its end of life, driver.branch.eol says more.
  if (std::optional<DriverBranch> b = FindDriverBranch(*branch)) {
    std::optional<int64_t> eol = EndOfLifeUnixS(*b);
    int64_t now_s =
        std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    if (eol && now_s > 0 && now_s >= *eol) return;
  }
  std::optional<DriverRelease> newer = NewerReleaseInBranch(version);
  if (!newer) return;
  std::string when =
      newer->released.empty() ? "" : " (released " + std::string(newer->released) + ")";
  Finding f = MakeFinding("driver.release.old", Severity::kInfo,
                          "driver " + version + " is an older point release of R" +
                              std::to_string(*branch) + ": " + std::string(newer->version) + when +
                              " is known (release table as of " + std::string(kDriverReleasesAsOf) +
                              "; a newer one may exist)");
  f.Add("driver_version", version).Add("branch", "R" + std::to_string(*branch));
  f.Add("newer_known_release", std::string(newer->version));
  if (!newer->released.empty()) f.Add("newer_release_date", std::string(newer->released));
  f.Add("source", std::string(newer->source));
  f.Add("table_as_of", std::string(kDriverReleasesAsOf));
  out.push_back(std::move(f));
}

}  // namespace gpudoctor
