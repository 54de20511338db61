// The fleet data model: what `gpudoctor fleet` reads from many nodes (check --json reports,
// Prometheus series) before any judgement. One GpuSample is one GPU in one report (a window);
// one FindingEvent is one finding of one report. Every measured value is optional: a field a
// report (or an older gpudoctor version) does not carry is absent, never 0.
// Times are UNIX seconds as the node's own clock wrote them (clock skew is flagged, not fixed).
// Plain value types, not thread-safe to mutate concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "findings/finding.h"

namespace gpudoctor::fleet {

// One card as seen in one slot: (node, pci_bus_id) holding (serial, uuid). A card moved to
// another node or slot is a second Card with the same serial. Constants per card live here.
struct Card {
  std::string node, pci_bus_id, serial, uuid, model;
  std::optional<int> index;
  std::optional<float> max_sm_clock_mhz, power_limit_w;
};

// One card in one report (window). Compact (the fleet bench holds 6 million of these): values
// are float, counters 32-bit; absent stays absent.
struct GpuSample {
  int64_t time_s = 0;
  uint32_t card = 0;  // index into FleetData::cards
  std::optional<float> sm_clock_mhz, power_w, util_pct, temp_c;
  std::optional<uint32_t> clock_event_reasons, ecc_sbe, ecc_dbe, pcie_replays;
};

struct FindingEvent {
  std::string node;
  int64_t time_s = 0;
  std::string id;
  Severity severity = Severity::kInfo;
  Action action = Action::kWatch;  // as reported, or the catalogue default (ActionOrDefault)
  Layer layer = Layer::kResources;
  GpuRef gpu;  // empty when the finding is not about one GPU
  std::string subject, summary;
};

// One report (or one Prometheus scrape instant) of one node.
struct NodeReport {
  std::string node, source, verdict;
  int64_t time_s = 0;
  int gpu_count = 0;
  std::string job;  // the report's job label ("job"), "" when none
};

// The job a card ran at one report time (the GPU's "job", else the report's): GPUs of one job
// wait for each other at collectives, across nodes.
struct CardJob {
  uint32_t card = 0;
  int64_t time_s = 0;
  std::string job;
};

// Something wrong with the input, named by file (or URL) and node where known.
struct InputProblem {
  std::string source;
  std::string node;
  std::string message;
};

struct FleetData {
  std::vector<Card> cards;
  std::vector<NodeReport> reports;
  std::vector<GpuSample> samples;
  std::vector<FindingEvent> findings;
  std::vector<InputProblem> problems;
  std::vector<CardJob> card_jobs;  // only cards with a job label
  // (node, time) -> source of the report already read: duplicates are skipped.
  std::map<std::pair<std::string, int64_t>, std::string> seen;
  // "node\x1fbus\x1fserial\x1fuuid" -> index into cards.
  std::map<std::string, uint32_t> card_index;

  // (card, time) -> index into samples (Prometheus input merges metrics into one sample).
  std::map<std::pair<uint32_t, int64_t>, size_t> sample_at;

  // The card for this identity, added when new.
  uint32_t InternCard(const Card& card);
};

// Physical ranges of GPU readings: a value outside (or not finite) is a broken reading, never a
// measurement, and the readers drop it (absent) and list it as an input problem.
struct ValueRange {
  double lo, hi;
  bool Contains(double v) const { return v >= lo && v <= hi; }  // false for NaN
};
inline constexpr ValueRange kSmClockRangeMhz{0, 10000};
inline constexpr ValueRange kPowerRangeW{0, 5000};
inline constexpr ValueRange kUtilRangePct{0, 100};
inline constexpr ValueRange kTempRangeC{-40, 150};

// The identity of a card: serial when known, else UUID, else "node:bus".
std::string CardKey(const std::string& node, const std::string& serial, const std::string& uuid,
                    const std::string& pci_bus_id);
inline std::string CardKey(const Card& c) {
  return CardKey(c.node, c.serial, c.uuid, c.pci_bus_id);
}

// One spelling per slot: every PCI bus id form (NVML "00000000:3B:00.0", sysfs "0000:3b:00.0",
// the kernel's "0000:3b:00", short "3b:00.0", any case) becomes "0000:3b:00.0"; text that is no
// bus id is returned unchanged. The readers store bus ids in this form, so the same slot read
// from two inputs (or typed by a user) is one slot.
std::string CanonicalBusId(std::string_view text);

// Levenshtein distance, case-insensitive (ASCII); for "did you mean" lists.
size_t EditDistance(std::string_view a, std::string_view b);

// Up to `max` of `candidates` nearest to `query` by EditDistance (ties by name), nearest first.
std::vector<std::string> NearestNames(std::string_view query,
                                      const std::vector<std::string>& candidates, size_t max = 3);

}  // namespace gpudoctor::fleet
