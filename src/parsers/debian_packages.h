// Debian package-manager state as text: dpkg's status file, apt's Packages lists and the Release
// (or InRelease) file of a suite, and Debian version ordering. Pure parsers of outside input
// (a fuzz target covers them): malformed stanzas are skipped, never an error; field values are
// sanitised and bounded. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

// dpkg's ordering (deb-version(7)): epoch, then upstream version, then Debian revision, each
// compared with '~' before everything (even the end), letters before other characters.
// <0: a older than b, 0: equal, >0: a newer.
int CompareDebianVersions(std::string_view a, std::string_view b);

struct DebPackage {
  std::string name;     // "openssl"
  std::string arch;     // "amd64", "all"; empty when the stanza has none
  std::string version;  // "3.0.15-1~deb12u1"
};

// Packages whose Status is "install ok installed" (dpkg status); other states are skipped.
std::vector<DebPackage> ParseDpkgStatus(std::string_view text);
// Every stanza with Package and Version (an apt Packages list).
std::vector<DebPackage> ParsePackagesList(std::string_view text);

// The same parse, fed one line at a time (a file streamed through ForEachFileLine instead of read
// whole): Line() returns the package a blank line closed, Finish() the one the text's end closed.
// Feeding the lines of SplitLines(text) and then Finish() gives exactly ParseDpkgStatus(text)
// (installed_only) or ParsePackagesList(text). Not thread-safe (one stream per object).
class DebPackageStream {
 public:
  explicit DebPackageStream(bool installed_only) : installed_only_(installed_only) {}
  // A returned package is moved out; its fields are empty afterwards.
  DebPackage* Line(std::string_view line);
  DebPackage* Finish();

 private:
  DebPackage* End();
  bool installed_only_;
  bool open_ = false;
  bool installed_ = false;
  DebPackage cur_, done_;
};

struct ReleaseInfo {
  std::string suite;                   // "bookworm-security"
  std::string codename;                // "bookworm-security" (Debian), "jammy" (Ubuntu)
  std::optional<int64_t> date_unix_s;  // Date: the archive generated this index
};
// Fields of a Release / InRelease file (a PGP-signed InRelease is read through its signature).
ReleaseInfo ParseRelease(std::string_view text);

// RFC 2822 date as Release files write it: "Sat, 05 Dec 2026 10:00:00 UTC" (also "+0000", no
// weekday); four-digit years from 1970. nullopt when it does not parse.
std::optional<int64_t> ParseRfc2822Date(std::string_view s);

}  // namespace gpudoctor
