#include "parsers/gpu_sysfs.h"

#include "core/strings.h"

namespace gpudoctor {

std::optional<PciIds> ParsePciIds(std::string_view vendor, std::string_view device,
                                  std::string_view class_code) {
  auto v = ParseHex(Trim(vendor));
  auto d = ParseHex(Trim(device));
  auto c = ParseHex(Trim(class_code));
  if (!v || !d || !c || *v > 0xffff || *d > 0xffff || *c > 0xffffff) return std::nullopt;
  return PciIds{static_cast<uint32_t>(*v), static_cast<uint32_t>(*d), static_cast<uint32_t>(*c)};
}

bool IsNvidiaGpu(const PciIds& ids) {
  return ids.vendor == 0x10de && (ids.class_code >> 16) == 0x03;
}

bool IsNvidiaNvSwitch(const PciIds& ids) {
  return ids.vendor == 0x10de && (ids.class_code >> 8) == 0x0680;
}

std::string ParseModuleVersion(std::string_view text) {
  std::string_view t = Trim(text);
  if (t.empty() || t.size() > 64) return "";
  for (char c : t) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '.' || c == '-' || c == '_';
    if (!ok) return "";
  }
  return std::string(t);
}

std::optional<uint32_t> ParseStatusUid(std::string_view status) {
  for (std::string_view line : SplitLines(status)) {
    if (!StartsWith(line, "Uid:")) continue;
    auto fields = Split(line.substr(4), " \t");
    if (fields.empty()) return std::nullopt;
    auto uid = ParseUint64(fields[0]);
    if (!uid || *uid > 0xffffffffu) return std::nullopt;
    return static_cast<uint32_t>(*uid);
  }
  return std::nullopt;
}

std::string PasswdUserName(std::string_view passwd, uint32_t uid) {
  for (std::string_view line : SplitLines(passwd)) {
    auto f = Split(line, ":", /*skip_empty=*/false);
    if (f.size() < 3 || f[0].empty()) continue;
    auto u = ParseUint64(f[2]);
    if (u && *u == uid) return Sanitize(f[0], 64);
  }
  return "";
}

}  // namespace gpudoctor
