// ThresholdOverrides: the per-finding numbers, on/off switches and actions the config file sets
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
  // The site's action for finding `id` (an action name, validated by the config loader).
  void SetAction(std::string_view id, std::string action) {
    actions_[std::string(id)] = std::move(action);
  }

  // The configured value, nullopt when the config leaves the catalogue's default.
  std::optional<double> Find(std::string_view id, std::string_view key) const {
    if (overrides_.empty()) return std::nullopt;
    auto it = overrides_.find(std::make_pair(id, key));  // no copy: rules ask every tick
    if (it == overrides_.end()) return std::nullopt;
    return it->second;
  }
  // Findings are on unless the config switched them off.
  bool Enabled(std::string_view id) const {
    auto it = enabled_.find(id);
    return it == enabled_.end() || it->second;
  }
  // The configured action name, nullopt when the catalogue's action stands.
  std::optional<std::string> ActionOverride(std::string_view id) const {
    auto it = actions_.find(id);
    if (it == actions_.end()) return std::nullopt;
    return it->second;
  }

 private:
  // Orders (id, key) pairs of std::string and of std::string_view alike, so lookups need no copy.
  struct PairLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::pair<std::string_view, std::string_view>(a.first, a.second) <
             std::pair<std::string_view, std::string_view>(b.first, b.second);
    }
  };
  std::map<std::pair<std::string, std::string>, double, PairLess> overrides_;
  std::map<std::string, bool, std::less<>> enabled_;
  std::map<std::string, std::string, std::less<>> actions_;
};

}  // namespace gpudoctor
