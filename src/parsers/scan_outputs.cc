#include "parsers/scan_outputs.h"

#include "core/strings.h"

namespace gpudoctor {

Result<std::vector<ClamResult>> ParseClamOutput(std::string_view text) {
  std::vector<ClamResult> out;
  int line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    if (StartsWith(line, "----------- SCAN SUMMARY")) break;
    std::string_view t = Trim(line);
    if (t.empty() || StartsWith(t, "LibClamAV ") || StartsWith(t, "WARNING:")) continue;
    enum { kOk, kFound, kError, kOther } kind = kOther;
    if (EndsWith(t, ": OK")) kind = kOk;
    if (EndsWith(t, " FOUND")) kind = kFound;
    if (EndsWith(t, " ERROR")) kind = kError;
    if (kind == kOther) continue;
    // The path may hold ": " itself: the result is after the last ": ".
    size_t sep = t.rfind(": ");
    if (sep == std::string_view::npos || sep == 0) {
      return ParseError("clamscan output line " + std::to_string(line_no) +
                        ": no 'PATH: ' before the result");
    }
    ClamResult r;
    r.path = Sanitize(t.substr(0, sep), 1024);
    std::string_view rest = t.substr(sep + 2);
    if (kind == kFound) {
      r.signature = Sanitize(Trim(rest.substr(0, rest.size() - 6)), 200);
      if (r.signature.empty()) {
        return ParseError("clamscan output line " + std::to_string(line_no) +
                          ": FOUND without a signature name");
      }
    } else if (kind == kError) {
      r.error = true;
      r.error_text = Sanitize(Trim(rest.substr(0, rest.size() - 6)), 200);
    }
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<ChangedPackageFile>> ParseDpkgVerify(std::string_view text) {
  std::vector<ChangedPackageFile> out;
  int line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    auto bad = [&](const char* why) {
      return ParseError("dpkg --verify output line " + std::to_string(line_no) + ": " + why +
                        " ('" + Sanitize(line.substr(0, 80), 80) + "')");
    };
    if (line.size() < 13 || line[9] != ' ' || line[11] != ' ') {
      return bad("expected 9 check characters, an attribute and a path");
    }
    ChangedPackageFile f;
    std::string_view checks = line.substr(0, 9);
    if (StartsWith(checks, "missing")) {
      f.missing = true;
      f.checks = "missing";
    } else {
      for (char c : checks) {
        if (c != '?' && c != '.' && !(c >= '0' && c <= '9') && !(c >= 'A' && c <= 'Z')) {
          return bad("unexpected check character");
        }
      }
      f.checks = std::string(checks);
      f.content_changed = checks[2] == '5';
    }
    if (line[10] != ' ' && line[10] != 'c') return bad("unknown attribute character");
    f.conffile = line[10] == 'c';
    std::string_view path = line.substr(12);
    // A missing file carries " (No such file or directory)" after the path.
    if (f.missing && EndsWith(path, ")")) {
      if (size_t open = path.rfind(" ("); open != std::string_view::npos) {
        path = path.substr(0, open);
      }
    }
    if (!StartsWith(path, "/")) return bad("path is not absolute");
    f.path = Sanitize(path, 1024);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<ChangedPackageFile> ParseDebsums(std::string_view text) {
  std::vector<ChangedPackageFile> out;
  for (std::string_view line : SplitLines(text)) {
    std::string_view t = Trim(line);
    if (StartsWith(t, "debsums: ")) t = t.substr(9);
    bool changed = StartsWith(t, "changed file ");
    bool missing = StartsWith(t, "missing file ");
    if (!changed && !missing) continue;
    std::string_view path = t.substr(13);
    if (size_t from = path.rfind(" (from "); from != std::string_view::npos) {
      path = path.substr(0, from);
    }
    if (!StartsWith(path, "/")) continue;
    ChangedPackageFile f;
    f.path = Sanitize(path, 1024);
    f.missing = missing;
    f.content_changed = changed;
    f.checks = changed ? "changed" : "missing";
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpudoctor
