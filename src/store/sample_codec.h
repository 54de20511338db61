// Compact encoding of one series' samples over a fixed window of slots (60 one-second slots of a
// minute, or 60 one-minute slots of an hour): the history store keeps one blob per series and
// window instead of one row per sample, which keeps 8 GPUs at 1 s under 200 MiB.
//
// Layout: u64 little-endian presence bitmap (bit i: slot i present), then one 2-bit tag per
// present sample (4 per byte), then the payloads in slot order. Tags: 0 the previous value again
// (the first sample's "previous" is 0), 1 float32 exactly representing the value (lossy mode:
// rounded to float32), 2 float32 difference from the previous value that reproduces it exactly,
// 3 a full double. Lossy mode (gauges, rollups) stores float32 (7 significant digits); counters
// are stored exactly. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpudoctor {

inline constexpr int kCodecSlots = 60;

// samples: (slot 0..59, value), slots strictly increasing. Out-of-range slots are skipped.
std::string EncodeSamples(const std::vector<std::pair<int, double>>& samples, bool lossy);
// nullopt on malformed input (never reads past the end). `consumed` gets the bytes used.
std::optional<std::vector<std::pair<int, double>>> DecodeSamples(std::string_view blob,
                                                                 size_t* consumed = nullptr);

}  // namespace gpudoctor
