// NVIDIA data-center driver branches and their end of life: a data table compiled into
// gpudoctor (driver_branches.cc, "as of" kDriverBranchesAsOf). The driver.branch.eol rule maps
// the running driver version to its branch here; a branch the table does not list is never
// judged. Immutable static data; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

enum class BranchType { kLongTermSupport, kProduction, kNewFeature };
const char* BranchTypeName(BranchType t);  // "LTSB", "production", "new feature"

struct DriverBranch {
  int branch;  // 535 for R535
  BranchType type;
  int eol_year;   // NVIDIA publishes the end of life as a month: supported through its end;
  int eol_month;  // 0: no published end of life (new feature branches)
};

inline constexpr std::string_view kDriverBranchesAsOf = "2026-12";

// The table's entry for a branch; nullopt when it is not listed.
std::optional<DriverBranch> FindDriverBranch(int branch);

// The branch of a driver version: "550.54.15" → 550; nullopt when it does not start with a
// number of 3 or 4 digits.
std::optional<int> DriverBranchOf(std::string_view driver_version);

// First instant after support ends (the first day of the month after eol_month, 00:00 UTC), in
// Unix seconds; nullopt without an end-of-life date.
std::optional<int64_t> EndOfLifeUnixS(const DriverBranch& b);
// "June 2026".
std::string EndOfLifeText(const DriverBranch& b);

}  // namespace gpudoctor
