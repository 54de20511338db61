// GpuSampler: a session's slow-cadence reads on an NVML without nvmlDeviceGetFieldValues (ECC
// aggregates, power limit, row remapper, retired pages, per-link NVLink state and counters), a
// few per tick as the budget allows, and their last known values carried into every tick; and on
// any NVML the video engines' utilisation and an idle GPU's PCIe throughput, every kCodecPeriod.
#include <utility>

#include "nvml/gpu_sampler.h"

namespace gpudoctor::nvml_internal {
namespace {

// A session tick spends what its budget leaves on the slow-cadence reads of an NVML without
// nvmlDeviceGetFieldValues (per-link NVLink state and counters, ECC aggregates, row remapper,
// retired pages, power limit); a new round of them starts this long after the last one did.
constexpr auto kSlowRound = std::chrono::seconds(30);
// The items of a round: the fixed ones, then every link's state (a link down is known after
// about a fifth of the round), then per link its 4 error counters.
constexpr int kSlowFixedItems = 7;
constexpr int kCountersPerLink = 4;
// Encoder and decoder utilisation are read this often in a session (dcgm-exporter's default
// collection interval is 30 s too); the ticks between carry the last values.
constexpr auto kCodecPeriod = std::chrono::seconds(30);

// The round's link states are all read: they are the known links from now on.
void FinishStates(SlowWork& w, int next_item) {
  w.states_done = true;
  w.counters_from = next_item;
  w.nvlinks = w.round_links;
  w.nvlink_count = w.nvlinks.empty() ? std::nullopt : std::optional<int>(w.nvlinks.size());
  for (auto& c : w.round_counters) c.assign(w.round_links.size(), std::nullopt);
}

// A round is complete: its links and the counter sums (over every link, when each was read)
// become the known values.
void FinishRound(SlowWork& w) {
  w.nvlinks = std::move(w.round_links);
  w.nvlink_count = w.nvlinks.empty() ? std::nullopt : std::optional<int>(w.nvlinks.size());
  for (int i = 0; i < kCountersPerLink; ++i) {
    std::optional<uint64_t> sum = w.nvlinks.empty() ? std::nullopt : std::optional<uint64_t>(0);
    for (const auto& v : w.round_counters[i]) {
      if (!v || !sum) {
        sum.reset();
        break;
      }
      *sum += *v;
    }
    w.nvlink_totals[i] = sum;
    w.round_counters[i].clear();
  }
  w.round_links.clear();
  w.active = false;
  w.states_done = false;
  w.next = 0;
}

}  // namespace

// One slow-cadence item (SlowWork): false when the round is complete. Each costs at most one
// call; a remembered NOT_SUPPORTED costs none.
bool GpuSampler::SlowItem(SlowWork& w, int item) {
  if (item >= 0 && item < kSlowFixedItems) return SlowFixedItem(w, item);
  if (!w.states_done) {
    int link = item - kSlowFixedItems;
    if (link < static_cast<int>(nvml::kNvLinkMaxLinks) && SlowLinkState(w, link)) return true;
    // No such link: every state is read; the counters follow from the next item.
    FinishStates(w, item + 1);
    return !w.round_links.empty() && !Stop();
  }
  int k = item - w.counters_from;
  int link = k / kCountersPerLink;
  if (k < 0 || link >= static_cast<int>(w.round_links.size())) return false;
  SlowLinkCounter(w, link, k % kCountersPerLink);
  return true;
}

// ECC aggregates, power limit, row remapper, retired pages (items 0 to kSlowFixedItems - 1).
bool GpuSampler::SlowFixedItem(SlowWork& w, int item) {
  switch (item) {
    case 0:
    case 1: {
      if (!f_.ecc_enabled.value_or(true)) return true;
      unsigned long long v = 0;
      int type = item == 0 ? nvml::NVML_MEMORY_ERROR_TYPE_CORRECTED
                           : nvml::NVML_MEMORY_ERROR_TYPE_UNCORRECTED;
      std::optional<uint64_t> out;
      if (Ok(NVML_CALL(calls_, DeviceGetTotalEccErrors, dev_, type, nvml::NVML_AGGREGATE_ECC, &v),
             names().DeviceGetTotalEccErrors)) {
        out = Counter(v);
      }
      (item == 0 ? w.ecc_sbe_aggregate : w.ecc_dbe_aggregate) = out;
      return true;
    }
    case 2:
      if (auto p =
              ReadUint(api().DeviceGetEnforcedPowerLimit, names().DeviceGetEnforcedPowerLimit)) {
        w.power_limit_mw = InRange(*p, 1, kMaxPowerMw);
      } else {
        w.power_limit_mw.reset();
      }
      return true;
    case 3:
      if (RemapFallback()) {
        w.remapped_correctable = f_.remapped_rows_correctable;
        w.remapped_uncorrectable = f_.remapped_rows_uncorrectable;
        w.remap_pending = f_.remap_pending;
        w.remap_failed = f_.remap_failed;
      }
      return true;
    case 4:
      if (w.remap_failed) return true;  // Ampere+: no page retirement
      w.retired_sbe = RetiredCount(0);
      return true;
    case 5:
      if (w.remap_failed) return true;
      w.retired_dbe = RetiredCount(1);
      return true;
    case 6:
      if (w.remap_failed) return true;
      w.retired_pending = RetiredPending();
      return true;
    default:
      return true;
  }
}

// The state of `link`: false when there is no such link (the states are all read).
bool GpuSampler::SlowLinkState(SlowWork& w, int link) {
  int state = -1;
  nvmlReturn_t r =
      api().DeviceGetNvLinkState == nullptr
          ? nvml::NVML_ERROR_FUNCTION_NOT_FOUND
          : NVML_CALL(calls_, DeviceGetNvLinkState, dev_, static_cast<unsigned>(link), &state);
  if (r != nvml::NVML_SUCCESS) {
    if (r == nvml::NVML_ERROR_GPU_IS_LOST) Ok(r, names().DeviceGetNvLinkState);
    return false;  // NOT_SUPPORTED / INVALID_ARGUMENT: no such link
  }
  std::optional<bool> active;
  if (state == 0 || state == 1) active = state == 1;
  w.round_links.push_back({link, active});
  return true;
}

// Error counter `counter` (0 to 3: replay, recovery, CRC flit, CRC data) of the round's link at
// position `link`.
void GpuSampler::SlowLinkCounter(SlowWork& w, int link, int counter) {
  static constexpr int kCounters[kCountersPerLink] = {
      nvml::NVML_NVLINK_ERROR_DL_REPLAY, nvml::NVML_NVLINK_ERROR_DL_RECOVERY,
      nvml::NVML_NVLINK_ERROR_DL_CRC_FLIT, nvml::NVML_NVLINK_ERROR_DL_CRC_DATA};
  unsigned long long v = 0;
  if (Ok(NVML_CALL(calls_, DeviceGetNvLinkErrorCounter, dev_,
                   static_cast<unsigned>(w.round_links[link].link), kCounters[counter], &v),
         names().DeviceGetNvLinkErrorCounter)) {
    w.round_counters[counter][link] = Counter(v);
  }
}

// The slow-cadence reads of a session tick without the batch, then every known value into
// this tick's facts.
void GpuSampler::SlowReads() {
  SlowWork& w = carry_->slow;
  TimePoint now = SteadyClock::now();
  if (!w.active && (!w.started || now - w.round_start >= kSlowRound)) {
    w.active = w.started = true;
    w.round_start = now;
    w.next = 0;
    w.states_done = false;
    w.round_links.clear();
    for (auto& c : w.round_counters) c.clear();
  }
  while (w.active && Budget() && !Stop()) {
    if (!SlowItem(w, w.next)) {
      FinishRound(w);
      break;
    }
    ++w.next;
  }
  if (Stop()) return;
  f_.first.ecc_sbe_aggregate = w.ecc_sbe_aggregate;
  f_.first.ecc_dbe_aggregate = w.ecc_dbe_aggregate;
  if (!f_.power_limit_mw) f_.power_limit_mw = w.power_limit_mw;
  f_.remapped_rows_correctable = w.remapped_correctable;
  f_.remapped_rows_uncorrectable = w.remapped_uncorrectable;
  f_.remap_pending = w.remap_pending;
  f_.remap_failed = w.remap_failed;
  f_.retired_pages_sbe = w.retired_sbe;
  f_.retired_pages_dbe = w.retired_dbe;
  f_.retired_pages_pending = w.retired_pending;
  f_.nvlink_count = w.nvlink_count;
  f_.nvlinks = w.nvlinks;
  f_.first.nvlink_replay_errors = w.nvlink_totals[0];
  f_.first.nvlink_recovery_errors = w.nvlink_totals[1];
  f_.first.nvlink_crc_flit_errors = w.nvlink_totals[2];
  f_.first.nvlink_crc_data_errors = w.nvlink_totals[3];
}

void GpuSampler::CodecUtilization() {
  auto read = [&](auto fn, const std::string& symbol) -> std::optional<uint32_t> {
    unsigned pct = 0, period_us = 0;
    if (!Ok(calls_.Make(symbol, fn, dev_, &pct, &period_us), symbol)) return std::nullopt;
    return InRange(pct, 0, 100);
  };
  f_.encoder_util_pct =
      read(api().DeviceGetEncoderUtilization, names().DeviceGetEncoderUtilization);
  if (Stop()) return;
  f_.decoder_util_pct =
      read(api().DeviceGetDecoderUtilization, names().DeviceGetDecoderUtilization);
}

// Due on a session's first tick and kCodecPeriod after the last read; a due read waits for a
// tick with room for both calls (the fast readings and the counters come first). An idle GPU's
// PCIe throughput (a busy one's is read every tick: TickPcieThroughput) is read along where two
// more calls fit, so that an idle GPU reports its PCIe bytes too, 30 s old at most.
void GpuSampler::TickCodecUtilization() {
  if (carry_ == nullptr) return;
  SlowWork& w = carry_->slow;
  bool idle = !Busy();
  if (!idle) w.idle_pcie_tx = w.idle_pcie_rx = std::nullopt;
  TimePoint now = SteadyClock::now();
  bool due = !w.codec_started || now - w.codec_at >= kCodecPeriod;
  if (due && Budget(2)) {
    CodecUtilization();
    w.codec_started = true;
    w.codec_at = now;
    w.encoder_util_pct = f_.encoder_util_pct;
    w.decoder_util_pct = f_.decoder_util_pct;
    if (idle && !Stop() && Budget(2)) {
      PcieThroughput();
      w.idle_pcie_tx = f_.pcie_tx_bytes_per_s;
      w.idle_pcie_rx = f_.pcie_rx_bytes_per_s;
    }
    return;
  }
  f_.encoder_util_pct = w.encoder_util_pct;
  f_.decoder_util_pct = w.decoder_util_pct;
  if (idle) {
    f_.pcie_tx_bytes_per_s = w.idle_pcie_tx;
    f_.pcie_rx_bytes_per_s = w.idle_pcie_rx;
  }
}

}  // namespace gpudoctor::nvml_internal
