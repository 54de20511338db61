// Xid events through NVML: a GPU's registration on the event set (GpuSampler), the
// non-blocking drain of the set, and the drained events as facts.
#include <chrono>
#include <cstring>

#include "nvml/gpu_sampler.h"
#include "nvml/sampler_internal.h"

namespace gpudoctor::nvml_internal {
namespace {

constexpr int kMaxEventsDrained = 256;

}  // namespace

void GpuSampler::RegisterEvents() {
  if (events_ == nullptr) return;
  // NOT_SUPPORTED is common (and may mean nothing registered); never an error for us.
  nvmlReturn_t r =
      NVML_CALL(calls_, DeviceRegisterEvents, dev_, nvml::kEventTypeXidCriticalError, events_);
  if (r == nvml::NVML_ERROR_GPU_IS_LOST) Ok(r, names().DeviceRegisterEvents);
}

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

std::vector<NvmlXidEvent> XidEvents(const DrainOutcome& drained,
                                    const std::vector<std::pair<nvmlDevice_t, int>>& handles) {
  std::vector<NvmlXidEvent> events;
  for (const auto& [dev, xid] : drained.xids) {
    NvmlXidEvent e;
    e.xid = xid;
    e.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    for (const auto& [h, index] : handles) {
      if (h == dev) e.gpu_index = index;
    }
    events.push_back(e);
  }
  return events;
}

}  // namespace gpudoctor::nvml_internal
