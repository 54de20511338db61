// A measured value against a finding's warn/crit thresholds: the one grading of every rule.
// Pure; thread-safe.
#pragma once

#include <optional>

#include "findings/finding.h"

namespace gpudoctor {

// Severity for "higher is worse" against warn/crit thresholds; nullopt below warn.
inline std::optional<Severity> GradeHigh(double value, double warn, double crit) {
  if (value >= crit) return Severity::kCrit;
  if (value >= warn) return Severity::kWarn;
  return std::nullopt;
}

// Severity for "lower is worse": at or below crit is crit, at or below warn is warn.
inline std::optional<Severity> GradeLow(double value, double warn, double crit) {
  if (value <= crit) return Severity::kCrit;
  if (value <= warn) return Severity::kWarn;
  return std::nullopt;
}

}  // namespace gpudoctor
