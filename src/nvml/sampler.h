// NVML sampler: everything gpudoctor reads through NVML in one check, under deadlines.
//
// Sequence: (1) on an init worker: load the library, nvmlInit_v2, device count, driver/NVML/CUDA
// versions, an event set for Xid events; (2) per GPU: handle, identity, limits, a first counter
// read, the sampling window (PCIe throughput is measured inside it, only on busy GPUs, because
// each of those calls sleeps 20 ms in the driver), a second counter read. The GPUs' first halves
// run in turn on one worker and their second halves likewise (a JobLane each: a GPU that stalls
// 25 ms has the GPUs queued behind it moved to fresh workers, so busy GPUs spread out over more
// workers by themselves and a hung one holds none of the others); each GPU's window is its own,
// from its first read; (3) a
// non-blocking drain of pending Xid events; (4) nvmlShutdown, only when no call is in flight.
// Each phase has a deadline; a worker that overruns is abandoned and its hung call reported in
// GpuLayerFacts::hangs, the other GPUs are still reported. After a hang nothing more is called
// for that GPU (nor events/shutdown, which would take the same driver locks).
//
// Calls per GPU per check (fake NVML, bench/nvml_bench.cc): 29 idle, 31 busy (PCIe throughput).
// Garbage (unknown return codes, unterminated strings, implausible values) leaves the field
// absent; NOT_SUPPORTED and a missing optional symbol leave it absent silently; other errors are
// listed in GpuFacts::errors. NVML_ERROR_GPU_IS_LOST marks the GPU lost and stops its sample.
// Thread-safety: SampleNvml may run concurrently with itself (NVML is thread-safe).
#pragma once

#include <chrono>
#include <string>

#include "core/deadline.h"
#include "facts/gpu_facts.h"

namespace gpudoctor {

struct NvmlSampleOptions {
  std::string library_path;                 // empty: default search (loader.h)
  std::chrono::milliseconds window{250};    // between the two counter reads
  std::chrono::milliseconds timeout{5000};  // per phase: init, per-GPU sample (plus the window)
  TimePoint deadline = TimePoint::max();    // hard limit for everything
  bool read_events = true;                  // register for and drain Xid events
  int recount_every_ticks = 5;              // NvmlSession only: device count checked this often
};

// Fills nvml, driver (except kernel_module_version), gpus, hangs and nvml_xid_events.
// GpuProcess comm/user are left empty (the probe fills them from /proc).
GpuLayerFacts SampleNvml(const NvmlSampleOptions& options);

}  // namespace gpudoctor
