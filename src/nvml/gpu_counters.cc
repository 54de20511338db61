// GpuSampler: counters and flags (ECC totals, retired pages, row remapping, PCIe replays, NVLink
// state, error totals and data counters), read in one nvmlDeviceGetFieldValues batch where the
// driver has it and through the older per-metric calls, under the budget, where it does not.
#include <cstring>
#include <vector>

#include "nvml/gpu_sampler.h"

namespace gpudoctor::nvml_internal {
namespace {

constexpr unsigned kBatchedNvLinks = 18;  // links whose state is asked for in the first batch
// NVLink data counters in KiB: 2^62 bytes (years at a few TB/s) is the plausible limit.
constexpr uint64_t kMaxNvLinkKib = 1ULL << 52;

std::optional<uint64_t> Find(const std::vector<nvmlFieldValue_t>& batch, unsigned id,
                             unsigned scope = 0) {
  for (const auto& f : batch) {
    if (f.fieldId == id && f.scopeId == scope) return FieldUnsigned(f);
  }
  return std::nullopt;
}

}  // namespace

// Entries of the first batched read: counters, flags, NVLink count and per-link state, power.
std::vector<nvmlFieldValue_t> GpuSampler::FirstBatch() const {
  // The same entries every time: built once, copied per read (the call fills the copy).
  static const std::vector<nvmlFieldValue_t> kTemplate = [] {
    std::vector<nvmlFieldValue_t> v;
    auto add = [&](unsigned id, unsigned scope = 0) {
      nvmlFieldValue_t f;
      std::memset(&f, 0, sizeof f);
      f.fieldId = id;
      f.scopeId = scope;
      v.push_back(f);
    };
    for (unsigned id : {nvml::kFieldEccCurrent,
                        nvml::kFieldEccSbeVolatileTotal,
                        nvml::kFieldEccDbeVolatileTotal,
                        nvml::kFieldEccSbeAggregateTotal,
                        nvml::kFieldEccDbeAggregateTotal,
                        nvml::kFieldRetiredSbe,
                        nvml::kFieldRetiredDbe,
                        nvml::kFieldRetiredPending,
                        nvml::kFieldNvLinkCrcFlitErrorTotal,
                        nvml::kFieldNvLinkCrcDataErrorTotal,
                        nvml::kFieldNvLinkReplayErrorTotal,
                        nvml::kFieldNvLinkRecoveryErrorTotal,
                        nvml::kFieldMemoryTemp,
                        nvml::kFieldTotalEnergyConsumption,
                        nvml::kFieldNvLinkLinkCount,
                        nvml::kFieldPcieReplayCounter,
                        nvml::kFieldRemappedCorrectable,
                        nvml::kFieldRemappedUncorrectable,
                        nvml::kFieldRemappedPending,
                        nvml::kFieldRemappedFailure,
                        nvml::kFieldPowerInstant,
                        nvml::kFieldPowerCurrentLimit}) {
      add(id);
    }
    add(nvml::kFieldNvLinkThroughputDataTx, nvml::kScopeAllLinks);
    add(nvml::kFieldNvLinkThroughputDataRx, nvml::kScopeAllLinks);
    for (unsigned link = 0; link < kBatchedNvLinks; ++link) add(nvml::kFieldNvLinkGetState, link);
    return v;
  }();
  return kTemplate;
}

// Reads `batch` in one call. False when the call itself failed (entries then all absent).
bool GpuSampler::ReadBatch(std::vector<nvmlFieldValue_t>& batch) {
  nvmlReturn_t r =
      NVML_CALL(calls_, DeviceGetFieldValues, dev_, static_cast<int>(batch.size()), batch.data());
  return Ok(r, names().DeviceGetFieldValues);
}

// The counters of the first read: `batch` (FirstBatch) in one call, or without it the
// per-metric calls. True when the batch answered.
bool GpuSampler::FirstCounters(std::vector<nvmlFieldValue_t>& batch) {
  bool batch_ok = api().DeviceGetFieldValues != nullptr && ReadBatch(batch);
  Publish();
  if (Stop()) return batch_ok;
  if (batch_ok) {
    FactsFromFirstBatch(batch);
  } else {
    CountersFallback(f_.first, true);
  }
  Publish();
  return batch_ok;
}

void GpuSampler::FactsFromFirstBatch(const std::vector<nvmlFieldValue_t>& batch) {
  CountersFromBatch(batch, f_.first);
  f_.ecc_enabled = Flag(Find(batch, nvml::kFieldEccCurrent));
  f_.retired_pages_sbe = Counter(Find(batch, nvml::kFieldRetiredSbe), kMaxRows);
  f_.retired_pages_dbe = Counter(Find(batch, nvml::kFieldRetiredDbe), kMaxRows);
  f_.retired_pages_pending = Flag(Find(batch, nvml::kFieldRetiredPending));
  f_.remapped_rows_correctable = Counter(Find(batch, nvml::kFieldRemappedCorrectable), kMaxRows);
  f_.remapped_rows_uncorrectable =
      Counter(Find(batch, nvml::kFieldRemappedUncorrectable), kMaxRows);
  f_.remap_pending = Flag(Find(batch, nvml::kFieldRemappedPending));
  f_.remap_failed = Flag(Find(batch, nvml::kFieldRemappedFailure));
  if (auto mt = Find(batch, nvml::kFieldMemoryTemp); mt && *mt <= kMaxTempC) {
    f_.memory_temp_c = static_cast<int>(*mt);
  }
  f_.energy_mj = Counter(Find(batch, nvml::kFieldTotalEnergyConsumption));
  if (auto p = Find(batch, nvml::kFieldPowerInstant); p && *p <= kMaxPowerMw) {
    f_.power_mw = static_cast<uint32_t>(*p);
  }
  if (auto p = Find(batch, nvml::kFieldPowerCurrentLimit); p && *p > 0 && *p <= kMaxPowerMw) {
    f_.power_limit_mw = static_cast<uint32_t>(*p);
  }
}

void GpuSampler::CountersFromBatch(const std::vector<nvmlFieldValue_t>& b, GpuCounterRead& c) {
  c.ecc_sbe_volatile = Counter(Find(b, nvml::kFieldEccSbeVolatileTotal));
  c.ecc_dbe_volatile = Counter(Find(b, nvml::kFieldEccDbeVolatileTotal));
  c.ecc_sbe_aggregate = Counter(Find(b, nvml::kFieldEccSbeAggregateTotal));
  c.ecc_dbe_aggregate = Counter(Find(b, nvml::kFieldEccDbeAggregateTotal));
  c.pcie_replays = Counter(Find(b, nvml::kFieldPcieReplayCounter));
  c.nvlink_crc_flit_errors = Counter(Find(b, nvml::kFieldNvLinkCrcFlitErrorTotal));
  c.nvlink_crc_data_errors = Counter(Find(b, nvml::kFieldNvLinkCrcDataErrorTotal));
  c.nvlink_replay_errors = Counter(Find(b, nvml::kFieldNvLinkReplayErrorTotal));
  c.nvlink_recovery_errors = Counter(Find(b, nvml::kFieldNvLinkRecoveryErrorTotal));
  c.nvlink_tx_kib =
      Counter(Find(b, nvml::kFieldNvLinkThroughputDataTx, nvml::kScopeAllLinks), kMaxNvLinkKib);
  c.nvlink_rx_kib =
      Counter(Find(b, nvml::kFieldNvLinkThroughputDataRx, nvml::kScopeAllLinks), kMaxNvLinkKib);
}

// Without nvmlDeviceGetFieldValues (very old drivers): the per-metric calls, each under the
// budget. The volatile ECC totals and the replay counter every read (the aggregate totals at
// the end of a check, at the slow cadence in a session); ECC counters not at all while ECC is
// off. The row remapper, or where it is unsupported the retired pages, in a check's
// first read (a session: slow cadence).
void GpuSampler::CountersFallback(GpuCounterRead& c, bool first) {
  auto ecc = [&](int type, int counter) -> std::optional<uint64_t> {
    if (!Budget()) {
      Defer();
      return std::nullopt;
    }
    unsigned long long v = 0;
    if (!Ok(NVML_CALL(calls_, DeviceGetTotalEccErrors, dev_, type, counter, &v),
            names().DeviceGetTotalEccErrors)) {
      return std::nullopt;
    }
    return Counter(v);
  };
  if (f_.ecc_enabled.value_or(true)) {
    c.ecc_sbe_volatile = ecc(nvml::NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml::NVML_VOLATILE_ECC);
    if (Stop()) return;
    c.ecc_dbe_volatile = ecc(nvml::NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml::NVML_VOLATILE_ECC);
    if (Stop()) return;
  }
  if (Budget()) {
    if (auto v = ReadUint(api().DeviceGetPcieReplayCounter, names().DeviceGetPcieReplayCounter)) {
      c.pcie_replays = Counter(*v);
    }
  } else {
    Defer();
  }
  if (Stop() || tick_mode_ || !first) return;
  if (Budget() && !RemapFallback() && !Stop()) RetiredFallback();
}

// The lifetime ECC totals, once (CheckTail).
void GpuSampler::EccAggregatesFallback(GpuCounterRead& c) {
  if (!f_.ecc_enabled.value_or(true)) return;
  for (int type :
       {nvml::NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml::NVML_MEMORY_ERROR_TYPE_CORRECTED}) {
    if (Stop()) return;
    if (!Budget()) {
      Defer();
      continue;
    }
    unsigned long long v = 0;
    std::optional<uint64_t> out;
    if (Ok(NVML_CALL(calls_, DeviceGetTotalEccErrors, dev_, type, nvml::NVML_AGGREGATE_ECC, &v),
           names().DeviceGetTotalEccErrors)) {
      out = Counter(v);
    }
    (type == nvml::NVML_MEMORY_ERROR_TYPE_CORRECTED ? c.ecc_sbe_aggregate : c.ecc_dbe_aggregate) =
        out;
  }
}

// nvmlDeviceGetRemappedRows (Ampere+). False when unsupported or failing.
bool GpuSampler::RemapFallback() {
  unsigned corr = 0, unc = 0, pending = 0, failed = 0;
  if (!Ok(NVML_CALL(calls_, DeviceGetRemappedRows, dev_, &corr, &unc, &pending, &failed),
          names().DeviceGetRemappedRows)) {
    return false;
  }
  f_.remapped_rows_correctable = Counter(corr, kMaxRows);
  f_.remapped_rows_uncorrectable = Counter(unc, kMaxRows);
  f_.remap_pending = Flag(pending);
  f_.remap_failed = Flag(failed);
  return true;
}

// Retired pages (pre-Ampere page retirement): a count query with an empty buffer answers
// INSUFFICIENT_SIZE (or SUCCESS for none) with the count.
std::optional<uint64_t> GpuSampler::RetiredCount(int cause) {
  if (api().DeviceGetRetiredPages == nullptr) return std::nullopt;
  unsigned count = 0;
  nvmlReturn_t r = calls_.Make(names().DeviceGetRetiredPages, api().DeviceGetRetiredPages, dev_,
                               cause, &count, static_cast<unsigned long long*>(nullptr));
  if (r != nvml::NVML_SUCCESS && r != nvml::NVML_ERROR_INSUFFICIENT_SIZE) {
    Ok(r, names().DeviceGetRetiredPages);
    return std::nullopt;
  }
  return Counter(count, kMaxRows);
}

std::optional<bool> GpuSampler::RetiredPending() {
  int state = -1;
  if (Ok(NVML_CALL(calls_, DeviceGetRetiredPagesPendingStatus, dev_, &state),
         names().DeviceGetRetiredPagesPendingStatus) &&
      (state == 0 || state == 1)) {
    return state == 1;
  }
  return std::nullopt;
}

void GpuSampler::RetiredFallback() {
  auto budgeted = [&](auto read) -> decltype(read()) {
    if (!Budget()) {
      Defer();
      return std::nullopt;
    }
    return read();
  };
  f_.retired_pages_sbe = budgeted([&] { return RetiredCount(0); });  // multiple SBE
  if (Stop()) return;
  f_.retired_pages_dbe = budgeted([&] { return RetiredCount(1); });  // DBE
  if (Stop()) return;
  f_.retired_pages_pending = budgeted([&] { return RetiredPending(); });
}

// Without batched fields (older drivers): ask each link until the driver says there is none.
void GpuSampler::NvLinksPerCall() {
  if (api().DeviceGetNvLinkState == nullptr) return;
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    if (!Budget()) {  // a partial list would read as links missing: none is reported
      f_.nvlinks.clear();
      Defer();
      return;
    }
    int state = -1;
    nvmlReturn_t r = NVML_CALL(calls_, DeviceGetNvLinkState, dev_, link, &state);
    if (r != nvml::NVML_SUCCESS) {
      if (r == nvml::NVML_ERROR_GPU_IS_LOST) Ok(r, names().DeviceGetNvLinkState);
      break;  // NOT_SUPPORTED / INVALID_ARGUMENT: no such link (or no NVLink at all)
    }
    std::optional<bool> active;
    if (state == 0 || state == 1) active = state == 1;
    f_.nvlinks.push_back({static_cast<int>(link), active});
  }
  if (!f_.nvlinks.empty()) f_.nvlink_count = static_cast<int>(f_.nvlinks.size());
}

void GpuSampler::NvLinks(const std::vector<nvmlFieldValue_t>& batch, bool batch_ok) {
  if (!batch_ok) {
    NvLinksPerCall();
    return;
  }
  auto count = Find(batch, nvml::kFieldNvLinkLinkCount);
  if (!count || *count > nvml::kNvLinkMaxLinks) return;
  f_.nvlink_count = static_cast<int>(*count);
  unsigned n = static_cast<unsigned>(*count);
  bool batched = false;
  for (unsigned link = 0; link < n && link < kBatchedNvLinks; ++link) {
    auto st = Find(batch, nvml::kFieldNvLinkGetState, link);
    if (st && *st <= 1) batched = true;
  }
  if (batched && n > kBatchedNvLinks) {
    std::vector<nvmlFieldValue_t> more;
    for (unsigned link = kBatchedNvLinks; link < n; ++link) {
      nvmlFieldValue_t f;
      std::memset(&f, 0, sizeof f);
      f.fieldId = nvml::kFieldNvLinkGetState;
      f.scopeId = link;
      more.push_back(f);
    }
    if (!ReadBatch(more)) more.clear();
    for (unsigned link = 0; link < n; ++link) {
      const auto& src = link < kBatchedNvLinks ? batch : more;
      auto st = Find(src, nvml::kFieldNvLinkGetState, link);
      f_.nvlinks.push_back({static_cast<int>(link), Flag(st)});
    }
    return;
  }
  for (unsigned link = 0; link < n; ++link) {
    std::optional<bool> active;
    if (batched) {
      active = Flag(Find(batch, nvml::kFieldNvLinkGetState, link));
    } else {
      int state = -1;  // pre-Hopper: one call per link
      if (Ok(NVML_CALL(calls_, DeviceGetNvLinkState, dev_, link, &state),
             names().DeviceGetNvLinkState) &&
          (state == 0 || state == 1)) {
        active = state == 1;
      }
      if (Stop()) return;
    }
    f_.nvlinks.push_back({static_cast<int>(link), active});
  }
}

// A check's second read: the counters again (their rates) and a fault reason's confirmation.
void GpuSampler::SecondSample() {
  if (!NoFields() && Budget()) {
    std::vector<nvmlFieldValue_t> batch;
    for (unsigned id : {nvml::kFieldEccSbeVolatileTotal, nvml::kFieldEccDbeVolatileTotal,
                        nvml::kFieldEccSbeAggregateTotal, nvml::kFieldEccDbeAggregateTotal,
                        nvml::kFieldPcieReplayCounter, nvml::kFieldNvLinkCrcFlitErrorTotal,
                        nvml::kFieldNvLinkCrcDataErrorTotal, nvml::kFieldNvLinkReplayErrorTotal,
                        nvml::kFieldNvLinkRecoveryErrorTotal, nvml::kFieldNvLinkThroughputDataTx,
                        nvml::kFieldNvLinkThroughputDataRx}) {
      nvmlFieldValue_t f;
      std::memset(&f, 0, sizeof f);
      f.fieldId = id;
      if (id == nvml::kFieldNvLinkThroughputDataTx || id == nvml::kFieldNvLinkThroughputDataRx) {
        f.scopeId = nvml::kScopeAllLinks;
      }
      batch.push_back(f);
    }
    if (ReadBatch(batch)) CountersFromBatch(batch, f_.second);
  } else if (NoFields()) {
    CountersFallback(f_.second, false);
  }
  if (Stop()) return;
  // A fault reason must persist across the window to count (HwSlowdown flashes during P-state
  // changes, signals.md §7); a clean first read needs no confirmation.
  if (FaultReason(f_.first.clock_event_reasons) && Budget()) {
    f_.second.clock_event_reasons = ClockReasons();
  }
}

}  // namespace gpudoctor::nvml_internal
