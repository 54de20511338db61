#include "nvml/sampler.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "core/strings.h"
#include "facts/pci_bus_id.h"
#include "nvml/guarded.h"
#include "nvml/loader.h"
#include "nvml/session.h"

namespace gpudoctor {
namespace {

using nvml::Breadcrumb;
using nvml::Library;
using nvml::nvmlDevice_t;
using nvml::nvmlEventSet_t;
using nvml::nvmlFieldValue_t;
using nvml::nvmlReturn_t;

constexpr size_t kMaxErrorsPerGpu = 16;
constexpr unsigned kMaxProcesses = 4096;
constexpr unsigned kBatchedNvLinks = 18;  // links whose state is asked for in the first batch
constexpr int kMaxEventsDrained = 256;

// NVML calls per GPU: at most this many in a check, and in a session tick (identity excluded).
constexpr int kCheckBudget = 30;
constexpr int kTickBudget = 15;
// Calls a check keeps back for its second read, so that rates (ECC, replays, NVLink errors) and
// the confirmation of a throttle reason are never what a busy GPU's first read crowds out: the
// counter batch, or without the batch the two volatile ECC totals and the replay counter; one
// more where the first read saw a throttle reason that the second must confirm.
constexpr int kSecondReadReserve = 1;
constexpr int kSecondReadReserveNoFields = 3;
// A check without nvmlDeviceGetFieldValues reads the temperature thresholds only from this
// temperature up: every NVIDIA data-centre GPU slows down at 80 C or more, and the thermal rule
// judges a GPU within 5 C of its threshold.
constexpr int kThresholdsMatterFromC = 70;
// A session tick spends what its budget leaves on the slow-cadence reads of an NVML without
// nvmlDeviceGetFieldValues (per-link NVLink state and counters, ECC aggregates, row remapper,
// retired pages, power limit); a new round of them starts this long after the last one did.
constexpr auto kSlowRound = std::chrono::seconds(30);
// NOT_SUPPORTED answers are remembered for this many ticks, then asked again.
constexpr int kMemoTicks = 600;

// Plausibility limits: values outside are garbage from the driver, dropped as unknown.
constexpr int kMinTempC = -40, kMaxTempC = 150;
constexpr uint32_t kMaxPowerMw = 10'000'000;  // 10 kW
constexpr uint32_t kMaxClockMhz = 20'000;
constexpr uint64_t kMaxMemoryBytes = 1ULL << 44;  // 16 TiB
constexpr uint64_t kMaxCounter = 1ULL << 48;
constexpr uint64_t kMaxRows = 1'000'000;
constexpr unsigned long long kMaxReasonMask = 0xFFFF;

std::optional<uint32_t> InRange(uint32_t v, uint32_t lo, uint32_t hi) {
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

bool ValidPcieWidth(uint32_t w) {
  return w == 1 || w == 2 || w == 4 || w == 8 || w == 12 || w == 16 || w == 32;
}

// State shared between a worker and its owner; outlives both (shared_ptr).
struct WorkerShared {
  Breadcrumb crumb;
  // The GPU's facts as far as the worker got, published after each phase: a hang later in the
  // sample must not cost the readings taken before it.
  std::mutex partial_mu;
  std::optional<GpuFacts> partial;
};

// What one GPU's calls answered before: a call (symbol and its integer arguments) that said
// NOT_SUPPORTED is not asked again; one that succeeded and later says NOT_SUPPORTED is an error.
struct CallMemo {
  std::set<std::string> unsupported, supported;
};

// One GPU's (or the init phase's) calls: counts, remembers NOT_SUPPORTED (with a memo).
class Calls {
 public:
  Calls(const Library& lib, Breadcrumb& crumb, CallMemo* memo = nullptr)
      : lib_(lib), crumb_(crumb), memo_(memo) {}

  template <typename Fn, typename... Args>
  nvmlReturn_t Make(const std::string& symbol, Fn fn, Args... args) {
    if (memo_ == nullptr || fn == nullptr) {
      return nvml::GuardedCall(crumb_, symbol.c_str(), fn, args...);
    }
    std::string key = symbol;
    (AppendKey(key, args), ...);
    if (memo_->unsupported.count(key)) return nvml::NVML_ERROR_NOT_SUPPORTED;
    nvmlReturn_t r = nvml::GuardedCall(crumb_, symbol.c_str(), fn, args...);
    if (r == nvml::NVML_SUCCESS) {
      memo_->supported.insert(key);
    } else if (r == nvml::NVML_ERROR_NOT_SUPPORTED) {
      if (memo_->supported.count(key)) {
        vanished_ = true;
      } else {
        memo_->unsupported.insert(key);
      }
    }
    return r;
  }

  // True once after a call that succeeded earlier answered NOT_SUPPORTED.
  bool TakeVanished() { return std::exchange(vanished_, false); }

  const Library& lib() const { return lib_; }
  Breadcrumb& crumb() { return crumb_; }

 private:
  template <typename A>
  static void AppendKey(std::string& key, A a) {
    if constexpr (std::is_integral_v<A>) key += "/" + std::to_string(a);
  }

  const Library& lib_;
  Breadcrumb& crumb_;
  CallMemo* memo_;
  bool vanished_ = false;
};

#define NVML_CALL(calls, member, ...) \
  (calls).Make((calls).lib().names.member, (calls).lib().api.member, __VA_ARGS__)
#define NVML_CALL0(calls, member) (calls).Make((calls).lib().names.member, (calls).lib().api.member)

// A fixed-size string result: an unterminated buffer is garbage (empty); non-printable bytes
// are replaced.
std::string TerminatedString(const char* buf, size_t size) {
  size_t len = strnlen(buf, size);
  if (len == size) return "";
  return Sanitize(std::string_view(buf, len), size);
}

// Value of a field entry as an unsigned integer; nullopt for errors, negatives, unknown types.
std::optional<uint64_t> FieldUnsigned(const nvmlFieldValue_t& f) {
  if (f.nvmlReturn != nvml::NVML_SUCCESS) return std::nullopt;
  switch (f.valueType) {
    case nvml::NVML_VALUE_TYPE_UNSIGNED_INT:
      return f.value.uiVal;
    case nvml::NVML_VALUE_TYPE_UNSIGNED_LONG:
      return f.value.ulVal;
    case nvml::NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      if (f.value.ullVal == nvml::kValueNotAvailable) return std::nullopt;
      return f.value.ullVal;
    case nvml::NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      if (f.value.sllVal < 0) return std::nullopt;
      return static_cast<uint64_t>(f.value.sllVal);
    case nvml::NVML_VALUE_TYPE_SIGNED_INT:
      if (f.value.siVal < 0) return std::nullopt;
      return static_cast<uint64_t>(f.value.siVal);
    case nvml::NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return f.value.usVal;
    case nvml::NVML_VALUE_TYPE_DOUBLE:
      if (!std::isfinite(f.value.dVal) || f.value.dVal < 0 || f.value.dVal > 1.8e19) {
        return std::nullopt;
      }
      return static_cast<uint64_t>(f.value.dVal);
    default:
      return std::nullopt;
  }
}

std::optional<uint64_t> Counter(std::optional<uint64_t> v, uint64_t max = kMaxCounter) {
  if (!v || *v > max) return std::nullopt;
  return v;
}

std::optional<bool> Flag(std::optional<uint64_t> v) {
  if (!v || *v > 1) return std::nullopt;
  return *v == 1;
}

// Slow-cadence reads of a session GPU on an NVML without nvmlDeviceGetFieldValues, one call
// each, done a few per tick (whatever the tick budget leaves) until a round is complete, and
// their last known values, carried into every tick's facts.
struct SlowWork {
  bool active = false;
  bool started = false;
  TimePoint round_start{};
  int next = 0;  // the next item of the round (see GpuSampler::SlowItem)
  int64_t ticks = 0;
  std::optional<uint64_t> ecc_sbe_aggregate, ecc_dbe_aggregate;
  std::optional<uint32_t> power_limit_mw;
  std::optional<uint64_t> remapped_correctable, remapped_uncorrectable;
  std::optional<bool> remap_pending, remap_failed;
  std::optional<uint64_t> retired_sbe, retired_dbe;
  std::optional<bool> retired_pending;
  std::optional<uint64_t> pcie_tx, pcie_rx;
  // NVLink: the last complete round, and the round in progress (per link: state, 4 counters).
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
             std::chrono::milliseconds window, GpuCarry* carry = nullptr)
      : calls_(lib, shared.crumb, carry ? &carry->memo : &own_memo_),
        carry_(carry),
        shared_(shared),
        index_(index),
        events_(events),
        window_(window) {
    f_.index = index;
  }

  GpuFacts Run() {
    budget_ = kCheckBudget - (NoFields() ? kSecondReadReserveNoFields : kSecondReadReserve);
    TimePoint t_start = SteadyClock::now();
    if (Handle()) {
      RegisterEvents();
      Identity(/*with_vbios=*/false);
      if (!Stop()) Limits(/*with_max_link=*/false);
      Publish();
      TimePoint t_first = SteadyClock::now();
      if (!Stop()) FirstSample();
      if (FaultReason(f_.first.clock_event_reasons)) --budget_;
      Publish();
      if (!Stop() && Busy()) {
        if (Budget(2)) {
          PcieThroughput();
        } else {
          Defer();
        }
      }
      if (!Stop()) std::this_thread::sleep_until(t_first + window_);
      TimePoint t_second = SteadyClock::now();
      budget_ = kCheckBudget;
      if (!Stop()) SecondSample();
      if (!Stop()) CheckTail();
      if (!Stop()) f_.window_s = std::chrono::duration<double>(t_second - t_first).count();
      double total_ms =
          std::chrono::duration<double, std::milli>(SteadyClock::now() - t_start).count();
      double window_ms = std::chrono::duration<double, std::milli>(window_).count();
      f_.sample_ms = std::max(0.0, total_ms - window_ms);
    }
    f_.nvml_calls = shared_.crumb.calls.load();
    return std::move(f_);
  }

  // One tick of a long-lived session: per-boot constants come from `constants` (read once by
  // Run or RunIdentity), the handle from `dev`; counters are read once (into `first`: the
  // session moves them to `second` and puts the previous tick's read in `first`). No window.
  GpuFacts RunTick(const GpuFacts& constants, nvmlDevice_t dev) {
    tick_mode_ = true;
    dev_ = dev;
    budget_ = shared_.crumb.calls.load() + kTickBudget;
    CopyConstants(constants);
    PublishIdentity();
    Publish();
    TimePoint t_start = SteadyClock::now();
    if (!Stop()) FirstSample();
    if (!Stop() && Busy()) TickPcieThroughput();
    if (!Stop() && NoFields() && carry_ != nullptr) SlowReads();
    f_.sample_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t_start).count();
    f_.nvml_calls = shared_.crumb.calls.load();
    return std::move(f_);
  }

  // The per-boot part of Run: handle, event registration, identity, limits, temperature limits.
  GpuFacts RunIdentity() {
    if (Handle()) {
      RegisterEvents();
      Identity(/*with_vbios=*/true);
      if (!Stop()) Limits(/*with_max_link=*/true);
      if (!Stop()) TemperatureLimits();
      if (!Stop()) {
        f_.max_memory_clock_mhz = MaxClock(nvml::NVML_CLOCK_MEM);
        if (!Stop()) f_.max_graphics_clock_mhz = MaxClock(nvml::NVML_CLOCK_GRAPHICS);
      }
    }
    f_.nvml_calls = shared_.crumb.calls.load();
    return std::move(f_);
  }

  nvmlDevice_t device() const { return dev_; }

 private:
  bool Stop() const { return f_.lost; }
  // No batched field values: every fact comes from its own (older) call.
  bool NoFields() const { return api().DeviceGetFieldValues == nullptr; }
  // Room for `n` more calls in this check's or tick's budget.
  bool Budget(int n = 1) const { return shared_.crumb.calls.load() + n <= budget_; }
  // A read left out because the budget was spent.
  void Defer() { ++f_.reads_deferred; }

  void CopyConstants(const GpuFacts& c) {
    f_.name = c.name;
    f_.uuid = c.uuid;
    f_.serial = c.serial;
    f_.vbios = c.vbios;
    f_.pci_bus_id = c.pci_bus_id;
    f_.pci_device_id = c.pci_device_id;
    f_.max_sm_clock_mhz = c.max_sm_clock_mhz;
    f_.max_memory_clock_mhz = c.max_memory_clock_mhz;
    f_.max_graphics_clock_mhz = c.max_graphics_clock_mhz;
    f_.pcie_max_gen = c.pcie_max_gen;
    f_.pcie_max_width = c.pcie_max_width;
    f_.temp_slowdown_c = c.temp_slowdown_c;
    f_.temp_shutdown_c = c.temp_shutdown_c;
    f_.temp_memory_max_c = c.temp_memory_max_c;
    f_.persistence_on = c.persistence_on;            // per boot: read with the identity
    if (NoFields()) f_.ecc_enabled = c.ecc_enabled;  // nvmlDeviceGetEccMode, per boot
  }

  void Publish() {
    f_.nvml_calls = shared_.crumb.calls.load();
    std::lock_guard<std::mutex> lock(shared_.partial_mu);
    shared_.partial = f_;
  }

  void PublishIdentity() {
    std::lock_guard<std::mutex> lock(shared_.crumb.mu);
    shared_.crumb.uuid = f_.uuid;
    shared_.crumb.pci_bus_id = f_.pci_bus_id;
    shared_.crumb.serial = f_.serial;
    shared_.crumb.name = f_.name;
  }

  // Classifies a return: true on success. NOT_SUPPORTED / FUNCTION_NOT_FOUND are silent absence.
  bool Ok(nvmlReturn_t r, const std::string& symbol) {
    if (r == nvml::NVML_SUCCESS) return true;
    if (r == nvml::NVML_ERROR_NOT_SUPPORTED && calls_.TakeVanished()) {
      // Supported earlier in this session: the GPU's state changed under the driver.
      if (f_.errors.size() < kMaxErrorsPerGpu) {
        f_.errors.push_back(
            {symbol, r, nvml::DescribeReturn(&calls_.lib(), r) + ", after it answered before"});
      }
      return false;
    }
    if (r == nvml::NVML_ERROR_NOT_SUPPORTED || r == nvml::NVML_ERROR_FUNCTION_NOT_FOUND) {
      return false;
    }
    if (r == nvml::NVML_ERROR_GPU_IS_LOST && !f_.lost) {
      f_.lost = true;
      f_.lost_call = symbol;
    }
    if (f_.errors.size() < kMaxErrorsPerGpu) {
      f_.errors.push_back({symbol, r, nvml::DescribeReturn(&calls_.lib(), r)});
    }
    return false;
  }

  const nvml::SymbolNames& names() const { return calls_.lib().names; }
  const nvml::Api& api() const { return calls_.lib().api; }

  bool Handle() {
    nvmlReturn_t r =
        NVML_CALL(calls_, DeviceGetHandleByIndex, static_cast<unsigned>(index_), &dev_);
    if (!Ok(r, names().DeviceGetHandleByIndex)) {
      dev_ = nullptr;
      return false;
    }
    return true;
  }

  void RegisterEvents() {
    if (events_ == nullptr) return;
    // NOT_SUPPORTED is common (and may mean nothing registered); never an error for us.
    nvmlReturn_t r =
        NVML_CALL(calls_, DeviceRegisterEvents, dev_, nvml::kEventTypeXidCriticalError, events_);
    if (r == nvml::NVML_ERROR_GPU_IS_LOST) Ok(r, names().DeviceRegisterEvents);
  }

  std::string ReadString(nvmlReturn_t (*fn)(nvmlDevice_t, char*, unsigned),
                         const std::string& symbol, unsigned size) {
    char buf[128];
    std::memset(buf, 0, sizeof buf);
    if (size >= sizeof buf) size = sizeof buf - 1;
    if (!Ok(calls_.Make(symbol, fn, dev_, buf, size), symbol)) return "";
    return TerminatedString(buf, size);
  }

  void Identity(bool with_vbios) {
    f_.name = ReadString(api().DeviceGetName, names().DeviceGetName, nvml::kDeviceNameBufferSize);
    if (Stop()) return;
    f_.uuid = ReadString(api().DeviceGetUuid, names().DeviceGetUuid, nvml::kDeviceUuidBufferSize);
    if (Stop()) return;
    f_.serial = SerialOrEmpty(
        ReadString(api().DeviceGetSerial, names().DeviceGetSerial, nvml::kDeviceSerialBufferSize));
    if (Stop()) return;
    nvml::nvmlPciInfo_t pci;
    std::memset(&pci, 0, sizeof pci);
    if (Ok(NVML_CALL(calls_, DeviceGetPciInfo, dev_, &pci), names().DeviceGetPciInfo)) {
      f_.pci_bus_id = NormalizePciBusId(TerminatedString(pci.busId, sizeof pci.busId));
      if (f_.pci_bus_id.empty() && pci.bus <= 0xff && pci.device <= 0x1f) {
        f_.pci_bus_id = FormatPciBusId({pci.domain, pci.bus, pci.device, 0});
      }
      if ((pci.pciDeviceId & 0xffff) == 0x10de) f_.pci_device_id = pci.pciDeviceId;
    }
    if (Stop()) return;
    PublishIdentity();
    if (with_vbios) Vbios();
  }

  void Vbios() {
    f_.vbios = ReadString(api().DeviceGetVbiosVersion, names().DeviceGetVbiosVersion,
                          nvml::kDeviceVbiosVersionBufferSize);
  }

  // The maximum PCIe link, which the degradation rule compares a busy GPU's current link with.
  void MaxPcieLink() {
    if (auto g = ReadUint(api().DeviceGetMaxPcieLinkGeneration,
                          names().DeviceGetMaxPcieLinkGeneration)) {
      f_.pcie_max_gen = InRange(*g, 1, 7);
    }
    if (Stop()) return;
    if (auto w = ReadUint(api().DeviceGetMaxPcieLinkWidth, names().DeviceGetMaxPcieLinkWidth);
        w && ValidPcieWidth(*w)) {
      f_.pcie_max_width = *w;
    }
  }

  std::optional<uint32_t> ReadUint(nvmlReturn_t (*fn)(nvmlDevice_t, unsigned*),
                                   const std::string& symbol) {
    unsigned v = 0;
    if (!Ok(calls_.Make(symbol, fn, dev_, &v), symbol)) return std::nullopt;
    return v;
  }
  std::optional<uint32_t> ReadUintArg(nvmlReturn_t (*fn)(nvmlDevice_t, int, unsigned*),
                                      const std::string& symbol, int arg) {
    unsigned v = 0;
    if (!Ok(calls_.Make(symbol, fn, dev_, arg, &v), symbol)) return std::nullopt;
    return v;
  }

  std::optional<int> Threshold(int which) {
    auto v = ReadUintArg(api().DeviceGetTemperatureThreshold, names().DeviceGetTemperatureThreshold,
                         which);
    if (!v || *v < 1 || *v > static_cast<uint32_t>(kMaxTempC) + 50) return std::nullopt;
    return static_cast<int>(*v);
  }

  std::optional<uint32_t> MaxClock(int type) {
    auto v = ReadUintArg(api().DeviceGetMaxClockInfo, names().DeviceGetMaxClockInfo, type);
    return v ? InRange(*v, 1, kMaxClockMhz) : std::nullopt;
  }

  // Temperature limits (absolute degrees C) from nvmlDeviceGetTemperatureThreshold. Fields
  // 193-195 are not used: they report the distance to the limit (nvidia-smi's "T.Limit"), not
  // the limit itself.
  // The memory limit only matters with the memory temperature, a batched field.
  void TemperatureLimits() {
    f_.temp_shutdown_c = Threshold(nvml::NVML_TEMPERATURE_THRESHOLD_SHUTDOWN);
    if (Stop()) return;
    f_.temp_slowdown_c = Threshold(nvml::NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
    if (Stop() || NoFields()) return;
    f_.temp_memory_max_c = Threshold(nvml::NVML_TEMPERATURE_THRESHOLD_MEM_MAX);
  }

  // nvmlDeviceGetEccMode: the current mode (the pending one takes effect at the next reboot).
  void EccMode() {
    int current = -1, pending = -1;
    if (Ok(NVML_CALL(calls_, DeviceGetEccMode, dev_, &current, &pending),
           names().DeviceGetEccMode) &&
        (current == 0 || current == 1)) {
      f_.ecc_enabled = current == 1;
    }
  }

  // A check reads the maximum link only for a busy GPU (FirstSample): an idle one is not judged.
  void Limits(bool with_max_link) {
    f_.max_sm_clock_mhz = MaxClock(nvml::NVML_CLOCK_SM);
    if (Stop()) return;
    // ECC mode comes with the batch otherwise. The memory and graphics maxima, which no rule
    // judges, are left to the end of a check (and to the identity of a session).
    if (NoFields()) EccMode();
    if (Stop()) return;
    int mode = -1;
    if (Ok(NVML_CALL(calls_, DeviceGetPersistenceMode, dev_, &mode),
           names().DeviceGetPersistenceMode) &&
        (mode == 0 || mode == 1)) {
      f_.persistence_on = mode == 1;
    }
    if (Stop()) return;
    if (with_max_link) MaxPcieLink();
  }

  // Entries of the first batched read: counters, flags, NVLink count and per-link state, power.
  std::vector<nvmlFieldValue_t> FirstBatch() const {
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
    for (unsigned link = 0; link < kBatchedNvLinks; ++link) add(nvml::kFieldNvLinkGetState, link);
    return v;
  }

  // Reads `batch` in one call. False when the call itself failed (entries then all absent).
  bool ReadBatch(std::vector<nvmlFieldValue_t>& batch) {
    nvmlReturn_t r =
        NVML_CALL(calls_, DeviceGetFieldValues, dev_, static_cast<int>(batch.size()), batch.data());
    return Ok(r, names().DeviceGetFieldValues);
  }

  static std::optional<uint64_t> Find(const std::vector<nvmlFieldValue_t>& batch, unsigned id,
                                      unsigned scope = 0) {
    for (const auto& f : batch) {
      if (f.fieldId == id && f.scopeId == scope) return FieldUnsigned(f);
    }
    return std::nullopt;
  }

  void CountersFromBatch(const std::vector<nvmlFieldValue_t>& b, GpuCounterRead& c) {
    c.ecc_sbe_volatile = Counter(Find(b, nvml::kFieldEccSbeVolatileTotal));
    c.ecc_dbe_volatile = Counter(Find(b, nvml::kFieldEccDbeVolatileTotal));
    c.ecc_sbe_aggregate = Counter(Find(b, nvml::kFieldEccSbeAggregateTotal));
    c.ecc_dbe_aggregate = Counter(Find(b, nvml::kFieldEccDbeAggregateTotal));
    c.pcie_replays = Counter(Find(b, nvml::kFieldPcieReplayCounter));
    c.nvlink_crc_flit_errors = Counter(Find(b, nvml::kFieldNvLinkCrcFlitErrorTotal));
    c.nvlink_crc_data_errors = Counter(Find(b, nvml::kFieldNvLinkCrcDataErrorTotal));
    c.nvlink_replay_errors = Counter(Find(b, nvml::kFieldNvLinkReplayErrorTotal));
    c.nvlink_recovery_errors = Counter(Find(b, nvml::kFieldNvLinkRecoveryErrorTotal));
  }

  // Without nvmlDeviceGetFieldValues (very old drivers): the per-metric calls, each under the
  // budget. The volatile ECC totals and the replay counter every read (the aggregate totals at
  // the end of a check, at the slow cadence in a session); ECC counters not at all while ECC is
  // off. The row remapper, or where it is unsupported the retired pages, in a check's
  // first read (a session: slow cadence).
  void CountersFallback(GpuCounterRead& c, bool first) {
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
  void EccAggregatesFallback(GpuCounterRead& c) {
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
  bool RemapFallback() {
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
  std::optional<uint64_t> RetiredCount(int cause) {
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

  std::optional<bool> RetiredPending() {
    int state = -1;
    if (Ok(NVML_CALL(calls_, DeviceGetRetiredPagesPendingStatus, dev_, &state),
           names().DeviceGetRetiredPagesPendingStatus) &&
        (state == 0 || state == 1)) {
      return state == 1;
    }
    return std::nullopt;
  }

  void RetiredFallback() {
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

  std::optional<unsigned long long> ClockReasons() {
    unsigned long long mask = 0;
    if (!Ok(NVML_CALL(calls_, DeviceGetCurrentClocksEventReasons, dev_, &mask),
            names().DeviceGetCurrentClocksEventReasons) ||
        mask > kMaxReasonMask) {
      return std::nullopt;
    }
    return mask;
  }

  void Memory() {
    if (api().DeviceGetMemoryInfoV2 != nullptr) {
      nvml::nvmlMemory_v2_t m;
      std::memset(&m, 0, sizeof m);
      m.version = nvml::kMemoryV2Version;
      nvmlReturn_t r = NVML_CALL(calls_, DeviceGetMemoryInfoV2, dev_, &m);
      if (r == nvml::NVML_SUCCESS) {
        if (m.total > 0 && m.total <= kMaxMemoryBytes && m.used <= m.total) {
          f_.memory_total_bytes = m.total;
          f_.memory_used_bytes = m.used;
        }
        return;
      }
      // Version mismatch or unsupported: fall back to v1. Other errors are recorded.
      if (r != nvml::NVML_ERROR_ARGUMENT_VERSION_MISMATCH && r != nvml::NVML_ERROR_NOT_SUPPORTED) {
        Ok(r, names().DeviceGetMemoryInfoV2);
        return;
      }
    }
    nvml::nvmlMemory_t m;
    std::memset(&m, 0, sizeof m);
    if (Ok(NVML_CALL(calls_, DeviceGetMemoryInfo, dev_, &m), names().DeviceGetMemoryInfo) &&
        m.total > 0 && m.total <= kMaxMemoryBytes && m.used <= m.total) {
      f_.memory_total_bytes = m.total;
      f_.memory_used_bytes = m.used;
    }
  }

  void Temperature() {
    if (api().DeviceGetTemperature != nullptr) {
      if (auto t = ReadUintArg(api().DeviceGetTemperature, names().DeviceGetTemperature,
                               nvml::NVML_TEMPERATURE_GPU);
          t && *t <= static_cast<uint32_t>(kMaxTempC)) {
        f_.temp_c = static_cast<int>(*t);
      }
      return;
    }
    nvml::nvmlTemperature_t t;
    std::memset(&t, 0, sizeof t);
    t.version = nvml::kTemperatureV1Version;
    t.sensorType = nvml::NVML_TEMPERATURE_GPU;
    if (Ok(NVML_CALL(calls_, DeviceGetTemperatureV, dev_, &t), names().DeviceGetTemperatureV) &&
        t.temperature >= kMinTempC && t.temperature <= kMaxTempC) {
      f_.temp_c = t.temperature;
    }
  }

  void Processes() {
    if (api().DeviceGetComputeRunningProcesses != nullptr) {
      std::vector<nvml::nvmlProcessInfo_t> buf(64);
      for (int attempt = 0; attempt < 3; ++attempt) {
        unsigned count = static_cast<unsigned>(buf.size());
        nvmlReturn_t r =
            NVML_CALL(calls_, DeviceGetComputeRunningProcesses, dev_, &count, buf.data());
        if (r == nvml::NVML_ERROR_INSUFFICIENT_SIZE && count > buf.size() &&
            count <= kMaxProcesses) {
          buf.resize(count + 16);  // slack: the list can grow between calls
          continue;
        }
        if (!Ok(r, names().DeviceGetComputeRunningProcesses) || count > buf.size()) return;
        f_.processes = ToGpuProcesses(buf, count);
        return;
      }
      return;
    }
    std::vector<nvml::nvmlProcessInfo_v1_t> buf(64);
    unsigned count = static_cast<unsigned>(buf.size());
    if (!Ok(NVML_CALL(calls_, DeviceGetComputeRunningProcessesV1, dev_, &count, buf.data()),
            names().DeviceGetComputeRunningProcessesV1) ||
        count > buf.size()) {
      return;
    }
    f_.processes = ToGpuProcesses(buf, count);
  }

  // Both process structs (v1 and v2/v3) carry pid and usedGpuMemory; pid 0 entries are padding.
  template <typename Info>
  static std::vector<GpuProcess> ToGpuProcesses(const std::vector<Info>& buf, unsigned count) {
    std::vector<GpuProcess> procs;
    for (unsigned i = 0; i < count && i < buf.size(); ++i) {
      if (buf[i].pid == 0) continue;
      GpuProcess p;
      p.pid = buf[i].pid;
      if (buf[i].usedGpuMemory != nvml::kValueNotAvailable &&
          buf[i].usedGpuMemory <= kMaxMemoryBytes) {
        p.used_bytes = buf[i].usedGpuMemory;
      }
      procs.push_back(std::move(p));
    }
    return procs;
  }

  // Without batched fields (older drivers): ask each link until the driver says there is none.
  void NvLinksPerCall() {
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

  void NvLinks(const std::vector<nvmlFieldValue_t>& batch, bool batch_ok) {
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

  void FirstSample() {
    nvml::nvmlUtilization_t u{};
    if (Ok(NVML_CALL(calls_, DeviceGetUtilizationRates, dev_, &u),
           names().DeviceGetUtilizationRates) &&
        u.gpu <= 100 && u.memory <= 100) {
      f_.util_gpu_pct = u.gpu;
      f_.util_memory_pct = u.memory;
    }
    Publish();
    if (Stop()) return;
    Memory();
    Publish();
    if (Stop()) return;
    Temperature();
    Publish();
    if (Stop()) return;
    auto clock = [&](int type) -> std::optional<uint32_t> {
      auto v = ReadUintArg(api().DeviceGetClockInfo, names().DeviceGetClockInfo, type);
      return v ? InRange(*v, 0, kMaxClockMhz) : std::nullopt;
    };
    f_.sm_clock_mhz = clock(nvml::NVML_CLOCK_SM);
    Publish();
    if (Stop()) return;
    f_.memory_clock_mhz = clock(nvml::NVML_CLOCK_MEM);
    Publish();
    if (Stop()) return;
    f_.first.clock_event_reasons = ClockReasons();
    Publish();
    if (Stop()) return;
    if (auto fan = ReadUint(api().DeviceGetFanSpeed, names().DeviceGetFanSpeed)) {
      f_.fan_pct = InRange(*fan, 0, 100);
    }
    Publish();
    if (Stop()) return;
    if (auto g = ReadUint(api().DeviceGetCurrPcieLinkGeneration,
                          names().DeviceGetCurrPcieLinkGeneration)) {
      f_.pcie_gen = InRange(*g, 1, 7);
    }
    Publish();
    if (Stop()) return;
    if (auto w = ReadUint(api().DeviceGetCurrPcieLinkWidth, names().DeviceGetCurrPcieLinkWidth);
        w && ValidPcieWidth(*w)) {
      f_.pcie_width = *w;
    }
    Publish();
    if (Stop()) return;
    if (!tick_mode_ && Busy() && Budget(2)) {  // an idle GPU's: at the end (CheckTail)
      MaxPcieLink();
      Publish();
      if (Stop()) return;
    }

    std::vector<nvmlFieldValue_t> batch = FirstBatch();
    bool batch_ok = api().DeviceGetFieldValues != nullptr && ReadBatch(batch);
    Publish();
    if (Stop()) return;
    if (batch_ok) {
      CountersFromBatch(batch, f_.first);
      f_.ecc_enabled = Flag(Find(batch, nvml::kFieldEccCurrent));
      f_.retired_pages_sbe = Counter(Find(batch, nvml::kFieldRetiredSbe), kMaxRows);
      f_.retired_pages_dbe = Counter(Find(batch, nvml::kFieldRetiredDbe), kMaxRows);
      f_.retired_pages_pending = Flag(Find(batch, nvml::kFieldRetiredPending));
      f_.remapped_rows_correctable =
          Counter(Find(batch, nvml::kFieldRemappedCorrectable), kMaxRows);
      f_.remapped_rows_uncorrectable =
          Counter(Find(batch, nvml::kFieldRemappedUncorrectable), kMaxRows);
      f_.remap_pending = Flag(Find(batch, nvml::kFieldRemappedPending));
      f_.remap_failed = Flag(Find(batch, nvml::kFieldRemappedFailure));
      if (auto mt = Find(batch, nvml::kFieldMemoryTemp); mt && *mt <= kMaxTempC) {
        f_.memory_temp_c = static_cast<int>(*mt);
      }
      if (auto p = Find(batch, nvml::kFieldPowerInstant); p && *p <= kMaxPowerMw) {
        f_.power_mw = static_cast<uint32_t>(*p);
      }
      if (auto p = Find(batch, nvml::kFieldPowerCurrentLimit); p && *p > 0 && *p <= kMaxPowerMw) {
        f_.power_limit_mw = static_cast<uint32_t>(*p);
      }
    } else {
      CountersFallback(f_.first, true);
    }
    Publish();
    if (Stop()) return;
    // Power fields are recent (R535+); older drivers answer through the dedicated calls.
    if (!f_.power_mw && Budget()) {
      if (auto p = ReadUint(api().DeviceGetPowerUsage, names().DeviceGetPowerUsage)) {
        f_.power_mw = InRange(*p, 0, kMaxPowerMw);
      }
      Publish();
      if (Stop()) return;
    }
    // A session without the batch reads the limit at the slow cadence.
    if (!f_.power_limit_mw && !(tick_mode_ && NoFields()) && Budget()) {
      if (auto p =
              ReadUint(api().DeviceGetEnforcedPowerLimit, names().DeviceGetEnforcedPowerLimit)) {
        f_.power_limit_mw = InRange(*p, 1, kMaxPowerMw);
      }
      Publish();
      if (Stop()) return;
    }
    if (Budget()) {
      Processes();
    } else {
      Defer();
    }
    Publish();
    if (Stop()) return;
    bool cool = f_.temp_c && *f_.temp_c < kThresholdsMatterFromC;
    if (!tick_mode_ && !(NoFields() && cool)) {  // per-boot: a session reads them once
      if (Budget(NoFields() ? 2 : 3)) {
        TemperatureLimits();
      } else {
        Defer();
      }
    }
    Publish();
    if (Stop()) return;
    // Without the batch: per-link calls at the end of a check (CheckTail), at the slow cadence
    // in a session (SlowReads).
    if (batch_ok) NvLinks(batch, batch_ok);
  }

  // The end of a check: what no rule needs first, as far as the budget goes (without the batch:
  // the lifetime ECC totals and the per-link NVLink calls; then the clocks only metrics show).
  void CheckTail() {
    if (!f_.pcie_max_gen && !f_.pcie_max_width && Budget(2)) MaxPcieLink();
    if (Stop()) return;
    if (Budget()) {
      Vbios();
    } else {
      Defer();
    }
    if (Stop()) return;
    if (NoFields()) {
      EccAggregatesFallback(f_.second);
      if (Stop()) return;
      NvLinksPerCall();
      if (Stop()) return;
    }
    auto clock = [&](auto read, int type, std::optional<uint32_t>& out) {
      if (Stop()) return;
      if (!Budget()) {
        Defer();
        return;
      }
      out = read(type);
    };
    clock([&](int t) { return MaxClock(t); }, nvml::NVML_CLOCK_MEM, f_.max_memory_clock_mhz);
    clock([&](int t) { return MaxClock(t); }, nvml::NVML_CLOCK_GRAPHICS, f_.max_graphics_clock_mhz);
    clock(
        [&](int t) -> std::optional<uint32_t> {
          auto v = ReadUintArg(api().DeviceGetClockInfo, names().DeviceGetClockInfo, t);
          return v ? InRange(*v, 0, kMaxClockMhz) : std::nullopt;
        },
        nvml::NVML_CLOCK_GRAPHICS, f_.graphics_clock_mhz);
  }

  // PCIe throughput in a session tick: both directions when the budget leaves room for them and
  // two slow reads; every other tick also when it does not (the slow reads then wait a tick).
  // A tick that skips it carries the last values.
  void TickPcieThroughput() {
    SlowWork* slow = carry_ ? &carry_->slow : nullptr;
    bool room = Budget(2 + (NoFields() ? 2 : 0)) || (Budget(2) && carry_ && carry_->ticks % 2);
    if (room) {
      PcieThroughput();
      if (slow) {
        slow->pcie_tx = f_.pcie_tx_bytes_per_s;
        slow->pcie_rx = f_.pcie_rx_bytes_per_s;
      }
    } else if (slow) {
      f_.pcie_tx_bytes_per_s = slow->pcie_tx;
      f_.pcie_rx_bytes_per_s = slow->pcie_rx;
    }
  }

  // One slow-cadence item (SlowWork): false when the round is complete. Each costs at most one
  // call; a remembered NOT_SUPPORTED costs none.
  static constexpr int kSlowFixedItems = 7;
  static constexpr int kSlowPerLink = 5;  // state + 4 error counters
  bool SlowItem(SlowWork& w, int item) {
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
        break;
    }
    int link = (item - kSlowFixedItems) / kSlowPerLink;
    int part = (item - kSlowFixedItems) % kSlowPerLink;
    if (link >= static_cast<int>(nvml::kNvLinkMaxLinks)) return false;
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

  // A round is complete: its links and the counter sums (over every link, when each was read)
  // become the known values.
  static void FinishRound(SlowWork& w) {
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

  // The slow-cadence reads of a session tick without the batch, then every known value into
  // this tick's facts.
  void SlowReads() {
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

  bool Busy() const {
    return (f_.util_gpu_pct && *f_.util_gpu_pct > 0) || (f_.processes && !f_.processes->empty());
  }

  // NVML reports KB/s (1024 bytes) measured over 20 ms; facts carry bytes per second.
  void PcieThroughput() {
    auto read = [&](int counter) -> std::optional<uint64_t> {
      auto kb =
          ReadUintArg(api().DeviceGetPcieThroughput, names().DeviceGetPcieThroughput, counter);
      if (!kb) return std::nullopt;
      return static_cast<uint64_t>(*kb) * 1024;
    };
    f_.pcie_tx_bytes_per_s = read(nvml::NVML_PCIE_UTIL_TX_BYTES);
    if (Stop()) return;
    f_.pcie_rx_bytes_per_s = read(nvml::NVML_PCIE_UTIL_RX_BYTES);
  }

  static bool FaultReason(std::optional<unsigned long long> mask) {
    constexpr unsigned long long kFaultBits =
        nvml::kClocksReasonHwSlowdown | nvml::kClocksReasonSwThermal |
        nvml::kClocksReasonHwThermal | nvml::kClocksReasonHwPowerBrake;
    return mask && (*mask & kFaultBits) != 0;
  }

  void SecondSample() {
    if (!NoFields() && Budget()) {
      std::vector<nvmlFieldValue_t> batch;
      for (unsigned id : {nvml::kFieldEccSbeVolatileTotal, nvml::kFieldEccDbeVolatileTotal,
                          nvml::kFieldEccSbeAggregateTotal, nvml::kFieldEccDbeAggregateTotal,
                          nvml::kFieldPcieReplayCounter, nvml::kFieldNvLinkCrcFlitErrorTotal,
                          nvml::kFieldNvLinkCrcDataErrorTotal, nvml::kFieldNvLinkReplayErrorTotal,
                          nvml::kFieldNvLinkRecoveryErrorTotal}) {
        nvmlFieldValue_t f;
        std::memset(&f, 0, sizeof f);
        f.fieldId = id;
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

  CallMemo own_memo_;  // a check's: NOT_SUPPORTED is not asked twice in one check
  Calls calls_;
  GpuCarry* carry_;
  int budget_ = kCheckBudget;
  WorkerShared& shared_;
  int index_;
  nvmlEventSet_t events_;
  std::chrono::milliseconds window_;
  nvmlDevice_t dev_ = nullptr;
  bool tick_mode_ = false;
  GpuFacts f_;
};

struct InitOutcome {
  NvmlStatus status;
  DriverFacts driver;
  std::shared_ptr<const Library> lib;
  nvmlEventSet_t events = nullptr;
};

InitOutcome RunInit(const NvmlSampleOptions& opts, Breadcrumb& crumb) {
  InitOutcome out;
  auto loaded = nvml::LoadNvml(opts.library_path);
  if (!loaded.ok()) {
    out.status.state = loaded.status().code() == StatusCode::kNotFound ? NvmlState::kLibraryMissing
                                                                       : NvmlState::kSymbolMissing;
    out.status.error = loaded.status().message();
    return out;
  }
  out.lib = *loaded;
  const Library& lib = *out.lib;
  out.status.library_path = lib.path;
  out.status.library_version = lib.file_version;
  Calls calls(lib, crumb);
  nvmlReturn_t r = NVML_CALL0(calls, Init);
  if (r != nvml::NVML_SUCCESS) {
    out.status.state = NvmlState::kInitFailed;
    out.status.init_return = r;
    out.status.error = lib.names.Init + ": " + nvml::DescribeReturn(&lib, r);
    out.status.system_calls = crumb.calls.load();
    return out;
  }
  unsigned count = 0;
  r = NVML_CALL(calls, DeviceGetCount, &count);
  if (r != nvml::NVML_SUCCESS || count > 1024) {
    out.status.state = NvmlState::kInitFailed;
    out.status.init_return = r;
    out.status.error = r != nvml::NVML_SUCCESS
                           ? lib.names.DeviceGetCount + ": " + nvml::DescribeReturn(&lib, r)
                           : "implausible device count " + std::to_string(count);
    out.status.system_calls = crumb.calls.load();
    return out;
  }
  out.status.state = NvmlState::kOk;
  out.status.device_count = static_cast<int>(count);

  char buf[nvml::kSystemDriverVersionBufferSize + 1] = {};
  if (NVML_CALL(calls, SystemGetDriverVersion, buf, nvml::kSystemDriverVersionBufferSize) ==
      nvml::NVML_SUCCESS) {
    out.driver.driver_version = TerminatedString(buf, nvml::kSystemDriverVersionBufferSize);
  }
  std::memset(buf, 0, sizeof buf);
  if (NVML_CALL(calls, SystemGetNvmlVersion, buf, nvml::kSystemNvmlVersionBufferSize) ==
      nvml::NVML_SUCCESS) {
    out.driver.nvml_version = TerminatedString(buf, nvml::kSystemNvmlVersionBufferSize);
  }
  int cuda = 0;
  if (NVML_CALL(calls, SystemGetCudaDriverVersion, &cuda) == nvml::NVML_SUCCESS && cuda >= 1000 &&
      cuda < 100000) {
    out.driver.cuda_driver_version = cuda;
  }
  if (opts.read_events && count > 0 && lib.api.DeviceRegisterEvents != nullptr &&
      lib.api.EventSetWait != nullptr) {
    nvmlEventSet_t set = nullptr;
    if (NVML_CALL(calls, EventSetCreate, &set) == nvml::NVML_SUCCESS) out.events = set;
  }
  out.status.system_calls = crumb.calls.load();
  return out;
}

struct DrainOutcome {
  std::vector<std::pair<nvmlDevice_t, uint64_t>> xids;
  int calls = 0;
};

DrainOutcome DrainEvents(const Library& lib, Breadcrumb& crumb, nvmlEventSet_t set, bool free_set) {
  DrainOutcome out;
  Calls calls(lib, crumb);
  for (int i = 0; i < kMaxEventsDrained; ++i) {
    nvml::nvmlEventData_t data;
    std::memset(&data, 0, sizeof data);
    nvmlReturn_t r = NVML_CALL(calls, EventSetWait, set, &data, 0u);  // timeout 0: never block
    if (r != nvml::NVML_SUCCESS) break;  // TIMEOUT: no more pending events
    if (data.eventType == nvml::kEventTypeXidCriticalError) {
      out.xids.emplace_back(data.device, data.eventData);
    }
  }
  if (free_set) NVML_CALL(calls, EventSetFree, set);
  out.calls = crumb.calls.load();
  return out;
}

double MsSince(TimePoint t) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t).count();
}

}  // namespace

GpuLayerFacts SampleNvml(const NvmlSampleOptions& opts) {
  GpuLayerFacts facts;
  TimePoint start = SteadyClock::now();

  // Phase 1: init.
  auto init_shared = std::make_shared<WorkerShared>();
  auto init_pending =
      StartDetached([opts, init_shared] { return RunInit(opts, init_shared->crumb); });
  if (init_pending == nullptr) {
    facts.nvml.state = NvmlState::kInitFailed;
    facts.nvml.error = "could not start a worker thread";
    return facts;
  }
  // Each phase waits for the earlier of the check's deadline and the NVML timeout; only the
  // timeout expiring proves a hang (a short --deadline merely leaves the phase unfinished).
  bool init_cut_by_check = opts.deadline < start + opts.timeout;
  TimePoint init_deadline = std::min(opts.deadline, start + opts.timeout);
  // Loading the library takes milliseconds; even a check with almost no time left waits that
  // long, so a missing library reads as "no driver", not as an init that did not finish.
  init_deadline = std::max(init_deadline, start + std::chrono::milliseconds(150));
  if (!init_pending->WaitUntil(init_deadline)) {
    CountAbandonedWorker();
    const char* call = init_shared->crumb.current.load();
    std::string name = call ? call : "nvmlInit_v2";
    facts.nvml.state = init_cut_by_check ? NvmlState::kInitUnfinished : NvmlState::kInitHung;
    facts.nvml.error = init_cut_by_check ? name + " not finished in the check's deadline"
                                         : name + " did not return";
    NvmlHang hang{
        call ? call : "loading libnvidia-ml", std::nullopt, "", "", "", "", MsSince(start)};
    hang.check_deadline = init_cut_by_check;
    facts.hangs.push_back(std::move(hang));
    return facts;
  }
  InitOutcome init = init_pending->Take();
  facts.nvml = init.status;
  facts.nvml.init_ms = MsSince(start);
  facts.driver = init.driver;
  if (init.status.state != NvmlState::kOk) return facts;
  std::shared_ptr<const Library> lib = init.lib;

  // Phase 2: one worker per GPU.
  int count = *init.status.device_count;
  struct Worker {
    std::shared_ptr<WorkerShared> shared;
    std::shared_ptr<PendingResult<std::pair<GpuFacts, nvmlDevice_t>>> pending;
  };
  std::vector<Worker> workers;
  TimePoint gpu_start = SteadyClock::now();
  for (int i = 0; i < count; ++i) {
    auto shared = std::make_shared<WorkerShared>();
    auto window = opts.window;
    nvmlEventSet_t events = init.events;
    auto pending = StartDetached([lib, shared, i, events, window] {
      GpuSampler sampler(*lib, *shared, i, events, window);
      GpuFacts f = sampler.Run();
      return std::make_pair(std::move(f), sampler.device());
    });
    workers.push_back({shared, pending});
  }
  bool gpu_cut_by_check = opts.deadline < gpu_start + opts.window + opts.timeout;
  TimePoint gpu_deadline = std::min(opts.deadline, gpu_start + opts.window + opts.timeout);
  std::vector<std::pair<nvmlDevice_t, int>> handles;
  for (int i = 0; i < count; ++i) {
    Worker& w = workers[i];
    if (w.pending != nullptr && w.pending->WaitUntil(gpu_deadline)) {
      auto [f, dev] = w.pending->Take();
      if (dev != nullptr) handles.emplace_back(dev, i);
      facts.gpus.push_back(std::move(f));
      continue;
    }
    GpuFacts f;
    {
      std::lock_guard<std::mutex> lock(w.shared->partial_mu);
      if (w.shared->partial) f = *w.shared->partial;  // readings taken before the hang
    }
    f.index = i;
    f.hung = w.pending != nullptr && !gpu_cut_by_check;
    f.unfinished = w.pending != nullptr && gpu_cut_by_check;
    NvmlHang hang;
    hang.gpu_index = i;
    hang.check_deadline = gpu_cut_by_check;
    {
      std::lock_guard<std::mutex> lock(w.shared->crumb.mu);
      if (f.uuid.empty()) f.uuid = w.shared->crumb.uuid;
      if (f.pci_bus_id.empty()) f.pci_bus_id = w.shared->crumb.pci_bus_id;
      if (f.serial.empty()) f.serial = w.shared->crumb.serial;
      if (f.name.empty()) f.name = w.shared->crumb.name;
      hang.uuid = f.uuid;
      hang.pci_bus_id = f.pci_bus_id;
      hang.serial = f.serial;
      hang.name = f.name;
    }
    f.nvml_calls = w.shared->crumb.calls.load();
    if (w.pending == nullptr) {
      f.errors.push_back({"worker", 0, "could not start a worker thread"});
    } else {
      CountAbandonedWorker();
      const char* call = w.shared->crumb.current.load();
      hang.call = call ? call : "(between NVML calls)";
      hang.waited_ms = MsSince(gpu_start);
      facts.hangs.push_back(std::move(hang));
    }
    facts.gpus.push_back(std::move(f));
  }
  // Phase 3 and 4: drain Xid events without blocking, then shut down. After a hang the events
  // of the other GPUs are still drained (a GPU that hangs is often the one with the Xid), but
  // nvmlShutdown is skipped: it would wait for the stuck call's locks.
  bool hung_before = !facts.hangs.empty();
  auto tail_shared = std::make_shared<WorkerShared>();
  nvmlEventSet_t events = init.events;
  if (hung_before && events == nullptr) return facts;
  auto tail = StartDetached([lib, tail_shared, events, hung_before] {
    DrainOutcome d;
    if (events != nullptr) d = DrainEvents(*lib, tail_shared->crumb, events, !hung_before);
    if (!hung_before) {
      Calls calls(*lib, tail_shared->crumb);
      NVML_CALL0(calls, Shutdown);
    }
    d.calls = tail_shared->crumb.calls.load();
    return d;
  });
  TimePoint tail_start = SteadyClock::now();
  bool tail_cut_by_check = opts.deadline < tail_start + opts.timeout;
  // After a hang the check has already waited a whole timeout: the drain gets a short budget.
  TimePoint tail_deadline = std::min(
      opts.deadline, tail_start + (hung_before ? std::chrono::milliseconds(200) : opts.timeout));
  if (tail == nullptr) return facts;
  if (!tail->WaitUntil(tail_deadline)) {
    CountAbandonedWorker();
    if (hung_before) return facts;  // the wedged driver took the event API with it
    const char* call = tail_shared->crumb.current.load();
    NvmlHang hang{
        call ? call : "(between NVML calls)", std::nullopt, "", "", "", "", MsSince(start)};
    hang.check_deadline = tail_cut_by_check;
    facts.hangs.push_back(std::move(hang));
    return facts;
  }
  DrainOutcome d = tail->Take();
  facts.nvml.system_calls += d.calls;
  for (const auto& [dev, xid] : d.xids) {
    NvmlXidEvent e;
    e.xid = xid;
    e.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    for (const auto& [h, index] : handles) {
      if (h == dev) e.gpu_index = index;
    }
    facts.nvml_xid_events.push_back(e);
  }
  return facts;
}

// ---- NvmlSession (session.h) ----

namespace {

constexpr auto kInitBackoffMin = std::chrono::seconds(1);
constexpr auto kInitBackoffMax = std::chrono::seconds(60);

struct TickOutcome {
  GpuFacts facts;
  nvmlDevice_t dev = nullptr;
  bool identity_read = false;  // this run read the per-boot constants
};

// What a re-enumeration found: the device count and, when asked for or when the count changed,
// each index's handle and UUID.
struct EnumOutcome {
  nvmlReturn_t count_return = nvml::NVML_SUCCESS;
  unsigned count = 0;
  bool listed = false;  // entries holds one element per index
  struct Entry {
    nvmlDevice_t dev = nullptr;  // null: no handle (lost or an error)
    std::string uuid;            // empty: unknown (then the GPU's constants are read again)
    bool skipped = false;        // not asked: this index's GPU has a call stuck in the driver
  };
  std::vector<Entry> entries;
  nvmlEventSet_t new_events = nullptr;  // created when the session had no event set
};

// nvmlDeviceGetCount; when it differs from `known` (or `list` is set) a handle and UUID per index.
// While the count is unchanged, indexes marked in `stuck` are not called (their GPU has a call
// stuck in the driver; asking again would only hang this worker too).
EnumOutcome RunEnumerate(const Library& lib, Breadcrumb& crumb, unsigned known, bool list,
                         const std::vector<bool>& stuck, bool create_events) {
  EnumOutcome out;
  Calls calls(lib, crumb);
  out.count_return = NVML_CALL(calls, DeviceGetCount, &out.count);
  if (out.count_return != nvml::NVML_SUCCESS || out.count > 1024) return out;
  if (out.count == known && !list) return out;
  out.listed = true;
  out.entries.resize(out.count);
  for (unsigned i = 0; i < out.count; ++i) {
    EnumOutcome::Entry& e = out.entries[i];
    if (out.count == known && i < stuck.size() && stuck[i]) {
      e.skipped = true;
      continue;
    }
    if (NVML_CALL(calls, DeviceGetHandleByIndex, i, &e.dev) != nvml::NVML_SUCCESS) {
      e.dev = nullptr;
      continue;
    }
    char buf[nvml::kDeviceUuidBufferSize + 1] = {};
    if (NVML_CALL(calls, DeviceGetUuid, e.dev, buf, nvml::kDeviceUuidBufferSize) ==
        nvml::NVML_SUCCESS) {
      e.uuid = TerminatedString(buf, nvml::kDeviceUuidBufferSize);
    }
  }
  if (create_events && out.count > 0 && lib.api.DeviceRegisterEvents != nullptr &&
      lib.api.EventSetWait != nullptr) {
    nvmlEventSet_t set = nullptr;
    if (NVML_CALL(calls, EventSetCreate, &set) == nvml::NVML_SUCCESS) out.new_events = set;
  }
  return out;
}

}  // namespace

struct NvmlSession::State {
  NvmlSampleOptions opts;
  // Init.
  std::shared_ptr<WorkerShared> init_shared;
  std::shared_ptr<PendingResult<InitOutcome>> init_pending;
  TimePoint init_started{};
  TimePoint next_init_try{};
  std::chrono::seconds backoff = kInitBackoffMin;
  int init_attempts = 0;
  NvmlStatus status;  // last init outcome
  DriverFacts driver;
  std::shared_ptr<const Library> lib;
  nvmlEventSet_t events = nullptr;
  bool events_broken = false;  // the event API hung once: not used again
  // Re-enumeration (counted in ticks since init succeeded).
  int64_t ticks = 0;
  int64_t last_enumeration_tick = 0;
  bool lost_seen = false;  // a GPU answered GPU_IS_LOST since the last enumeration
  std::shared_ptr<WorkerShared> enum_shared;
  std::shared_ptr<PendingResult<EnumOutcome>> enum_pending;  // still in flight (maybe stuck)
  TimePoint enum_started{};
  int enumerations = 0;
  // Per GPU.
  struct Gpu {
    bool have_constants = false;
    GpuFacts constants;
    nvmlDevice_t dev = nullptr;
    std::optional<GpuCounterRead> previous;
    TimePoint previous_at{};
    std::shared_ptr<WorkerShared> shared;
    std::shared_ptr<PendingResult<TickOutcome>> pending;  // still in flight from a tick
    TimePoint started{};
    // Remembered answers and slow-cadence reads; used by this GPU's one worker at a time. Each
    // GPU has its own (ResetGpus): a copied Gpu would share its neighbour's.
    std::shared_ptr<GpuCarry> carry = std::make_shared<GpuCarry>();
  };
  std::vector<Gpu> gpus;

  void ResetGpus(size_t n) {
    gpus.clear();
    gpus.resize(n);
  }
};

NvmlSession::NvmlSession(NvmlSampleOptions options) : state_(std::make_unique<State>()) {
  state_->opts = std::move(options);
}

NvmlSession::~NvmlSession() = default;

int NvmlSession::init_attempts() const { return state_->init_attempts; }

int NvmlSession::enumerations() const { return state_->enumerations; }

void NvmlSession::MaybeEnumerate(TimePoint deadline, GpuLayerFacts& facts) {
  State& st = *state_;
  ++st.ticks;
  int every = std::max(1, st.opts.recount_every_ticks);
  if (st.enum_pending == nullptr) {
    if (st.ticks - st.last_enumeration_tick < every) return;
    st.last_enumeration_tick = st.ticks;
    st.enum_shared = std::make_shared<WorkerShared>();
    auto shared = st.enum_shared;
    auto lib = st.lib;
    unsigned known = static_cast<unsigned>(st.gpus.size());
    bool list = st.lost_seen;
    bool create_events = st.opts.read_events && st.events == nullptr && !st.events_broken;
    std::vector<bool> stuck;
    for (const State::Gpu& g : st.gpus) stuck.push_back(g.pending != nullptr);
    st.enum_pending = StartDetached([lib, shared, known, list, stuck, create_events] {
      return RunEnumerate(*lib, shared->crumb, known, list, stuck, create_events);
    });
    st.enum_started = SteadyClock::now();
    if (st.enum_pending == nullptr) return;
  }
  // A worker still stuck from an earlier tick is only looked at, never waited for again.
  bool fresh = st.last_enumeration_tick == st.ticks;
  TimePoint wait = fresh ? std::min(deadline, st.enum_started + st.opts.timeout) : TimePoint::min();
  if (!st.enum_pending->WaitUntil(wait)) {
    if (fresh && SteadyClock::now() >= st.enum_started + st.opts.timeout) {
      const char* call = st.enum_shared->crumb.current.load();
      facts.hangs.push_back({call ? call : "(between NVML calls)", std::nullopt, "", "", "", "",
                             MsSince(st.enum_started)});
    }
    return;
  }
  EnumOutcome e = st.enum_pending->Take();
  st.enum_pending = nullptr;
  if (e.new_events != nullptr) st.events = e.new_events;
  if (!e.listed) return;
  ++st.enumerations;
  st.lost_seen = false;
  // GPUs are matched by UUID: one that is still there keeps its per-boot constants, counters and
  // (if its worker is stuck) its stuck state under its new index; any other index starts afresh.
  // An index whose UUID cannot be read now (a lost GPU answers nothing) or was not asked (stuck)
  // keeps the GPU that was there if that one's UUID is seen nowhere else: a lost card stays
  // named, a stuck one stays stuck.
  std::vector<State::Gpu> old = std::move(st.gpus);
  std::vector<bool> taken(old.size(), false);
  std::vector<bool> assigned(e.entries.size(), false);
  st.ResetGpus(e.entries.size());
  auto keep = [&](size_t i, size_t j) {
    taken[j] = assigned[i] = true;
    nvmlDevice_t dev = e.entries[i].dev;
    st.gpus[i] = std::move(old[j]);
    if (dev != nullptr) st.gpus[i].dev = dev;
    st.gpus[i].constants.index = static_cast<int>(i);
  };
  for (size_t i = 0; i < e.entries.size(); ++i) {
    const EnumOutcome::Entry& entry = e.entries[i];
    if (entry.dev == nullptr || entry.uuid.empty()) continue;
    for (size_t j = 0; j < old.size(); ++j) {
      if (taken[j] || !old[j].have_constants || old[j].constants.uuid != entry.uuid) continue;
      keep(i, j);
      break;
    }
  }
  for (size_t i = 0; i < e.entries.size() && i < old.size(); ++i) {
    if (!assigned[i] && !taken[i] && e.entries[i].uuid.empty() &&
        (old[i].have_constants || e.entries[i].skipped)) {
      keep(i, i);
    }
  }
  st.status.device_count = static_cast<int>(e.entries.size());
}

GpuLayerFacts NvmlSession::Sample(TimePoint deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  State& st = *state_;
  GpuLayerFacts facts;
  TimePoint now = SteadyClock::now();

  // Init (once, with backoff on failure).
  if (st.status.state != NvmlState::kOk) {
    if (st.init_pending == nullptr && now >= st.next_init_try) {
      ++st.init_attempts;
      st.init_shared = std::make_shared<WorkerShared>();
      auto shared = st.init_shared;
      NvmlSampleOptions opts = st.opts;
      st.init_pending = StartDetached([opts, shared] { return RunInit(opts, shared->crumb); });
      st.init_started = now;
    }
    if (st.init_pending != nullptr) {
      TimePoint wait = std::min(deadline, st.init_started + st.opts.timeout);
      if (!st.init_pending->WaitUntil(wait)) {
        const char* call = st.init_shared->crumb.current.load();
        std::string name = call ? call : "nvmlInit_v2";
        bool hung = SteadyClock::now() >= st.init_started + st.opts.timeout;
        facts.nvml.state = hung ? NvmlState::kInitHung : NvmlState::kInitUnfinished;
        facts.nvml.error = hung ? name + " did not return" : name + " not finished yet";
        NvmlHang h{call ? call : "loading libnvidia-ml",
                   std::nullopt,
                   "",
                   "",
                   "",
                   "",
                   MsSince(st.init_started)};
        h.check_deadline = !hung;
        facts.hangs.push_back(std::move(h));
        return facts;
      }
      InitOutcome init = st.init_pending->Take();
      st.init_pending = nullptr;
      st.status = init.status;
      st.status.init_ms = MsSince(st.init_started);
      st.driver = init.driver;
      if (init.status.state == NvmlState::kOk) {
        st.lib = init.lib;
        st.events = init.events;
        st.ResetGpus(static_cast<size_t>(*init.status.device_count));
        st.backoff = kInitBackoffMin;
      } else {
        st.next_init_try = SteadyClock::now() + st.backoff;
        st.backoff = std::min(st.backoff * 2,
                              std::chrono::duration_cast<std::chrono::seconds>(kInitBackoffMax));
      }
    }
    if (st.status.state != NvmlState::kOk) {
      facts.nvml = st.status;
      facts.driver = st.driver;
      return facts;
    }
  }
  MaybeEnumerate(deadline, facts);
  facts.nvml = st.status;
  facts.driver = st.driver;
  st.status.init_ms.reset();  // reported on the tick init finished, not on every tick after
  std::shared_ptr<const Library> lib = st.lib;

  // One worker per GPU; a GPU whose previous worker is still stuck is not called again.
  TimePoint start = SteadyClock::now();
  for (size_t i = 0; i < st.gpus.size(); ++i) {
    State::Gpu& g = st.gpus[i];
    if (g.pending != nullptr) continue;  // still running, or back late: collected below
    g.shared = std::make_shared<WorkerShared>();
    auto shared = g.shared;
    int index = static_cast<int>(i);
    nvmlEventSet_t events = st.events;
    bool have = g.have_constants;
    GpuFacts constants = g.constants;
    nvmlDevice_t dev = g.dev;
    std::shared_ptr<GpuCarry> carry = g.carry;
    g.pending = StartDetached([lib, shared, index, events, have, constants, dev, carry] {
      TickOutcome out;
      if (++carry->ticks % kMemoTicks == 0) carry->memo.unsupported.clear();
      if (!have) {
        GpuSampler id(*lib, *shared, index, events, std::chrono::milliseconds(0), carry.get());
        GpuFacts c = id.RunIdentity();
        out.dev = id.device();
        out.identity_read = true;
        if (out.dev == nullptr || c.lost) {
          out.facts = std::move(c);
          return out;
        }
        GpuSampler tick(*lib, *shared, index, events, std::chrono::milliseconds(0), carry.get());
        out.facts = tick.RunTick(c, out.dev);
        out.facts.persistence_on =
            out.facts.persistence_on ? out.facts.persistence_on : c.persistence_on;
        for (auto& e : c.errors) {
          if (out.facts.errors.size() < kMaxErrorsPerGpu) out.facts.errors.push_back(e);
        }
        return out;
      }
      GpuSampler tick(*lib, *shared, index, events, std::chrono::milliseconds(0), carry.get());
      out.dev = dev;
      out.facts = tick.RunTick(constants, dev);
      return out;
    });
    g.started = start;
  }

  TimePoint wait = std::min(deadline, start + st.opts.timeout);
  bool any_hung = false;
  for (size_t i = 0; i < st.gpus.size(); ++i) {
    State::Gpu& g = st.gpus[i];
    int index = static_cast<int>(i);
    if (g.pending != nullptr && g.pending->WaitUntil(wait)) {
      TickOutcome out = g.pending->Take();
      g.pending = nullptr;
      if (out.identity_read && out.dev != nullptr && !out.facts.lost) {
        g.have_constants = true;
        g.constants = out.facts;
        g.dev = out.dev;
      }
      GpuFacts f = std::move(out.facts);
      f.index = index;
      if (f.lost) st.lost_seen = true;
      // This tick's read becomes `second`; the previous tick's is `first`.
      GpuCounterRead now_read = f.first;
      TimePoint now_at = g.started;
      if (g.previous) {
        f.first = *g.previous;
        f.second = now_read;
        f.window_s = std::chrono::duration<double>(now_at - g.previous_at).count();
      }
      g.previous = now_read;
      g.previous_at = now_at;
      facts.gpus.push_back(std::move(f));
      continue;
    }
    // Still running: hung (past the NVML timeout) or merely unfinished at this tick's deadline.
    // Readings it took before the stuck call are kept.
    GpuFacts f = g.constants;
    if (g.shared != nullptr && g.started == start) {
      std::lock_guard<std::mutex> lock(g.shared->partial_mu);
      if (g.shared->partial) f = *g.shared->partial;
    }
    f.index = index;
    f.first = f.second = GpuCounterRead{};
    bool hung = SteadyClock::now() >= g.started + st.opts.timeout;
    f.hung = hung;
    f.unfinished = !hung;
    NvmlHang h;
    h.gpu_index = index;
    h.check_deadline = !hung;
    if (g.shared != nullptr) {
      std::lock_guard<std::mutex> lock(g.shared->crumb.mu);
      if (f.uuid.empty()) f.uuid = g.shared->crumb.uuid;
      if (f.pci_bus_id.empty()) f.pci_bus_id = g.shared->crumb.pci_bus_id;
      if (f.serial.empty()) f.serial = g.shared->crumb.serial;
      if (f.name.empty()) f.name = g.shared->crumb.name;
      h.uuid = f.uuid;
      h.pci_bus_id = f.pci_bus_id;
      h.serial = f.serial;
      h.name = f.name;
      const char* call = g.shared->crumb.current.load();
      h.call = call ? call : "(between NVML calls)";
    }
    h.waited_ms = MsSince(g.started);
    if (hung) any_hung = true;
    facts.hangs.push_back(std::move(h));
    facts.gpus.push_back(std::move(f));
  }
  if (any_hung || st.events == nullptr) return facts;

  // Drain pending Xid events without blocking (never while a GPU is stuck in the driver).
  auto tail_shared = std::make_shared<WorkerShared>();
  nvmlEventSet_t events = st.events;
  auto drained = RunWithDeadline(
      [lib, tail_shared, events] {
        DrainOutcome d;
        Calls calls(*lib, tail_shared->crumb);
        for (int i = 0; i < kMaxEventsDrained; ++i) {
          nvml::nvmlEventData_t data;
          std::memset(&data, 0, sizeof data);
          if (NVML_CALL(calls, EventSetWait, events, &data, 0u) != nvml::NVML_SUCCESS) break;
          if (data.eventType == nvml::kEventTypeXidCriticalError) {
            d.xids.emplace_back(data.device, data.eventData);
          }
        }
        d.calls = tail_shared->crumb.calls.load();
        return d;
      },
      std::min(deadline, SteadyClock::now() + st.opts.timeout));
  if (!drained) {
    st.events = nullptr;  // the event API hung once: never again in this session
    st.events_broken = true;
    return facts;
  }
  facts.nvml.system_calls = drained->calls;
  for (const auto& [dev, xid] : drained->xids) {
    NvmlXidEvent e;
    e.xid = xid;
    e.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    for (size_t i = 0; i < st.gpus.size(); ++i) {
      if (st.gpus[i].dev == dev) e.gpu_index = static_cast<int>(i);
    }
    facts.nvml_xid_events.push_back(e);
  }
  return facts;
}

}  // namespace gpudoctor
