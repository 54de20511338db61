// GpuSampler: the fast readings of a check's first read and of every session tick (utilisation,
// memory, temperature, clocks, throttle reasons, fan, PCIe link and throughput, power,
// processes), and the order FirstSample takes them in.
#include <cstring>
#include <utility>
#include <vector>

#include "nvml/gpu_sampler.h"

namespace gpudoctor::nvml_internal {
namespace {

constexpr unsigned kMaxProcesses = 4096;
// A check without nvmlDeviceGetFieldValues reads the temperature thresholds only from this
// temperature up: every NVIDIA data-centre GPU slows down at 80 C or more, and the thermal rule
// judges a GPU within 5 C of its threshold.
constexpr int kThresholdsMatterFromC = 70;

// Both process structs (v1 and v2/v3) carry pid and usedGpuMemory; pid 0 entries are padding.
template <typename Info>
std::vector<GpuProcess> ToGpuProcesses(const std::vector<Info>& buf, unsigned count) {
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

}  // namespace

// A check's first read and a session tick's one read, each step published as it completes.
void GpuSampler::FirstSample() {
  FastReadings();
  if (Stop()) return;
  // Without nvmlDeviceGetFieldValues there is no batch to read (the per-metric calls instead).
  std::vector<nvmlFieldValue_t> batch = NoFields() ? std::vector<nvmlFieldValue_t>() : FirstBatch();
  bool batch_ok = FirstCounters(batch);
  if (Stop()) return;
  PowerAndProcesses();
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

// Utilisation, memory, temperature, clocks, throttle reasons, fan and the PCIe link.
void GpuSampler::FastReadings() {
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
}

// Power and its limit where the batch did not answer them, then the processes.
void GpuSampler::PowerAndProcesses() {
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
    if (auto p = ReadUint(api().DeviceGetEnforcedPowerLimit, names().DeviceGetEnforcedPowerLimit)) {
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
}

std::optional<unsigned long long> GpuSampler::ClockReasons() {
  unsigned long long mask = 0;
  if (!Ok(NVML_CALL(calls_, DeviceGetCurrentClocksEventReasons, dev_, &mask),
          names().DeviceGetCurrentClocksEventReasons) ||
      mask > kMaxReasonMask) {
    return std::nullopt;
  }
  return mask;
}

void GpuSampler::Memory() {
  if (api().DeviceGetMemoryInfoV2 != nullptr) {
    nvml::nvmlMemory_v2_t m;
    std::memset(&m, 0, sizeof m);
    m.version = nvml::kMemoryV2Version;
    nvmlReturn_t r = NVML_CALL(calls_, DeviceGetMemoryInfoV2, dev_, &m);
    if (r == nvml::NVML_SUCCESS) {
      if (m.total > 0 && m.total <= kMaxMemoryBytes && m.used <= m.total) {
        f_.memory_total_bytes = m.total;
        f_.memory_used_bytes = m.used;
        if (m.reserved <= m.used) f_.memory_reserved_bytes = m.reserved;
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

void GpuSampler::Temperature() {
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

void GpuSampler::Processes() {
  if (api().DeviceGetComputeRunningProcesses != nullptr) {
    std::vector<nvml::nvmlProcessInfo_t> buf(64);
    for (int attempt = 0; attempt < 3; ++attempt) {
      unsigned count = static_cast<unsigned>(buf.size());
      nvmlReturn_t r =
          NVML_CALL(calls_, DeviceGetComputeRunningProcesses, dev_, &count, buf.data());
      if (r == nvml::NVML_ERROR_INSUFFICIENT_SIZE && count > buf.size() && count <= kMaxProcesses) {
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

bool GpuSampler::Busy() const {
  return (f_.util_gpu_pct && *f_.util_gpu_pct > 0) || (f_.processes && !f_.processes->empty());
}

// NVML reports KB/s (1024 bytes) measured over 20 ms; facts carry bytes per second.
void GpuSampler::PcieThroughput() {
  auto read = [&](int counter) -> std::optional<uint64_t> {
    auto kb = ReadUintArg(api().DeviceGetPcieThroughput, names().DeviceGetPcieThroughput, counter);
    if (!kb) return std::nullopt;
    return static_cast<uint64_t>(*kb) * 1024;
  };
  f_.pcie_tx_bytes_per_s = read(nvml::NVML_PCIE_UTIL_TX_BYTES);
  if (Stop()) return;
  f_.pcie_rx_bytes_per_s = read(nvml::NVML_PCIE_UTIL_RX_BYTES);
}

// PCIe throughput in a session tick. Each direction is a sample the driver takes over 20 ms while
// the caller waits (nvmlDeviceGetPcieThroughput): a busy GPU's is read on the first tick of a
// busy spell and then every kBusyPcieEveryTicks ticks (GPUs in turn: GPU i on the ticks where
// tick + i is a multiple of it), the last values carried into the ticks between (dcgm-exporter
// collects every 30 s by default; the window rules judge 300-600 s). A due read needs room in
// the budget for both directions and two slow reads, or, every other tick, for both alone (the
// slow reads then wait a tick): the ticks where tick + i is even, so that a GPU's turn is always
// one of them and the GPUs' reads never bunch up on one tick; a due read without room waits for
// the next tick.
void GpuSampler::TickPcieThroughput() {
  SlowWork* slow = carry_ ? &carry_->slow : nullptr;
  if (slow != nullptr) {
    const int64_t tick = carry_->ticks;
    const bool spell_goes_on = slow->pcie_busy_tick == tick - 1;
    slow->pcie_busy_tick = tick;
    // GPUs take turns (by index), so that a tick's NVML phase does not carry all the reads.
    const bool turn = (tick + index_) % kBusyPcieEveryTicks == 0;
    if (spell_goes_on && !turn && slow->pcie_read_tick >= 0 &&
        tick - slow->pcie_read_tick < kBusyPcieEveryTicks) {
      f_.pcie_tx_bytes_per_s = slow->pcie_tx;
      f_.pcie_rx_bytes_per_s = slow->pcie_rx;
      return;
    }
  }
  bool room = Budget(2 + (NoFields() ? 2 : 0)) ||
              (Budget(2) && carry_ && (carry_->ticks + index_) % 2 == 0);
  if (room) {
    PcieThroughput();
    if (slow) {
      slow->pcie_tx = f_.pcie_tx_bytes_per_s;
      slow->pcie_rx = f_.pcie_rx_bytes_per_s;
      slow->pcie_read_tick = carry_->ticks;
    }
  } else if (slow) {
    f_.pcie_tx_bytes_per_s = slow->pcie_tx;
    f_.pcie_rx_bytes_per_s = slow->pcie_rx;
  }
}

bool GpuSampler::FaultReason(std::optional<unsigned long long> mask) {
  constexpr unsigned long long kFaultBits =
      nvml::kClocksReasonHwSlowdown | nvml::kClocksReasonSwThermal | nvml::kClocksReasonHwThermal |
      nvml::kClocksReasonHwPowerBrake;
  return mask && (*mask & kFaultBits) != 0;
}

}  // namespace gpudoctor::nvml_internal
