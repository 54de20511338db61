// A deterministic generator of test fleets for `gpudoctor fleet`: `check --json` reports of N
// nodes x 8 H100 GPUs over `reports` reports (every `step_s`), with conditions planted on
// disjoint sets of nodes, and the truth about each, so tests can measure precision and recall:
//   hardware stragglers (HW slowdown; HW thermal; a clock deficit at the same power), half of
//     them with their node's other GPUs waiting on them at collectives (victims), and those
//     in a multi-node job (the reports' "job" label) with all GPUs of another node of the job
//     waiting on them too (victims across nodes); every node carries a job label;
//   power-capped jobs (at the power cap, SW power cap only) and a lower configured limit;
//   idle nodes and single idle GPUs; workload stragglers (low utilisation, healthy clocks);
//   lemon nodes (three hardware incidents, one of them raising two findings, one flapping);
//   non-lemons (a thermal blip, a host load warning, application Xids, one ECC incident);
//   bad cards and bad slots shown by swaps between two nodes, with application Xids in both
//     slots of the healthy swap partner;
//   placeholder serials ("0", "N/A", ""), a serial copied onto GPUs of three nodes at once;
//   bad input: a report dated 1971, one two days ahead, values out of range (1e300 MHz,
//     -1e9 mW, 1e9 C), a finding repeated in one report;
//   background noise on ordinary nodes: application Xids (13, 31, 43, 45) and one-off Xid 79;
//   the interruptions all of these make (Llama 3 sense: interruptions.h).
// The same seed gives the same fleet (own SplitMix64, no std distributions). Pure function.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpudoctor::fleet::testing {

struct FleetGenOptions {
  int nodes = 200;
  uint64_t seed = 1;
  int reports = 12;
  int64_t t0_s = 1768003200;  // 2026-01-10T00:00:00Z
  int64_t step_s = 1800;
};

struct GeneratedReport {
  std::string source;
  std::string json;
};

// GPUs are named "node:bus" (the slot); cards by serial.
struct FleetTruth {
  std::set<std::string> hardware, capped, workload, idle;
  std::map<std::string, std::string> victims;  // victim slot -> the hardware straggler's slot
  std::set<std::string> idle_nodes;
  std::set<std::string> lemon_nodes, lemon_cards;
  std::map<std::string, std::string> card_verdicts;  // serial -> "card" | "slot"
  std::map<std::string, std::string> slot_verdicts;  // "node:bus" -> "card" | "slot"
  std::set<std::string> serials;                     // every real (non-placeholder) serial
  std::set<std::string> cloned_serials;              // in several slots at once
  std::set<std::string> bad_sources;                 // reports that must be listed as problems
  // Interruptions: "node@w" (w: the report index of its first finding) -> category. One per
  // planted hardware event (Xid 48 + gpu.ecc.dbe together, or a flapping finding, are one);
  // none for warnings, application Xids, or a fault in a node's first report.
  std::map<std::string, std::string> interruptions;
  double gpu_days = 0;  // observed GPU-time of the valid reports, with a `window_s` tail
};

struct GeneratedFleet {
  std::vector<GeneratedReport> reports;
  FleetTruth truth;
  int64_t now_s = 0;  // "the reading host's clock": one step after the last report
};

// window_s: the analysis window the truth's gpu_days assumes (the default 300 s).
GeneratedFleet GenerateFleet(const FleetGenOptions& options, int64_t window_s = 300);

}  // namespace gpudoctor::fleet::testing
