// GpuSampler's three sequences (a check, a session's identity, a session tick) and the plumbing
// every part of it uses: the call budget, classifying returns, publishing partial facts.
#include "nvml/gpu_sampler.h"

#include <algorithm>
#include <thread>
#include <utility>

namespace gpudoctor::nvml_internal {

GpuSampler::GpuSampler(const Library& lib, WorkerShared& shared, int index, nvmlEventSet_t events,
                       std::chrono::milliseconds window, GpuCarry* carry)
    : calls_(lib, shared.crumb, carry ? &carry->memo : &own_memo_),
      carry_(carry),
      shared_(shared),
      index_(index),
      events_(events),
      window_(window) {
  f_.index = index;
}

GpuFacts GpuSampler::Run() {
  RunFirstHalf();
  return RunSecondHalf();
}

void GpuSampler::RunFirstHalf() {
  budget_ = kCheckBudget - (NoFields() ? kSecondReadReserveNoFields : kSecondReadReserve);
  t_start_ = SteadyClock::now();
  if (!Handle()) return;
  RegisterEvents();
  Identity(/*with_vbios=*/false);
  if (!Stop()) Limits(/*with_max_link=*/false);
  Publish();
  t_first_ = SteadyClock::now();
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
}

GpuFacts GpuSampler::RunSecondHalf() {
  if (dev_ != nullptr) {
    if (!Stop()) std::this_thread::sleep_until(t_first_ + window_);
    TimePoint t_second = SteadyClock::now();
    budget_ = kCheckBudget;
    if (!Stop()) SecondSample();
    if (!Stop()) CheckTail();
    if (!Stop()) f_.window_s = std::chrono::duration<double>(t_second - t_first_).count();
    // The time spent calling NVML outside the window (identity before it, the second read after
    // it; the first read happens inside it), also when the halves ran apart.
    double total_ms =
        std::chrono::duration<double, std::milli>(SteadyClock::now() - t_start_).count();
    double window_ms = std::chrono::duration<double, std::milli>(t_second - t_first_).count();
    f_.sample_ms = std::max(0.0, total_ms - window_ms);
  }
  f_.nvml_calls = shared_.crumb.calls.load();
  return std::move(f_);
}

GpuFacts GpuSampler::RunTick(const GpuFacts& constants, nvmlDevice_t dev) {
  tick_mode_ = true;
  dev_ = dev;
  budget_ = shared_.crumb.calls.load() + kTickBudget;
  // The facts are published in place (WorkerShared::live) while the tick runs, and copied to
  // `partial` once at its end (also when it leaves early).
  std::unique_lock<std::mutex> hold(shared_.partial_mu);
  struct Unpublish {
    GpuSampler& s;
    std::unique_lock<std::mutex>& hold;
    bool done = false;
    void Now() {
      if (done) return;
      done = true;
      if (!hold.owns_lock()) hold.lock();
      s.f_.nvml_calls = s.shared_.crumb.calls.load();
      s.shared_.partial = s.f_;
      s.shared_.live = nullptr;
      s.calls_.HoldBetweenCalls(nullptr);
    }
    ~Unpublish() { Now(); }
  } unpublish{*this, hold};
  shared_.live = &f_;
  calls_.HoldBetweenCalls(&hold);
  CopyConstants(constants);
  PublishIdentity();
  TimePoint t_start = SteadyClock::now();
  if (!Stop()) FirstSample();
  if (!Stop() && Busy()) TickPcieThroughput();
  if (!Stop()) TickCodecUtilization();
  if (!Stop() && NoFields() && carry_ != nullptr) SlowReads();
  f_.sample_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t_start).count();
  f_.nvml_calls = shared_.crumb.calls.load();
  unpublish.Now();
  hold.unlock();
  return std::move(f_);
}

GpuFacts GpuSampler::RunIdentity() {
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

void GpuSampler::Publish() {
  f_.nvml_calls = shared_.crumb.calls.load();
  if (tick_mode_) return;  // published in place (RunTick)
  std::lock_guard<std::mutex> lock(shared_.partial_mu);
  shared_.partial = f_;
}

void GpuSampler::PublishIdentity() {
  std::lock_guard<std::mutex> lock(shared_.crumb.mu);
  shared_.crumb.uuid = f_.uuid;
  shared_.crumb.pci_bus_id = f_.pci_bus_id;
  shared_.crumb.serial = f_.serial;
  shared_.crumb.name = f_.name;
}

bool GpuSampler::Ok(nvmlReturn_t r, const std::string& symbol) {
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

std::optional<uint32_t> GpuSampler::ReadUint(nvmlReturn_t (*fn)(nvmlDevice_t, unsigned*),
                                             const std::string& symbol) {
  unsigned v = 0;
  if (!Ok(calls_.Make(symbol, fn, dev_, &v), symbol)) return std::nullopt;
  return v;
}

std::optional<uint32_t> GpuSampler::ReadUintArg(nvmlReturn_t (*fn)(nvmlDevice_t, int, unsigned*),
                                                const std::string& symbol, int arg) {
  unsigned v = 0;
  if (!Ok(calls_.Make(symbol, fn, dev_, arg, &v), symbol)) return std::nullopt;
  return v;
}

void GpuSampler::CheckTail() {
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

}  // namespace gpudoctor::nvml_internal
