// GpuSampler: the NVML calls for one GPU, made on that GPU's worker (guarded.h). Internal to the
// sampler (sampler.cc, session.cc); not part of the public interface.
//
// Three units of work:
// - Run: a check's whole sample (identity, limits, a first read, the window, a second read,
//   the tail), at most kCheckBudget calls, of which the first read leaves kSecondReadReserve
//   (kSecondReadReserveNoFields without the batch) to the second.
// - RunIdentity: a session's per-boot constants (handle, identity, VBIOS, limits, temperature
//   limits, max clocks), read on each tick until known (the first tick, unless it found no
//   handle or the GPU lost), and again for an index an enumeration does not match by UUID.
// - RunTick: a session tick, at most kTickBudget calls beyond what the worker made before;
//   constants come from RunIdentity's result, counters are read once into `first`.
// The facts as far as the worker got are published to WorkerShared after each step, so that a
// hang later costs none of them. After NVML_ERROR_GPU_IS_LOST (Stop()) nothing more is called.
//
// The member functions are defined by concern:
//   gpu_sampler.cc      the three sequences, the budget, classifying returns, publishing
//   gpu_identity.cc     handle, identity, per-boot constants and limits
//   gpu_sample_fast.cc  the fast per-tick readings (utilisation, memory, temperature, clocks,
//                       throttle reasons, fan, PCIe link and throughput, power, processes)
//   gpu_counters.cc     counters (ECC, retired pages, row remapping, PCIe replays, NVLink) from
//                       the field-value batch or its per-call fallbacks
//   gpu_slow_reads.cc   a session's slow-cadence per-call reads (without the batch: ECC
//                       aggregates, row remapper, NVLink per link; always: video engines)
//   nvml_events.cc      registration for Xid events
// Thread-safety: one GpuSampler is used by one worker; a GpuCarry by one worker at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "facts/gpu_facts.h"
#include "nvml/sampler_internal.h"

namespace gpudoctor::nvml_internal {

// NVML calls per GPU: at most this many in a check, and in a session tick (identity excluded).
inline constexpr int kCheckBudget = 30;
inline constexpr int kTickBudget = 15;
// Calls a check keeps back for its second read, so that rates (ECC, replays, NVLink errors) and
// the confirmation of a throttle reason are never what a busy GPU's first read crowds out: the
// counter batch, or without the batch the two volatile ECC totals and the replay counter; one
// more where the first read saw a throttle reason that the second must confirm.
inline constexpr int kSecondReadReserve = 1;
inline constexpr int kSecondReadReserveNoFields = 3;
// A busy GPU's PCIe throughput in a session: read every this many ticks of a busy spell (and on
// its first), carried between (GpuSampler::TickPcieThroughput). Ten: each read is two 20-ms
// samples the caller sleeps through, and up to ten GPUs then read on different ticks, so a
// tick's GPUs fit on one sampler thread (session.cc, kGpuThreadShare).
inline constexpr int64_t kBusyPcieEveryTicks = 10;

// Slow-cadence reads of a session GPU on an NVML without nvmlDeviceGetFieldValues, one call
// each, done a few per tick (whatever the tick budget leaves) until a round is complete, and
// their last known values, carried into every tick's facts.
struct SlowWork {
  bool active = false;
  bool started = false;
  TimePoint round_start{};
  int next = 0;  // the next item of the round (see GpuSampler::SlowItem)
  // The round's link states are all read (they become `nvlinks` at once, before the counters);
  // the counters start at item `counters_from`.
  bool states_done = false;
  int counters_from = 0;
  int64_t ticks = 0;
  std::optional<uint64_t> ecc_sbe_aggregate, ecc_dbe_aggregate;
  std::optional<uint32_t> power_limit_mw;
  std::optional<uint64_t> remapped_correctable, remapped_uncorrectable;
  std::optional<bool> remap_pending, remap_failed;
  std::optional<uint64_t> retired_sbe, retired_dbe;
  std::optional<bool> retired_pending;
  // A busy GPU's PCIe throughput, read every kBusyPcieEveryTicks ticks it stays busy (the tick
  // counts of the last read and of the last busy tick).
  std::optional<uint64_t> pcie_tx, pcie_rx;
  int64_t pcie_read_tick = -1, pcie_busy_tick = -1;
  // Read every kCodecPeriod (with or without the batch), the last values carried into the ticks
  // between: video encoder / decoder utilisation, and an idle GPU's PCIe throughput (a busy
  // GPU's is read more often: pcie_tx above; its values are dropped here so an idle GPU never
  // shows them).
  bool codec_started = false;
  TimePoint codec_at{};
  std::optional<uint32_t> encoder_util_pct, decoder_util_pct;
  std::optional<uint64_t> idle_pcie_tx, idle_pcie_rx;
  // NVLink: the links of the last states read (the current round's once its states are all
  // read), the counter totals of the last complete round, and the round in progress (every
  // link's state, then per link its 4 counters).
  std::optional<int> nvlink_count;
  std::vector<NvLinkFacts> nvlinks;
  std::optional<uint64_t> nvlink_totals[4];  // replay, recovery, CRC flit, CRC data
  std::vector<NvLinkFacts> round_links;
  std::vector<std::optional<uint64_t>> round_counters[4];
};

// What a session keeps per GPU between its ticks (owned by the session, used by one worker at a
// time: a GPU whose worker is still out gets no new one).
struct GpuCarry {
  CallMemo memo;
  SlowWork slow;
  int64_t ticks = 0;
};

class GpuSampler {
 public:
  GpuSampler(const Library& lib, WorkerShared& shared, int index, nvmlEventSet_t events,
             std::chrono::milliseconds window, GpuCarry* carry = nullptr);

  // A check's sample of the GPU at `index`, with a sampling window between two counter reads:
  // RunFirstHalf (handle, identity, limits, the first read), then RunSecondHalf (sleeps until the
  // first read + the window, reads again, returns the facts). The halves may run on different
  // threads, one after the other, so that a check's GPUs can share a worker (sampler.cc); Run does
  // both in turn.
  GpuFacts Run();
  void RunFirstHalf();
  GpuFacts RunSecondHalf();

  // One tick of a long-lived session: per-boot constants come from `constants` (read once by
  // Run or RunIdentity), the handle from `dev`; counters are read once (into `first`: the
  // session moves them to `second` and puts the previous tick's read in `first`). No window.
  GpuFacts RunTick(const GpuFacts& constants, nvmlDevice_t dev);

  // The per-boot part of Run: handle, event registration, identity, limits, temperature limits.
  GpuFacts RunIdentity();

  nvmlDevice_t device() const { return dev_; }
  // When RunFirstHalf's first read started (TimePoint{} before, or when it found no handle).
  TimePoint first_read_at() const { return t_first_; }

 private:
  // ---- gpu_sampler.cc: plumbing ----
  bool Stop() const { return f_.lost; }
  // No batched field values: every fact comes from its own (older) call.
  bool NoFields() const { return api().DeviceGetFieldValues == nullptr; }
  // Room for `n` more calls in this check's or tick's budget.
  bool Budget(int n = 1) const { return shared_.crumb.calls.load() + n <= budget_; }
  // A read left out because the budget was spent.
  void Defer() { ++f_.reads_deferred; }
  const nvml::SymbolNames& names() const { return calls_.lib().names; }
  const nvml::Api& api() const { return calls_.lib().api; }

  void Publish();
  void PublishIdentity();
  // Classifies a return: true on success. NOT_SUPPORTED / FUNCTION_NOT_FOUND are silent absence.
  bool Ok(nvmlReturn_t r, const std::string& symbol);
  std::optional<uint32_t> ReadUint(nvmlReturn_t (*fn)(nvmlDevice_t, unsigned*),
                                   const std::string& symbol);
  std::optional<uint32_t> ReadUintArg(nvmlReturn_t (*fn)(nvmlDevice_t, int, unsigned*),
                                      const std::string& symbol, int arg);
  // The end of a check: what no rule needs first, as far as the budget goes (without the batch:
  // the lifetime ECC totals and the per-link NVLink calls; then the clocks only metrics show).
  // The video engines' utilisation is left to a watch session (metrics only, slow cadence).
  void CheckTail();

  // ---- gpu_identity.cc: per-boot constants ----
  bool Handle();
  void CopyConstants(const GpuFacts& c);
  std::string ReadString(nvmlReturn_t (*fn)(nvmlDevice_t, char*, unsigned),
                         const std::string& symbol, unsigned size);
  void Identity(bool with_vbios);
  void Vbios();
  void MaxPcieLink();
  std::optional<int> Threshold(int which);
  std::optional<uint32_t> MaxClock(int type);
  void TemperatureLimits();
  void EccMode();
  void Limits(bool with_max_link);

  // ---- gpu_sample_fast.cc: the fast readings ----
  void FirstSample();
  void FastReadings();
  void PowerAndProcesses();
  std::optional<unsigned long long> ClockReasons();
  void Memory();
  void Temperature();
  void Processes();
  bool Busy() const;
  void PcieThroughput();
  void TickPcieThroughput();
  static bool FaultReason(std::optional<unsigned long long> mask);

  // ---- gpu_counters.cc: counters, the batch and its fallbacks ----
  std::vector<nvmlFieldValue_t> FirstBatch() const;
  bool ReadBatch(std::vector<nvmlFieldValue_t>& batch);
  bool FirstCounters(std::vector<nvmlFieldValue_t>& batch);
  void FactsFromFirstBatch(const std::vector<nvmlFieldValue_t>& b);
  void CountersFromBatch(const std::vector<nvmlFieldValue_t>& b, GpuCounterRead& c);
  void CountersFallback(GpuCounterRead& c, bool first);
  void EccAggregatesFallback(GpuCounterRead& c);
  bool RemapFallback();
  std::optional<uint64_t> RetiredCount(int cause);
  std::optional<bool> RetiredPending();
  void RetiredFallback();
  void NvLinksPerCall();
  void NvLinks(const std::vector<nvmlFieldValue_t>& batch, bool batch_ok);
  void SecondSample();

  // ---- gpu_slow_reads.cc: a session's slow cadence without the batch ----
  bool SlowItem(SlowWork& w, int item);
  bool SlowFixedItem(SlowWork& w, int item);
  bool SlowLinkState(SlowWork& w, int link);
  void SlowLinkCounter(SlowWork& w, int link, int counter);
  void SlowReads();
  // Encoder and decoder utilisation (2 calls; a NOT_SUPPORTED one is not asked again).
  void CodecUtilization();
  // A session tick's slow-cadence reads on any NVML: CodecUtilization, and an idle GPU's PCIe
  // throughput, when due and the budget has room; else the last values.
  void TickCodecUtilization();

  // ---- nvml_events.cc ----
  void RegisterEvents();

  CallMemo own_memo_;  // a check's: NOT_SUPPORTED is not asked twice in one check
  Calls calls_;
  GpuCarry* carry_;
  int budget_ = kCheckBudget;
  WorkerShared& shared_;
  int index_;
  nvmlEventSet_t events_;
  std::chrono::milliseconds window_;
  TimePoint t_start_{}, t_first_{};  // a check's: when it started, when its first read started
  nvmlDevice_t dev_ = nullptr;
  bool tick_mode_ = false;
  GpuFacts f_;
};

}  // namespace gpudoctor::nvml_internal
