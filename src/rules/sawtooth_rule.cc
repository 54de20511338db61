#include "rules/sawtooth_rule.h"

#include "rules/make_finding.h"

namespace gpudoctor {

SawTooth DetectStaticBatchingSawTooth(const std::vector<double>& util) {
  constexpr double kHigh = 70, kLow = 20;
  SawTooth s;
  if (util.empty()) return s;
  int high = 0, low = 0;
  double sum = 0;
  int state = 0;  // 0 unknown, 1 high, -1 low
  int transitions_to_high_after_low = 0;
  bool seen_high = false, seen_low_after_high = false;
  for (double u : util) {
    sum += u;
    int now = 0;
    if (u >= kHigh) {
      ++high;
      now = 1;
    } else if (u <= kLow) {
      ++low;
      now = -1;
    }
    if (now == 0 || now == state) continue;
    if (now == 1) {
      if (seen_high && seen_low_after_high) ++transitions_to_high_after_low;
      seen_high = true;
      seen_low_after_high = false;
    } else if (seen_high) {
      seen_low_after_high = true;
    }
    state = now;
  }
  double n = static_cast<double>(util.size());
  s.cycles = transitions_to_high_after_low;
  s.high_fraction = high / n;
  s.low_fraction = low / n;
  s.mean_util_pct = sum / n;
  double middle = 1.0 - s.high_fraction - s.low_fraction;
  s.detected = util.size() >= 12 && middle < 0.30 && s.high_fraction >= 0.15 &&
               s.low_fraction >= 0.15 && s.cycles >= 3;
  return s;
}

void AddSawToothFindings(const Snapshot& snap, UtilHistory& history,
                         std::vector<Finding>& findings) {
  for (const GpuFacts& g : snap.gpu.gpus) {
    if (!g.util_gpu_pct || g.hung || g.unfinished) continue;
    auto& series = history[GpuIdentityKey(g)];
    series.push_back(*g.util_gpu_pct);
    if (series.size() > kUtilWindowTicks) series.pop_front();
    SawTooth st = DetectStaticBatchingSawTooth(std::vector<double>(series.begin(), series.end()));
    if (!st.detected) continue;
    Finding f = MakeFinding("gpu.util.sawtooth", Severity::kInfo,
                            "GPU " + std::to_string(g.index) + " alternates busy and idle (" +
                                std::to_string(st.cycles) + " cycles over the last " +
                                std::to_string(series.size()) + " ticks): static batching?");
    f.gpu = RefOf(g);
    f.Add("cycles", st.cycles)
        .Add("busy_share_pct", st.high_fraction * 100)
        .Add("idle_share_pct", st.low_fraction * 100)
        .Add("mean_util_pct", st.mean_util_pct);
    if (g.memory_total_bytes) {
      f.next_steps.insert(
          f.next_steps.begin(),
          "Compare the policies on this GPU: `gpudoctor plan batching --model llama-3-8b "
          "--gpu-mem " +
              std::to_string(*g.memory_total_bytes >> 30) + "GiB --rate 2` (replace the model).");
    }
    findings.push_back(std::move(f));
  }
}

}  // namespace gpudoctor
