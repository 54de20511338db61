// Step lines of training logs: what one line of a job's log says about its speed. Pure parsers
// (no I/O, no clock); thread-safe. Presets cover the shapes the common tools print (see
// tests/fixtures/job_logs/README.md for the versions imitated):
//   tqdm     tqdm bars as Hugging Face Trainer and plain loops print them:
//            " 2%|▏   | 12/500 [00:34<22:10,  2.73s/it]" or "... 60/500 [00:34<04:10,  1.76it/s]"
//   lightning PyTorch Lightning's TQDM bar ("Epoch 0:  45%|...| 450/1000 [02:15<02:45,
//            3.32it/s, v_num=0, loss=2.31]") and Rich bar ("Epoch 1/9 ━━━ 450/1000 0:02:15 •
//            0:02:45 3.32it/s loss: 2.31")
//   megatron Megatron-LM "iteration      100/  500000 | ... | elapsed time per iteration (ms):
//            1234.5 | ..."
//   deepspeed DeepSpeed engine lines "[2024-03-01 12:00:00,123] [INFO] [...] [Rank 0] step=100,
//            skipped=0, ..." (step time from the line stamps) and wall-clock breakdown lines
//            "... time (ms) | ... | step: 30.20" are ignored (a part of a step, not a step)
//   step     plain "2024-03-01 12:00:01 ... step 100 ..." / "step=100" / "step: 100" with a
//            leading timestamp (ISO 8601 date and time, optional fraction and zone; UTC when none)
//   auto     the first of megatron, tqdm/lightning, deepspeed, step that matches
//   regex    the job's own regex (std::regex ECMAScript); capture group 1 is the value, its
//            meaning set by `capture`: seconds, ms, it_per_s, step
// Units: seconds per step; unix milliseconds for line stamps. Lines longer than kMaxStepLineBytes
// are never matched (a regex on a megabyte line could take seconds).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace gpudoctor {

inline constexpr size_t kMaxStepLineBytes = 4096;

enum class StepPreset { kAuto, kTqdm, kLightning, kMegatron, kDeepSpeed, kStep, kRegex };
// "auto", "tqdm", "lightning", "megatron", "deepspeed", "step", "regex"
const char* StepPresetName(StepPreset p);
std::optional<StepPreset> ParseStepPreset(std::string_view name);

// What group 1 of a custom regex holds.
enum class StepCapture { kSeconds, kMilliseconds, kItPerSecond, kStep };
const char* StepCaptureName(StepCapture c);  // "seconds", "ms", "it_per_s", "step"
std::optional<StepCapture> ParseStepCapture(std::string_view name);

// What a line says. At least one of step / seconds_per_step is set in a parsed line.
struct StepLine {
  std::optional<int64_t> step;             // the step/iteration counter the line reports
  std::optional<double> seconds_per_step;  // the line's own measure of a step (> 0, finite)
  std::optional<int64_t> unix_ms;          // the line's timestamp, when it has one
};

struct StepPattern {
  StepPreset preset = StepPreset::kAuto;
  // kRegex only: compiled once (CompileStepRegex) and the meaning of group 1.
  std::shared_ptr<const std::regex> regex;
  StepCapture capture = StepCapture::kSeconds;
};

// Compiles a job's regex; InvalidArgument-style message in `error` when it does not compile or
// has no capture group. nullptr on error.
std::shared_ptr<const std::regex> CompileStepRegex(const std::string& text, std::string* error);

// One line (without its terminator); nullopt when it says nothing about steps.
std::optional<StepLine> ParseStepLine(std::string_view line, const StepPattern& pattern);

// A leading timestamp "2024-03-01 12:00:01", "2024-03-01T12:00:01.250Z", "[2024-03-01
// 12:00:01,123]", "2024-03-01T12:00:01+02:00" (after optional '[' and blanks); UTC when no zone.
std::optional<int64_t> ParseLeadingTimestampMs(std::string_view line);

}  // namespace gpudoctor
