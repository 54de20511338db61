// Known point releases of NVIDIA data-center driver branches: a dated data table compiled into
// gpudoctor (driver_releases.cc, "as of" kDriverReleasesAsOf), beside the branch table
// (driver_branches.h). The driver.release.old rule reports a running driver older than a known
// release of its own branch. Every row cites where it was read; a newer release than the table
// knows may exist (the finding says the table's date). Immutable static data; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace gpudoctor {

struct DriverRelease {
  std::string_view version;   // "580.167.08"
  std::string_view released;  // "2025-04-17" (Linux release date); "" when the source gives none
  std::string_view source;    // URL the row was read from
};

inline constexpr std::string_view kDriverReleasesAsOf = "2026-06";

std::span<const DriverRelease> DriverReleases();

// Dotted numeric order of driver versions ("580.82.07" < "580.167.08"): <0, 0, >0. A part that
// is not a number compares as 0.
int CompareDriverVersions(std::string_view a, std::string_view b);

// The newest release the table lists for `version`'s branch that is newer than `version`;
// nullopt when there is none (or the branch is not in the table).
std::optional<DriverRelease> NewerReleaseInBranch(std::string_view version);

}  // namespace gpudoctor
