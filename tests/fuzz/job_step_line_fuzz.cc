// Fuzzes the job-log step-line parsers (src/job/step_line.h) with every preset, and the step
// tracker behind them: a parsed step time is positive and finite, a tracker's current step time
// and baseline too. The first byte picks the preset; the rest is the line(s).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "job/step_line.h"
#include "job/step_tracker.h"

namespace {
void CheckSeconds(const std::optional<double>& s) {
  if (s && (!(*s > 0) || !std::isfinite(*s))) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  if (size == 0) return 0;
  static const StepPreset kPresets[] = {
      StepPreset::kAuto,      StepPreset::kTqdm, StepPreset::kLightning, StepPreset::kMegatron,
      StepPreset::kDeepSpeed, StepPreset::kStep, StepPreset::kRegex};
  StepPattern p;
  p.preset = kPresets[data[0] % 7];
  if (p.preset == StepPreset::kRegex) {
    static std::string why;
    static auto re = CompileStepRegex("t=([0-9.e+-]+)", &why);
    p.regex = re;
    p.capture = static_cast<StepCapture>(data[0] / 7 % 4);
  }
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  StepTracker tracker(3, std::nullopt);
  int64_t read_ms = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    auto l = ParseStepLine(line, p);
    if (!l) continue;
    if (!l->step && !l->seconds_per_step) __builtin_trap();
    CheckSeconds(l->seconds_per_step);
    tracker.AddLine(*l, read_ms += 1000);
  }
  JobFacts f;
  tracker.Fill(f);
  CheckSeconds(f.step_seconds);
  CheckSeconds(f.baseline_seconds);
  if (f.recent.size() > StepTracker::kRecent) __builtin_trap();
  return 0;
}
