// Kernel release strings ("6.1.0-27-amd64", "5.15.0-125-generic", "5.14.0-427.13.1.el9_4.x86_64")
// compared the way dpkg and `sort -V` order them, and grouped by flavour so that a lowlatency or
// cloud kernel installed beside the generic one does not count as "newer". Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace gpudoctor {

// dpkg's verrevcmp on the whole string: runs of digits compare numerically (27 > 9), other runs
// character by character with letters before non-letters and '~' before everything (even the
// end). <0, 0, >0 like strcmp.
int CompareKernelVersions(std::string_view a, std::string_view b);

// The flavour: the last '-' field when it starts with a letter ("amd64", "generic", "aws"),
// else the text after the last '.' ("x86_64", "aarch64"); "" when neither exists.
std::string KernelFlavour(std::string_view release);

}  // namespace gpudoctor
