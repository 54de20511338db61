// ThresholdOverrides: the per-finding numbers and on/off switches the config file sets
// ([finding."ID"] key = value). Plain data with no knowledge of the catalogue: the rules' view
// (rules/thresholds.h) falls back to the catalogue's defaults for every pair not set here.
// Immutable once Settings are built; thread-safe for concurrent reads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpudoctor {

class ThresholdOverrides {
 public:
  void Set(std::string_view id, std::string_view key, double value) {
    overrides_[{std::string(id), std::string(key)}] = value;
  }
  void SetEnabled(std::string_view id, bool enabled) { enabled_[std::string(id)] = enabled; }

  // The configured value, nullopt when the config leaves the catalogue's default.
  std::optional<double> Find(std::string_view id, std::string_view key) const {
    auto it = overrides_.find(std::make_pair(std::string(id), std::string(key)));
    if (it == overrides_.end()) return std::nullopt;
    return it->second;
  }
  // Findings are on unless the config switched them off.
  bool Enabled(std::string_view id) const {
    auto it = enabled_.find(id);
    return it == enabled_.end() || it->second;
  }

 private:
  std::map<std::pair<std::string, std::string>, double, std::less<>> overrides_;
  std::map<std::string, bool, std::less<>> enabled_;
};

}  // namespace gpudoctor
