// Thresholds: the catalogue's defaults with the config file's overrides applied. Rules read every
// number they compare against from here, never from literals. Immutable once built; thread-safe
// for concurrent reads.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace gpudoctor {

class Thresholds {
 public:
  Thresholds() = default;  // catalogue defaults

  // Value of threshold `key` of finding `id`. Asking for a pair the catalogue does not define is
  // a bug: it aborts (tests exercise every rule).
  double Get(std::string_view id, std::string_view key) const;
  // Findings can be switched off in the config ([finding."ID"] enabled = false).
  bool Enabled(std::string_view id) const;

  void Set(std::string_view id, std::string_view key, double value);
  void SetEnabled(std::string_view id, bool enabled);

 private:
  std::map<std::pair<std::string, std::string>, double, std::less<>> overrides_;
  std::map<std::string, bool, std::less<>> enabled_;
};

}  // namespace gpudoctor
