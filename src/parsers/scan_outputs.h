// Parsers for the output of the tools `gpudoctor scan` runs. Pure; thread-safe.
//  - clamscan / clamdscan (--no-summary): one line per file, "PATH: OK", "PATH: SIGNATURE FOUND",
//    "PATH: REASON ERROR" (ClamAV clamscan/manager.c and clamdscan/client.c print
//    "%s: %s FOUND", "%s: OK"; a summary block starts with "----------- SCAN SUMMARY").
//  - dpkg --verify (--verify-format rpm, the default and only format): one line per path that
//    failed a check: 9 check characters ("??5??????": '5' third = content changed) or "missing  ",
//    a space, an attribute character ('c' for a conffile, else ' '), a space and the path, with
//    " (errno text)" after it for a missing file (dpkg src/main/verify.c, dpkg(1) --verify).
//  - debsums -s: only problems, on stderr: "debsums: changed file PATH (from PKG package)",
//    "debsums: missing file PATH (from PKG package)" (debsums(1), debsums source).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

struct ClamResult {
  std::string path;
  std::string signature;  // non-empty: FOUND
  bool error = false;     // "... ERROR": not scanned
  std::string error_text;
};

// Lines that are neither (summary, blank, "LibClamAV Warning") are skipped. Errors: parse_error
// naming the line for a result line without the "PATH: " prefix.
Result<std::vector<ClamResult>> ParseClamOutput(std::string_view text);

struct ChangedPackageFile {
  std::string path;
  bool missing = false;
  bool content_changed = false;  // the md5sum check failed ('5')
  bool conffile = false;
  std::string checks;  // the 9 check characters, or "missing"
};

// Errors: parse_error naming the line for a line that does not have the format above.
Result<std::vector<ChangedPackageFile>> ParseDpkgVerify(std::string_view text);
// debsums -s output (stderr): "changed file" / "missing file" lines; other lines are skipped.
std::vector<ChangedPackageFile> ParseDebsums(std::string_view text);

}  // namespace gpudoctor
