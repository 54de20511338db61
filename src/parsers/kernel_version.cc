#include "parsers/kernel_version.h"

#include <cctype>

namespace gpudoctor {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// dpkg's order of one non-digit character; 0 for the end of the run.
int Order(char c) {
  if (IsDigit(c)) return 0;
  if (IsAlpha(c)) return c;
  if (c == '~') return -1;
  if (c != 0) return static_cast<unsigned char>(c) + 256;
  return 0;
}

}  // namespace

int CompareKernelVersions(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    int first_diff = 0;
    while ((i < a.size() && !IsDigit(a[i])) || (j < b.size() && !IsDigit(b[j]))) {
      int ac = i < a.size() ? Order(a[i]) : 0;
      int bc = j < b.size() ? Order(b[j]) : 0;
      if (ac != bc) return ac - bc;
      ++i;
      ++j;
    }
    while (i < a.size() && a[i] == '0') ++i;
    while (j < b.size() && b[j] == '0') ++j;
    while (i < a.size() && IsDigit(a[i]) && j < b.size() && IsDigit(b[j])) {
      if (first_diff == 0) first_diff = a[i] - b[j];
      ++i;
      ++j;
    }
    if (i < a.size() && IsDigit(a[i])) return 1;
    if (j < b.size() && IsDigit(b[j])) return -1;
    if (first_diff != 0) return first_diff;
  }
  return 0;
}

std::string KernelFlavour(std::string_view release) {
  // Debian/Ubuntu: everything from the first '-'-separated part that starts with a letter
  // ("6.1.0-27-cloud-amd64" -> "cloud-amd64", "6.1.0-27-rt-amd64" -> "rt-amd64").
  for (size_t dash = release.find('-'); dash != std::string_view::npos;
       dash = release.find('-', dash + 1)) {
    if (dash + 1 < release.size() && IsAlpha(release[dash + 1])) {
      return std::string(release.substr(dash + 1));
    }
  }
  size_t dot = release.rfind('.');
  if (dot != std::string_view::npos && dot + 1 < release.size() && IsAlpha(release[dot + 1])) {
    return std::string(release.substr(dot + 1));
  }
  return "";
}

}  // namespace gpudoctor
