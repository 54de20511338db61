// The Xid table as data (reference: shared/reference/xid.md §2-§3): for each code its catalog
// mnemonic, a short meaning, our class, severity and suggested action. Codes not in the table get
// severity warn and the action "look up the NVIDIA Xid catalog"; they are never dropped.
// Immutable static data; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "findings/finding.h"

namespace gpudoctor {

enum class XidClass {
  kApplication,
  kDriver,
  kHardwareMemory,
  kHardwareBus,  // PCIe / C2C
  kNvlink,
  kThermalPower,
  kFirmware,  // GSP / micro-controllers
  kUnknown,
};
// info = record only; warn = count/trend; critical = drain soon; fatal = GPU/node unusable now.
enum class XidSeverity { kInfo, kWarn, kCritical, kFatal };

const char* XidClassName(XidClass c);        // "application", "hardware-memory", ...
const char* XidSeverityName(XidSeverity s);  // "info", "warn", "critical", "fatal"

struct XidInfo {
  int code = 0;
  std::string_view mnemonic;  // catalog name, "" when unknown
  std::string_view meaning;
  XidClass xid_class = XidClass::kUnknown;
  XidSeverity severity = XidSeverity::kWarn;
  std::string_view action;  // advice text
  bool known = false;
  // NVIDIA catalog immediate-resolution bucket ("RESTART_APP", "RESET_GPU", ...; "" unknown) and
  // the Action it maps to before the line's own detail is read (see xid_action.h).
  std::string_view bucket;
  Action resolution = Action::kWatch;
};

// Entry for `code`; an unknown code returns known=false, severity warn, action watch and a
// "look up" advice.
XidInfo LookupXid(int code);

// Human-readable entry for `gpudoctor explain xid N` (several lines, ends with '\n').
std::string ExplainXid(int code);

}  // namespace gpudoctor
