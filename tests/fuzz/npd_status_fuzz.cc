// libFuzzer: a watch's status document as `check --npd --connect` receives it: parsed, checked
// (tui/status_check.h), read into findings (cli/npd_connect.h) and judged for every layer in
// both NPD forms. Must not crash or hit undefined behaviour, and every answer must keep NPD's
// contract: exit 0 or 1, one line without a newline, at most kNpdMessageMax bytes.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "cli/npd_connect.h"
#include "sched/npd.h"
#include "tui/status_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto doc = nlohmann::json::parse(in.begin(), in.end(), nullptr, false);
  if (doc.is_discarded()) return 0;
  if (!CheckStatusDocument(doc).ok()) return 0;
  auto findings = FindingsFromStatus(doc);
  if (!findings.ok()) return 0;
  for (std::optional<Layer> layer :
       {std::optional<Layer>(), std::optional<Layer>(Layer::kNetwork),
        std::optional<Layer>(Layer::kHardware), std::optional<Layer>(Layer::kSoftware),
        std::optional<Layer>(Layer::kResources)}) {
    for (const NpdOutcome& r :
         {NpdResult(*findings, layer, ""), NpdWarnings(*findings, layer, "")}) {
      if (r.exit_code != 0 && r.exit_code != 1) std::abort();
      if (r.message.empty() || r.message.size() > kNpdMessageMax) std::abort();
      if (r.message.find_first_of("\r\n") != std::string::npos) std::abort();
    }
  }
  return 0;
}
