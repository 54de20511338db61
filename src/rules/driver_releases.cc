// Data: known point releases of NVIDIA data-center driver branches, as of 2026-06.
//
// Update: add one row per release, with its Linux release date when the source gives one and the
// URL it was read from; keep old rows (they tell an old release from an unknown one). Order does
// not matter. Bump kDriverReleasesAsOf (driver_releases.h) to the date the table was checked.
#include "rules/driver_releases.h"

#include <array>

#include "core/strings.h"
#include "rules/driver_branches.h"

namespace gpudoctor {
namespace {

constexpr std::string_view kR570_133_20 =
    "https://docs.nvidia.com/datacenter/tesla/tesla-release-notes-570-133-20/index.html";
constexpr std::string_view kAiInfraBranches =
    "https://ai-infrastructure.net/driver-versions-branches/ (as of 2026-06)";

constexpr std::array kReleases = {
    DriverRelease{"570.133.20", "2025-04-17", kR570_133_20},
    DriverRelease{"580.82.07", "", kAiInfraBranches},
    DriverRelease{"580.167.08", "", kAiInfraBranches},
};

}  // namespace

std::span<const DriverRelease> DriverReleases() { return kReleases; }

int CompareDriverVersions(std::string_view a, std::string_view b) {
  std::vector<std::string_view> x = Split(a, "."), y = Split(b, ".");
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    int64_t u = i < x.size() ? ParseBoundedDecimal(x[i], 9).value_or(0) : 0;
    int64_t v = i < y.size() ? ParseBoundedDecimal(y[i], 9).value_or(0) : 0;
    if (u != v) return u < v ? -1 : 1;
  }
  return 0;
}

std::optional<DriverRelease> NewerReleaseInBranch(std::string_view version) {
  std::optional<int> branch = DriverBranchOf(version);
  if (!branch) return std::nullopt;
  std::optional<DriverRelease> best;
  for (const DriverRelease& r : kReleases) {
    if (DriverBranchOf(r.version) != branch || CompareDriverVersions(r.version, version) <= 0) {
      continue;
    }
    if (!best || CompareDriverVersions(r.version, best->version) > 0) best = r;
  }
  return best;
}

}  // namespace gpudoctor
