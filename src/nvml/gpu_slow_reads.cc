// GpuSampler: a session's slow-cadence reads on an NVML without nvmlDeviceGetFieldValues (ECC
// aggregates, power limit, row remapper, retired pages, per-link NVLink state and counters), a
// few per tick as the budget allows, and their last known values carried into every tick.
#include <utility>

#include "nvml/gpu_sampler.h"

namespace gpudoctor::nvml_internal {
namespace {

// A session tick spends what its budget leaves on the slow-cadence reads of an NVML without
// nvmlDeviceGetFieldValues (per-link NVLink state and counters, ECC aggregates, row remapper,
// retired pages, power limit); a new round of them starts this long after the last one did.
constexpr auto kSlowRound = std::chrono::seconds(30);
// The items of a round: the fixed ones, then per link its state and 4 error counters.
constexpr int kSlowFixedItems = 7;
constexpr int kSlowPerLink = 5;  // state + 4 error counters

// A round is complete: its links and the counter sums (over every link, when each was read)
// become the known values.
void FinishRound(SlowWork& w) {
  w.nvlinks = std::move(w.round_links);
  w.nvlink_count = w.nvlinks.empty() ? std::nullopt : std::optional<int>(w.nvlinks.size());
  for (int i = 0; i < 4; ++i) {
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
  w.next = 0;
}

}  // namespace

// One slow-cadence item (SlowWork): false when the round is complete. Each costs at most one
// call; a remembered NOT_SUPPORTED costs none.
bool GpuSampler::SlowItem(SlowWork& w, int item) {
  if (item >= 0 && item < kSlowFixedItems) return SlowFixedItem(w, item);
  int link = (item - kSlowFixedItems) / kSlowPerLink;
  int part = (item - kSlowFixedItems) % kSlowPerLink;
  if (link >= static_cast<int>(nvml::kNvLinkMaxLinks)) return false;
  return SlowLinkItem(w, link, part);
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

// Part 0 of a link is its state (false: no such link, the round is complete); parts 1 to 4 its
// error counters.
bool GpuSampler::SlowLinkItem(SlowWork& w, int link, int part) {
  if (part == 0) {
    int state = -1;
    nvmlReturn_t r =
        api().DeviceGetNvLinkState == nullptr
            ? nvml::NVML_ERROR_FUNCTION_NOT_FOUND
            : NVML_CALL(calls_, DeviceGetNvLinkState, dev_, static_cast<unsigned>(link), &state);
    if (r != nvml::NVML_SUCCESS) {
      if (r == nvml::NVML_ERROR_GPU_IS_LOST) Ok(r, names().DeviceGetNvLinkState);
      return false;  // NOT_SUPPORTED / INVALID_ARGUMENT: no such link, the round is complete
    }
    std::optional<bool> active;
    if (state == 0 || state == 1) active = state == 1;
    w.round_links.push_back({link, active});
    for (auto& c : w.round_counters) c.emplace_back();
    return true;
  }
  static constexpr int kCounters[4] = {
      nvml::NVML_NVLINK_ERROR_DL_REPLAY, nvml::NVML_NVLINK_ERROR_DL_RECOVERY,
      nvml::NVML_NVLINK_ERROR_DL_CRC_FLIT, nvml::NVML_NVLINK_ERROR_DL_CRC_DATA};
  unsigned long long v = 0;
  if (Ok(NVML_CALL(calls_, DeviceGetNvLinkErrorCounter, dev_, static_cast<unsigned>(link),
                   kCounters[part - 1], &v),
         names().DeviceGetNvLinkErrorCounter)) {
    w.round_counters[part - 1].back() = Counter(v);
  }
  return true;
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

}  // namespace gpudoctor::nvml_internal
