// libFuzzer: a GET /api/v1/history answer as `top --connect` receives it: parsed and checked
// (tui/status_check.h ParseHistoryDocument), and when accepted drawn as sparklines under a GPU
// row (tui/top_model.h). Must not crash or hit undefined behaviour (huge or negative times and
// values, empty windows), and no drawn line may carry a control byte or exceed the width.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tui/status_check.h"
#include "tui/top_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto doc = nlohmann::json::parse(in.begin(), in.end(), nullptr, false);
  if (doc.is_discarded()) return 0;
  auto util = gpudoctor::ParseHistoryDocument(doc, "gpudoctor_gpu_utilization_ratio");
  auto temp = gpudoctor::ParseHistoryDocument(doc, "gpudoctor_gpu_temperature_celsius");
  if (!util.ok() && !temp.ok()) return 0;
  gpudoctor::TopHistory history;
  for (auto* parsed : {&util, &temp}) {
    if (!parsed->ok()) continue;
    for (auto& [gpu, points] : **parsed) {
      auto& series = parsed == &util ? history.gpus[gpu].util : history.gpus[gpu].temp;
      series = points;
      for (const auto& p : points) history.to_unix_s = std::max(history.to_unix_s, p.unix_s);
    }
  }
  history.from_unix_s = history.to_unix_s - gpudoctor::kHistoryWindowS;
  nlohmann::json status = {{"gpus", nlohmann::json::array()}};
  for (const auto& [gpu, h] : history.gpus) status["gpus"].push_back({{"index", gpu}});
  for (int width : {20, 80, 200}) {
    for (bool unicode : {true, false}) {
      gpudoctor::TopViewState st;
      st.width = width;
      st.unicode = unicode;
      st.history = history;
      for (const auto& line : gpudoctor::BuildTopLines(status, st)) {
        for (char c : line.text) {
          if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
        }
      }
    }
  }
  return 0;
}
