// Thresholds: the catalogue's defaults with the config file's overrides applied. Rules read every
// number they compare against from here, never from literals. Immutable once built; thread-safe
// for concurrent reads.
#pragma once

#include <string_view>

#include "core/threshold_overrides.h"

namespace gpudoctor {

class Thresholds : public ThresholdOverrides {
 public:
  Thresholds() = default;                          // catalogue defaults
  Thresholds(const ThresholdOverrides& overrides)  // NOLINT: implicit, Settings -> rules
      : ThresholdOverrides(overrides) {}

  // Value of threshold `key` of finding `id`. Asking for a pair the catalogue does not define is
  // a bug: it aborts (tests exercise every rule).
  double Get(std::string_view id, std::string_view key) const;
};

}  // namespace gpudoctor
