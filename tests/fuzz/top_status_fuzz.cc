// libFuzzer: a status document as `top --connect` receives it from a server: parsed, checked
// (tui/status_check.h), and when accepted drawn (tui/top_model.h) and text-escaped. Must not
// crash or hit undefined behaviour (UBSan: float-to-int of huge numbers), and no drawn line
// may carry a control byte.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/strings.h"
#include "core/terminal_text.h"
#include "tui/status_check.h"
#include "tui/top_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (char c : gpudoctor::TerminalSafe(in)) {
    if ((static_cast<unsigned char>(c) < 0x20 || c == 0x7f)) std::abort();
  }
  auto doc = nlohmann::json::parse(in.begin(), in.end(), nullptr, false);
  if (doc.is_discarded()) return 0;
  if (!gpudoctor::CheckStatusDocument(doc).ok()) return 0;
  for (bool detail : {false, true}) {
    gpudoctor::TopViewState st;
    st.width = 60;
    st.findings_detail = detail;
    for (const auto& line : gpudoctor::BuildTopLines(doc, st)) {
      for (char c : line.text) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
      }
    }
  }
  return 0;
}
