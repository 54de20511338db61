#include "kmsg/xid_parser.h"

#include <array>

#include "core/strings.h"

namespace gpudoctor {
namespace {

// StartsWith, inline: the per-line parsers call it with constant prefixes many times a line.
inline bool HasPrefix(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

std::optional<uint32_t> Hex32(std::string_view s) {
  if (s.substr(0, 2) == "0x" || s.substr(0, 2) == "0X") s.remove_prefix(2);
  if (s.empty() || s.size() > 8) return std::nullopt;
  uint32_t v = 0;
  for (char c : s) {
    if (!IsHex(c)) return std::nullopt;
    v = v * 16 + static_cast<uint32_t>(IsDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

// Leading BDF-like token ("0000:2b:00.0") of s; returns its length or 0.
size_t PciTokenLength(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (IsHex(s[n]) || s[n] == ':' || s[n] == '.')) ++n;
  while (n > 0 && s[n - 1] == ':') --n;  // "0000:2b:00.0:" → without the separator
  return n;
}

// "Yes"/"No" after `key` (e.g. "RST: ") where key is not preceded by '-' when `plain`.
std::optional<bool> YesNoAfter(std::string_view text, std::string_view key, bool plain) {
  size_t pos = 0;
  while ((pos = text.find(key, pos)) != std::string_view::npos) {
    if (plain && pos > 0 && text[pos - 1] == '-') {
      pos += key.size();
      continue;
    }
    std::string_view v = text.substr(pos + key.size());
    if (v.substr(0, 3) == "Yes") return true;
    if (v.substr(0, 2) == "No") return false;
    return std::nullopt;
  }
  return std::nullopt;
}

// Splits s on spaces (runs of them count as one) into at most N fields without allocating;
// returns how many fields were found (at most N; more text after the last is ignored).
template <size_t N>
size_t SplitSpaces(std::string_view s, std::array<std::string_view, N>& out) {
  size_t n = 0, i = 0;
  while (n < N) {
    while (i < s.size() && s[i] == ' ') ++i;
    if (i >= s.size()) break;
    size_t j = s.find(' ', i);
    if (j == std::string_view::npos) j = s.size();
    out[n++] = s.substr(i, j - i);
    i = j;
  }
  return n;
}

// NVLink5 tail: "<UNIT> <Nonfatal|Fatal> <XC0|XC1> i<N> Link <NN> (0x<a> 0x<b>".
void ParseNvlinkTail(std::string_view text, XidLine& x) {
  std::array<std::string_view, 8> parts;
  const size_t count = SplitSpaces(text.substr(0, 160), parts);
  if (count < 7) return;
  std::string_view unit = parts[0];
  if (unit.empty()) return;
  for (char c : unit) {
    if (!((c >= 'A' && c <= 'Z') || c == '_' || c == '/' || IsDigit(c))) return;
  }
  if (parts[1] != "Fatal" && parts[1] != "Nonfatal") return;
  if (parts[2] != "XC0" && parts[2] != "XC1") return;
  if (parts[3].size() < 2 || parts[3][0] != 'i') return;
  if (parts[4] != "Link") return;
  std::string_view link = parts[5];
  bool neg = !link.empty() && link[0] == '-';
  auto link_num = ParseBoundedDecimal(neg ? link.substr(1) : link, 4);
  if (!link_num) return;
  x.nvlink_unit = unit;
  x.nvlink_fatal = parts[1] == "Fatal";
  x.nvlink_link = static_cast<int>(neg ? -*link_num : *link_num);
  std::string_view a = parts[6];
  if (!a.empty() && a[0] == '(') a.remove_prefix(1);
  x.nvlink_intrinfo = Hex32(a);
  if (count > 7) {
    std::string_view b = parts[7];
    while (!b.empty() && (b.back() == ')' || b.back() == ',')) b.remove_suffix(1);
    x.nvlink_errstatus = Hex32(b);
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// The kernel's "PCI:DDDD:BB:DD" read directly (device at most 0x1f), every other spelling
// through ParsePciTuple: the same answer, without the general parser on every storm line.
std::optional<PciTuple> ParseXidPci(std::string_view t) {
  if (t.size() == 14 && HasPrefix(t, "PCI:") && t[8] == ':' && t[11] == ':') {
    int h[8];
    const size_t at[8] = {4, 5, 6, 7, 9, 10, 12, 13};
    bool ok = true;
    for (int i = 0; i < 8; ++i) ok = ok && (h[i] = HexValue(t[at[i]])) >= 0;
    if (ok) {
      PciTuple p;
      p.domain = static_cast<uint32_t>((h[0] << 12) | (h[1] << 8) | (h[2] << 4) | h[3]);
      p.bus = static_cast<uint32_t>((h[4] << 4) | h[5]);
      p.device = static_cast<uint32_t>((h[6] << 4) | h[7]);
      p.function = 0;
      if (p.device <= 0x1f) return p;
    }
  }
  return ParsePciTuple(t);
}

// body = text after "Xid (".
bool ParseXid(std::string_view body, XidLine& x) {
  size_t close = body.find(')');
  if (close == std::string_view::npos || close > 64) return false;
  // "PCI:0000:2b:00", then "GPU-I:N" / "GPU-CI:N" fields (MIG); split without allocating.
  std::string_view fields = body.substr(0, close);
  bool first = true;
  for (size_t i = 0; i < fields.size();) {
    if (fields[i] == ' ') {
      ++i;
      continue;
    }
    size_t j = fields.find(' ', i);
    if (j == std::string_view::npos) j = fields.size();
    std::string_view t = fields.substr(i, j - i);
    i = j;
    if (first) {
      auto pci = ParseXidPci(t);
      if (!pci) return false;
      x.pci = *pci;
      first = false;
    } else if (HasPrefix(t, "GPU-I:")) {
      auto v = ParseBoundedDecimal(t.substr(6), 3);
      if (!v) return false;
      x.gpu_instance = static_cast<int>(*v);
    } else if (HasPrefix(t, "GPU-CI:")) {
      auto v = ParseBoundedDecimal(t.substr(7), 3);
      if (!v) return false;
      x.compute_instance = static_cast<int>(*v);
    } else {
      return false;
    }
  }
  if (first) return false;
  std::string_view rest = body.substr(close + 1);
  if (!HasPrefix(rest, ": ")) return false;
  rest.remove_prefix(2);
  size_t n = 0;
  while (n < rest.size() && IsDigit(rest[n])) ++n;
  auto code = ParseBoundedDecimal(rest.substr(0, n), 5);
  if (!code || *code < 1 || *code > 9999) return false;
  x.xid = static_cast<int>(*code);
  rest.remove_prefix(n);
  if (rest.empty()) return true;
  if (rest[0] != ',') return false;
  rest.remove_prefix(1);
  if (HasPrefix(rest, " ")) rest.remove_prefix(1);
  if (HasPrefix(rest, "pid=")) {
    rest.remove_prefix(4);
    size_t comma = rest.find(',');
    std::string_view pid = rest.substr(0, comma);
    // An odd pid ("-1", "'<none>'", cut or garbled) leaves the pid unknown; the Xid still counts.
    if (auto v = ParseBoundedDecimal(pid, 10); v && *v <= 0x7fffffff) x.pid = *v;
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    if (HasPrefix(rest, " ")) rest.remove_prefix(1);
    if (HasPrefix(rest, "name=")) {
      rest.remove_prefix(5);
      size_t sep = rest.find(", ");
      std::string_view name = rest.substr(0, sep);
      if (name.size() > 64) return false;
      if (name != "<unknown>") x.process = name;
      rest = sep == std::string_view::npos ? "" : rest.substr(sep + 2);
    }
  }
  x.text = rest;
  if (rest.find("RST: ") != std::string_view::npos) {  // both keys end so: one search for most
    x.drain_reset_required = YesNoAfter(rest, "D-RST: ", false);
    x.reset_required = YesNoAfter(rest, "RST: ", true);
  }
  if (x.xid >= 144 && x.xid <= 150) ParseNvlinkTail(rest, x);
  if (x.xid == 154) {
    if (size_t to = rest.find(" to 0x"); to != std::string_view::npos) {
      std::string_view t = rest.substr(to + 4);
      size_t open = t.find(" ("), close = t.find(')');
      if (open != t.npos && close != t.npos && close > open + 2 && close - open < 64) {
        x.recovery_action = t.substr(open + 2, close - open - 2);
      }
    }
  }
  return true;
}

bool ValidUuid(std::string_view u) {
  if (!(HasPrefix(u, "GPU-") || HasPrefix(u, "MIG-")) || u.size() < 8 || u.size() > 64) {
    return false;
  }
  for (char c : u.substr(4)) {
    if (!(IsHex(c) || c == '-')) return false;
  }
  return true;
}

// "GPU0 ..." / "GPU 0000:3b:00.0: ..." → subject and pci.
void GpuSubject(std::string_view body, NvrmLine& out) {
  if (HasPrefix(body, "GPU ")) {
    std::string_view t = body.substr(4);
    size_t n = PciTokenLength(t);
    if (auto pci = ParsePciTuple(t.substr(0, n)); pci && n < t.size() && t[n] == ':') {
      out.pci = pci;
      out.subject = t.substr(0, n);
      return;
    }
  }
  if (HasPrefix(body, "GPU") && body.size() > 3 && IsDigit(body[3])) {
    size_t n = 3;
    while (n < body.size() && n < 8 && IsDigit(body[n])) ++n;
    out.subject = body.substr(0, n);
  }
}

}  // namespace

NvrmLine ParseNvrmLine(std::string_view message) {
  NvrmLine out;
  if (!HasPrefix(message, "NVRM: ")) return out;
  std::string_view body = message.substr(6);
  out.type = NvrmLineType::kOther;
  if (HasPrefix(body, "Xid (")) {
    out.type = ParseXid(body.substr(5), out.xid) ? NvrmLineType::kXid : NvrmLineType::kGarbled;
    return out;
  }
  if (HasPrefix(body, "API mismatch: ")) {
    out.type = NvrmLineType::kApiMismatch;
    out.subject = body.substr(14);
    return out;
  }
  if (HasPrefix(body, "GPU at ") && !HasPrefix(body, "GPU at PCI:")) {
    // Older drivers: "GPU at 0000:01:00.0 has fallen off the bus." (no Xid 79 line with it).
    std::string_view t = body.substr(7);
    size_t n = PciTokenLength(t);
    if (HasPrefix(t.substr(n), " has fallen off the bus")) {
      if (auto pci = ParsePciTuple(t.substr(0, n))) {
        out.type = NvrmLineType::kFallenOffBus;
        out.pci = pci;
        out.subject = t.substr(0, n);
      }
    }
    return out;
  }
  if (HasPrefix(body, "GPU at PCI:")) {
    std::string_view t = body.substr(11);
    size_t sep = t.find(": ");
    auto pci = ParsePciTuple(t.substr(0, sep));
    if (sep == std::string_view::npos || !pci) {
      out.type = NvrmLineType::kGarbled;
      return out;
    }
    std::string_view uuid = Trim(t.substr(sep + 2));
    if (!ValidUuid(uuid)) {
      out.type = NvrmLineType::kGarbled;
      return out;
    }
    out.type = NvrmLineType::kGpuAt;
    out.pci = pci;
    out.uuid = uuid;
    return out;
  }
  if (HasPrefix(body, "GPU Board Serial Number: ")) {
    std::string_view sn = Trim(body.substr(25));
    if (sn.empty() || sn.size() > 32) return out;
    for (char c : sn) {
      if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
            c == '-')) {
        out.type = NvrmLineType::kGarbled;
        return out;
      }
    }
    out.type = NvrmLineType::kBoardSerial;
    out.serial = sn;
    return out;
  }
  if (HasPrefix(body, "The NVIDIA GPU ")) {
    std::string_view t = body.substr(15);
    size_t n = PciTokenLength(t);
    if (auto pci = ParsePciTuple(t.substr(0, n))) {
      out.type = NvrmLineType::kTheNvidiaGpu;
      out.pci = pci;
      out.subject = t.substr(0, n);
    }
    return out;
  }
  if (HasPrefix(body, "(PCI ID: ") && body.find("installed in this system has") != body.npos) {
    out.type = NvrmLineType::kInstalledHas;
    return out;
  }
  if (HasPrefix(body, "fallen off the bus and is not responding")) {
    out.type = NvrmLineType::kFallenOffTail;
    return out;
  }
  if (body.find("GPU has fallen off the bus") != body.npos) {
    GpuSubject(body, out);
    out.type = out.pci ? NvrmLineType::kFallenOffBus : NvrmLineType::kOther;
    return out;
  }
  if (size_t pos = body.find("RmInitAdapter failed!"); pos != body.npos) {
    GpuSubject(body, out);
    std::string_view tail = body.substr(pos + 21);
    size_t open = tail.find('('), close = tail.find(')');
    if (open != tail.npos && close != tail.npos && close > open && close - open < 40) {
      out.code = tail.substr(open + 1, close - open - 1);
    }
    out.type = NvrmLineType::kInitFailed;
    return out;
  }
  if (body.find("GSP-CrashCat Report") != body.npos) {
    GpuSubject(body, out);
    out.type = NvrmLineType::kGspCrashCat;
    return out;
  }
  // An RM status check that failed with a status saying the GPU itself is gone or must be reset,
  // printed by drivers that may log no Xid for it (a DGX Station's GPU lost with only these
  // lines; GSP allocations failing with NV_ERR_RESET_REQUIRED until the GPU was reset).
  if (body.find("Assertion failed") != body.npos) {
    for (std::string_view status :
         {std::string_view("[NV_ERR_GPU_IS_LOST]"), std::string_view("[NV_ERR_RESET_REQUIRED]")}) {
      if (body.find(status) == body.npos) continue;
      GpuSubject(body, out);
      out.code = status.substr(1, status.size() - 2);
      out.type = NvrmLineType::kStatusAssert;
      return out;
    }
    return out;
  }
  // The RPC-timeout banner ("GPU6 _kgspLogRpcTimeout: **** GSP Timeout ****", r570+) is its own
  // report when the driver prints no Xid for it; the "_kgspLogXid119:" banner comes with an Xid
  // 119 line, which is counted instead.
  if (body.find("Timeout waiting for RPC from GSP") != body.npos ||
      body.find("Heartbeat timed out") != body.npos ||
      (body.find("_kgspLogRpcTimeout: ") != body.npos && body.find("GSP Timeout") != body.npos)) {
    GpuSubject(body, out);
    if (size_t p = body.find("Expected function "); p != body.npos) {
      std::string_view t = body.substr(p + 18);
      size_t open = t.find('('), close = t.find(')');
      if (open != t.npos && close != t.npos && close > open) {
        out.code = t.substr(open + 1, close - open - 1);
      }
    }
    out.type = NvrmLineType::kGspTimeout;
    return out;
  }
  return out;
}

}  // namespace gpudoctor
