// Fuzzes the parsers of issue 25's outside input: dpkg status / apt Packages / Release files and
// Debian version order, `dnf updateinfo` lines, /proc/PID/maps library paths, gettext .mo data
// and the [backup] command's time. Any input must parse or be refused cleanly; what parses must
// be consistent (version order antisymmetric, parsed dates sane, CUDA majors positive).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/i18n.h"
#include "parsers/debian_packages.h"
#include "probes/cuda_runtime_scan.h"
#include "probes/probe_entry_points.h"
#include "probes/updates_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto pkgs = ParsePackagesList(text);
  for (const DebPackage& p : pkgs) {
    if (p.name.empty() || p.version.empty()) __builtin_trap();
  }
  ParseDpkgStatus(text);
  ReleaseInfo r = ParseRelease(text);
  // Years are four digits from 1970 (ParseRfc2822Date): never before the epoch, never past 9999.
  if (r.date_unix_s && (*r.date_unix_s < -86400 || *r.date_unix_s > 253402387200LL)) {
    __builtin_trap();
  }
  size_t cut = size / 2;
  std::string_view a = text.substr(0, cut), b = text.substr(cut);
  int ab = CompareDebianVersions(a, b), ba = CompareDebianVersions(b, a);
  if ((ab < 0) != (ba > 0) || (ab == 0) != (ba == 0)) __builtin_trap();
  if (CompareDebianVersions(a, a) != 0) __builtin_trap();
  UpdateFacts u;
  ParseDnfSecurityList(text, u);
  if (u.pending.size() > kMaxPendingListed ||
      u.pending_count < static_cast<int>(u.pending.size())) {
    __builtin_trap();
  }
  CudaRuntimeSeen c = ParseCudaRuntimeMaps(text);
  if (c.major && *c.major < 1) __builtin_trap();
  ParseMo(text);
  ParseBackupTime(text);
  return 0;
}
