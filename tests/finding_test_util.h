// Test helpers for looking into findings. Header-only, test code.
#pragma once

#include <optional>
#include <string_view>
#include <variant>

#include "findings/finding.h"

namespace gpudoctor::testing {

// The evidence item `name` of `f` when it holds a T; nullopt when absent or of another type.
template <typename T>
std::optional<T> EvidenceOf(const Finding& f, std::string_view name) {
  for (const auto& e : f.evidence) {
    if (e.name == name) {
      if (const T* v = std::get_if<T>(&e.value)) return *v;
    }
  }
  return std::nullopt;
}

}  // namespace gpudoctor::testing
