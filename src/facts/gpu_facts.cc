#include "facts/gpu_facts.h"

#include <cctype>

namespace gpudoctor {

std::string SerialOrEmpty(std::string_view raw) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0'; };
  while (!raw.empty() && space(raw.front())) raw.remove_prefix(1);
  while (!raw.empty() && space(raw.back())) raw.remove_suffix(1);
  if (raw.empty()) return "";
  std::string lower;
  for (char c : raw) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view p :
       {"n/a", "[n/a]", "na", "not available", "[not available]", "unknown", "none", "null",
        "(null)", "not supported", "[not supported]", "default string", "to be filled by o.e.m."}) {
    if (lower == p) return "";
  }
  bool zeros = true;
  for (char c : raw) zeros = zeros && (c == '0' || c == '-' || c == ' ');
  if (zeros) return "";
  return std::string(raw);
}

const char* NvmlStateName(NvmlState s) {
  switch (s) {
    case NvmlState::kNotRun:
      return "not_run";
    case NvmlState::kLibraryMissing:
      return "library_missing";
    case NvmlState::kSymbolMissing:
      return "symbol_missing";
    case NvmlState::kInitFailed:
      return "init_failed";
    case NvmlState::kInitHung:
      return "init_hung";
    case NvmlState::kInitUnfinished:
      return "init_unfinished";
    case NvmlState::kOk:
      return "ok";
  }
  return "unknown";
}

std::string GpuIdentityKey(const GpuFacts& g) {
  if (std::string serial = SerialOrEmpty(g.serial); !serial.empty()) return serial;
  if (!g.uuid.empty()) return g.uuid;
  if (!g.pci_bus_id.empty()) return g.pci_bus_id;
  return "index:" + std::to_string(g.index);
}

}  // namespace gpudoctor
