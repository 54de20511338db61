// Data: NVIDIA data-center driver branches, as of 2026-12.
//
// Source: NVIDIA Data Center Drivers, "Supported Drivers and CUDA Toolkit Versions"
// (https://docs.nvidia.com/datacenter/tesla/drivers/, editions 615 and 620, last updated
// 2026-09; and the 2021 "NVIDIA CUDA Drivers Support" RN-08625-001 PDF for R418-R460), found
// with the search tool on 2026-12-03. Rows marked [memory] were listed on earlier editions of
// the same page and could not be re-read this time: re-check them when the table is next
// updated. New feature branches "are short-lived and do not have an end-of-life date" (NVIDIA),
// so they carry none here and are never judged, except R440 and R610 whose dates NVIDIA printed.
//
// Update: add the new branches from the page's table; keep old rows (fleets run them).
#include "rules/driver_branches.h"

#include <array>

#include "core/civil_time.h"
#include "core/strings.h"

namespace gpudoctor {
namespace {

constexpr BranchType L = BranchType::kLongTermSupport;
constexpr BranchType P = BranchType::kProduction;
constexpr BranchType N = BranchType::kNewFeature;

constexpr std::array kBranches = {
    DriverBranch{418, L, 2022, 3},  // RN-08625-001
    DriverBranch{440, N, 2020, 11}, DriverBranch{450, L, 2023, 7},
    DriverBranch{460, P, 2022, 1},  DriverBranch{470, L, 2024, 7},  // [memory]
    DriverBranch{525, P, 2023, 11},                                 // [memory]
    DriverBranch{535, L, 2026, 6},                                  // edition 615
    DriverBranch{550, P, 2025, 2},                                  // [memory]
    DriverBranch{555, N, 0, 0},     DriverBranch{560, N, 0, 0},
    DriverBranch{565, N, 0, 0},     DriverBranch{570, P, 2026, 2},  // [memory]
    DriverBranch{575, N, 0, 0},     DriverBranch{580, L, 2028, 6},  // editions 615, 620
    DriverBranch{590, N, 0, 0},     DriverBranch{595, P, 2027, 3},  // editions 615, 620
    DriverBranch{610, N, 2026, 8},                                  // edition 615
    DriverBranch{620, L, 2029, 9},                                  // edition 620
};

}  // namespace

const char* BranchTypeName(BranchType t) {
  switch (t) {
    case BranchType::kLongTermSupport:
      return "LTSB";
    case BranchType::kProduction:
      return "production";
    case BranchType::kNewFeature:
      return "new feature";
  }
  return "?";
}

std::optional<DriverBranch> FindDriverBranch(int branch) {
  for (const DriverBranch& b : kBranches) {
    if (b.branch == branch) return b;
  }
  return std::nullopt;
}

std::optional<int> DriverBranchOf(std::string_view driver_version) {
  std::string_view head = driver_version.substr(0, driver_version.find('.'));
  if (head.size() < 3 || head.size() > 4) return std::nullopt;
  auto v = ParseBoundedDecimal(head, 4);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<int64_t> EndOfLifeUnixS(const DriverBranch& b) {
  if (b.eol_month < 1 || b.eol_month > 12) return std::nullopt;
  int year = b.eol_month == 12 ? b.eol_year + 1 : b.eol_year;
  unsigned month = b.eol_month == 12 ? 1u : static_cast<unsigned>(b.eol_month + 1);
  return DaysFromCivil(year, month, 1) * 86400;
}

std::string EndOfLifeText(const DriverBranch& b) {
  static constexpr const char* kMonths[] = {"January",   "February", "March",    "April",
                                            "May",       "June",     "July",     "August",
                                            "September", "October",  "November", "December"};
  if (b.eol_month < 1 || b.eol_month > 12) return "none published";
  return std::string(kMonths[b.eol_month - 1]) + " " + std::to_string(b.eol_year);
}

}  // namespace gpudoctor
