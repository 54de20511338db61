// Small helpers for building JSON sections from facts: a fact that is unknown is left out, never
// written as 0 or null. Header-only; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace gpudoctor {

template <typename T>
void PutIfKnown(nlohmann::ordered_json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

inline void PutIfNotEmpty(nlohmann::ordered_json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

}  // namespace gpudoctor
