// NvmlSession: NVML kept open across the ticks of `gpudoctor watch`.
//
// - Initialised once (on the first Sample), on a worker under the NVML timeout. A failed or
//   hung init is retried with exponential backoff (1 s doubling to 60 s); a retry is never
//   started while an earlier init is still stuck in the driver.
// - Per-boot constants of each GPU (handle, name, uuid, serial, PCI info, VBIOS, max clocks,
//   max PCIe link, temperature limits) are read once; a tick then costs ≤ 15 NVML calls per GPU
//   (counted by the fake's call counter in nvml_call_budget_test, on NVMLs with and without
//   nvmlDeviceGetFieldValues).
// - Counters are diffed against the previous tick: GpuFacts::first is the previous tick's read,
//   second this tick's, window_s the time between; no sampling sleep inside a tick.
// - Threads: the GPUs of a tick are sampled one after another on ONE sampler thread
//   (core/job_lane.h), the Xid drain last on the same thread: one hand-off a tick instead of
//   one per GPU. When the GPUs' ticks took longer than 50 ms together on the last tick (calls
//   that sleep in the driver: busy GPUs' PCIe throughput, 20 ms a call), they are split in turn
//   over ceil(that / 50 ms) threads; a tick that reads per-boot constants (the first, or after
//   a re-enumeration) gives each GPU a thread. A GPU whose tick runs 100 ms (at most half the
//   timeout and a quarter of the time to the deadline)
//   has the GPUs queued behind it moved to a fresh thread, so a stuck call delays the others by
//   that much at most.
// - A GPU whose sample does not return by the timeout (counted from the start of its own
//   turn) is marked hung (GpuFacts::hung, with the call named in GpuLayerFacts::hangs); the
//   other GPUs keep being sampled, and the hung GPU is not called again until its stuck thread
//   returns (then it recovers by itself). A GPU whose turn had not come by the tick's deadline
//   is `unfinished` this tick and asked again on the next.
// - Xid events are drained without blocking each tick while no GPU's call is out.
// - GPUs are re-enumerated while running: every options.recount_every_ticks ticks one
//   nvmlDeviceGetCount_v2 (on a worker, under the NVML timeout and the tick's deadline); when
//   the count changed, or a GPU answered NVML_ERROR_GPU_IS_LOST since the last look, a handle and
//   UUID per index (nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetUUID). A GPU whose UUID is still
//   there keeps its per-boot constants, counters and stuck state under its (maybe new) index;
//   every other index is read afresh. So a GPU that falls off the bus or a count change after a
//   driver reload shows within recount_every_ticks ticks, at a cost of one call per that many
//   ticks (plus 2 per GPU when listing). A listing does not call a GPU whose worker is still
//   stuck (while the count is unchanged it keeps its place, still stuck). An enumeration stuck in
//   the driver is reported as a hang once and none is started until it returns. Before the first
//   enumeration and when it fails, the GPUs found at init stay.
// nvmlShutdown is never called (the process may have workers stuck inside NVML).
//
// Thread-safety: Sample() serialises callers; the session may be shared between ticks through
// std::shared_ptr.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>

#include "core/deadline.h"
#include "facts/gpu_facts.h"
#include "nvml/sampler.h"

namespace gpudoctor {

class NvmlSession {
 public:
  // options.window is ignored (ticks have no window); options.timeout bounds each phase.
  explicit NvmlSession(NvmlSampleOptions options);
  ~NvmlSession();
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  // One tick: returns by `deadline` (or the NVML timeout, whichever is first) whatever hangs.
  // Fills nvml, driver (except kernel_module_version), gpus, hangs, nvml_xid_events.
  GpuLayerFacts Sample(TimePoint deadline);

  // Diagnostics for tests and logs.
  int init_attempts() const;
  int enumerations() const;  // re-enumerations that listed the GPUs (not init, not recounts)
  // Threads the last tick's GPU sampling used: 1 (or more, see Threads above), plus 1 per GPU
  // that stalled with others queued behind it; 0 when no GPU was asked.
  int last_tick_threads() const;

 private:
  void MaybeEnumerate(TimePoint deadline, GpuLayerFacts& facts);  // with mu_ held

  struct State;
  std::unique_ptr<State> state_;
  std::mutex mu_;
};

}  // namespace gpudoctor
