// SampleNvml (sampler.h): one check's NVML sample in phases, each on workers under a deadline:
// init (RunInit), the GPUs (GpuSampler's two halves, on shared workers: GpuPhase), then the drain
// of Xid events and nvmlShutdown.
#include "nvml/sampler.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "core/job_lane.h"
#include "nvml/gpu_sampler.h"
#include "nvml/sampler_internal.h"

namespace gpudoctor {
namespace nvml_internal {

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

}  // namespace nvml_internal

namespace {

using nvml::Library;
using nvml::nvmlDevice_t;
using nvml::nvmlEventSet_t;
using nvml_internal::Calls;
using nvml_internal::DrainEvents;
using nvml_internal::DrainOutcome;
using nvml_internal::GpuSampler;
using nvml_internal::InitOutcome;
using nvml_internal::MsSince;
using nvml_internal::NameFromCrumb;
using nvml_internal::RunInit;
using nvml_internal::WorkerShared;
using nvml_internal::XidEvents;

// A GPU's worker in a check: its facts and its handle (null when it got none).
struct GpuWorker {
  std::shared_ptr<WorkerShared> shared;
  std::shared_ptr<PendingResult<std::pair<GpuFacts, nvmlDevice_t>>> pending;
  bool never_started = false;  // its turn never came before the deadline (not a hang)
};

// A GPU's sample in a check, shared by the jobs that run its halves (GpuSampler::RunFirstHalf,
// RunSecondHalf) and the caller. `stage` decides with one compare-and-swap who runs the second
// half: the caller queues it on the second lane once the first half is done, or, when the first
// half is still running as the window ends, the first half's worker goes on to it by itself.
struct GpuJob {
  enum { kFirstHalf, kFirstDone, kGoesOn };
  GpuJob(std::shared_ptr<const Library> l, int i, nvmlEventSet_t events,
         std::chrono::milliseconds window)
      : lib(std::move(l)),
        shared(std::make_shared<WorkerShared>()),
        sampler(*lib, *shared, i, events, window) {}
  void SecondHalf() {
    GpuFacts f = sampler.RunSecondHalf();
    result->Set(std::make_pair(std::move(f), sampler.device()));
  }
  std::shared_ptr<const Library> lib;
  std::shared_ptr<WorkerShared> shared;
  GpuSampler sampler;
  std::shared_ptr<PendingResult<std::pair<GpuFacts, nvmlDevice_t>>> result =
      std::make_shared<PendingResult<std::pair<GpuFacts, nvmlDevice_t>>>();
  std::atomic<int> stage{kFirstHalf};
};

// A GPU whose half runs this long has the GPUs queued behind it on its lane moved to two fresh
// workers (JobLane). Short, so that busy GPUs (their first half measures PCIe throughput: two
// calls that sleep 20 ms each in the driver) spread over workers within a few stalls instead of
// spreading their first reads over the window; an idle GPU's half takes a few ms.
constexpr auto kGpuLaneStall = std::chrono::milliseconds(25);

// Phase 1: init on a worker. The outcome when NVML is usable; otherwise nullopt, and `facts`
// say why.
std::optional<InitOutcome> InitPhase(const NvmlSampleOptions& opts, TimePoint start,
                                     GpuLayerFacts& facts) {
  auto init_shared = std::make_shared<WorkerShared>();
  auto init_pending =
      StartDetached([opts, init_shared] { return RunInit(opts, init_shared->crumb); });
  if (init_pending == nullptr) {
    facts.nvml.state = NvmlState::kInitFailed;
    facts.nvml.error = "could not start a worker thread";
    return std::nullopt;
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
    return std::nullopt;
  }
  InitOutcome init = init_pending->Take();
  facts.nvml = init.status;
  facts.nvml.init_ms = MsSince(start);
  facts.driver = init.driver;
  if (init.status.state != NvmlState::kOk) return std::nullopt;
  return init;
}

// GPU `i`, whose worker did not return by the deadline (or never started): the readings it
// took before, and its hang (unless no worker could be started, or its turn never came).
void ReportUnreturnedGpu(GpuWorker& w, int i, bool cut_by_check, TimePoint gpu_start,
                         GpuLayerFacts& facts) {
  GpuFacts f;
  {
    std::lock_guard<std::mutex> lock(w.shared->partial_mu);
    if (w.shared->partial) f = *w.shared->partial;  // readings taken before the hang
  }
  f.index = i;
  if (w.never_started) {
    // Its turn on a lane never came before the deadline: not a hang (no call of its is out).
    f.unfinished = true;
    f.nvml_calls = w.shared->crumb.calls.load();
    facts.gpus.push_back(std::move(f));
    return;
  }
  f.hung = w.pending != nullptr && !cut_by_check;
  f.unfinished = w.pending != nullptr && cut_by_check;
  NvmlHang hang;
  hang.gpu_index = i;
  hang.check_deadline = cut_by_check;
  NameFromCrumb(w.shared->crumb, f, hang);
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

// Phase 2: the GPUs' samples, all waited for until one deadline. A worker per GPU cost a thread
// each (8 idle GPUs: `check --probes nvml` 14.1 ms of CPU, now 11.8; docs/cost.md): instead the
// first halves run one after another on one worker (a JobLane: a GPU that stalls for
// kGpuLaneStall has those queued behind it moved to fresh workers, so a hung GPU holds none of
// the others), then, from the first read's window end, the second halves the same way. A GPU
// whose first half is still running as the window ends goes on to its second half on its own
// worker; one whose turn never came (lanes stalled past the window) gets a worker of its own for
// the whole sample. Returns the handle of each GPU that answered, with its index (for the Xid
// events).
std::vector<std::pair<nvmlDevice_t, int>> GpuPhase(const NvmlSampleOptions& opts,
                                                   const std::shared_ptr<const Library>& lib,
                                                   int count, nvmlEventSet_t events,
                                                   GpuLayerFacts& facts) {
  TimePoint gpu_start = SteadyClock::now();
  bool gpu_cut_by_check = opts.deadline < gpu_start + opts.window + opts.timeout;
  TimePoint gpu_deadline = std::min(opts.deadline, gpu_start + opts.window + opts.timeout);
  std::vector<std::shared_ptr<GpuJob>> jobs;
  std::vector<std::function<void()>> first_halves;
  for (int i = 0; i < count; ++i) {
    auto job = std::make_shared<GpuJob>(lib, i, events, opts.window);
    jobs.push_back(job);
    first_halves.push_back([job] {
      job->sampler.RunFirstHalf();
      int expected = GpuJob::kFirstHalf;
      if (!job->stage.compare_exchange_strong(expected, GpuJob::kFirstDone)) job->SecondHalf();
    });
  }
  JobLane first_lane(std::move(first_halves));
  first_lane.Run(std::min(gpu_deadline, gpu_start + opts.window), kGpuLaneStall);

  std::vector<GpuWorker> workers(count);
  std::vector<std::function<void()>> second_halves;
  std::vector<int> second_of;  // second_halves[k] is GPU second_of[k]'s
  TimePoint window_end = TimePoint::max();
  for (int i = 0; i < count; ++i) {
    GpuJob& job = *jobs[i];
    workers[i] = {job.shared, job.result};
    int expected = GpuJob::kFirstHalf;
    if (first_lane.state(i) == JobLane::JobState::kRunning &&
        job.stage.compare_exchange_strong(expected, GpuJob::kGoesOn)) {
      continue;  // still in its first half: its worker goes on to the second
    }
    if (job.stage.load() == GpuJob::kFirstDone) {
      if (job.sampler.first_read_at() != TimePoint{}) {  // no handle or lost: nothing to wait for
        window_end = std::min(window_end, job.sampler.first_read_at() + opts.window);
      }
      second_halves.push_back([j = jobs[i]] { j->SecondHalf(); });
      second_of.push_back(i);
      continue;
    }
    // Never started (withdrawn at the window's end, or no worker could be started): the whole
    // sample on a worker of its own.
    std::shared_ptr<GpuJob> j = jobs[i];
    if (!RunOnWorker([j] {
          j->sampler.RunFirstHalf();
          j->SecondHalf();
        })) {
      workers[i].pending = nullptr;
    }
  }
  if (!second_halves.empty()) {
    // The first GPU's second half waits for its window on the caller's thread, not on the lane
    // (where a wait that long would count as a stall); the later ones wait the few ms between
    // their first reads on the lane.
    if (window_end != TimePoint::max()) {
      std::this_thread::sleep_until(std::min(window_end, gpu_deadline));
    }
    JobLane second_lane(std::move(second_halves));
    second_lane.Run(gpu_deadline, kGpuLaneStall);
    for (size_t k = 0; k < second_of.size(); ++k) {
      if (second_lane.workers() == 0 || second_lane.state(k) == JobLane::JobState::kWithdrawn) {
        workers[second_of[k]].never_started = true;
      }
    }
  }
  std::vector<std::pair<nvmlDevice_t, int>> handles;
  for (int i = 0; i < count; ++i) {
    GpuWorker& w = workers[i];
    if (w.pending != nullptr && !w.never_started && w.pending->WaitUntil(gpu_deadline)) {
      auto [f, dev] = w.pending->Take();
      if (dev != nullptr) handles.emplace_back(dev, i);
      facts.gpus.push_back(std::move(f));
      continue;
    }
    ReportUnreturnedGpu(w, i, gpu_cut_by_check, gpu_start, facts);
  }
  return handles;
}

// Phase 3 and 4: drain Xid events without blocking, then shut down. After a hang the events
// of the other GPUs are still drained (a GPU that hangs is often the one with the Xid), but
// nvmlShutdown is skipped: it would wait for the stuck call's locks.
void TailPhase(const NvmlSampleOptions& opts, const std::shared_ptr<const Library>& lib,
               nvmlEventSet_t events, TimePoint start,
               const std::vector<std::pair<nvmlDevice_t, int>>& handles, GpuLayerFacts& facts) {
  bool hung_before = !facts.hangs.empty();
  auto tail_shared = std::make_shared<WorkerShared>();
  if (hung_before && events == nullptr) return;
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
  if (tail == nullptr) return;
  if (!tail->WaitUntil(tail_deadline)) {
    CountAbandonedWorker();
    if (hung_before) return;  // the wedged driver took the event API with it
    const char* call = tail_shared->crumb.current.load();
    NvmlHang hang{
        call ? call : "(between NVML calls)", std::nullopt, "", "", "", "", MsSince(start)};
    hang.check_deadline = tail_cut_by_check;
    facts.hangs.push_back(std::move(hang));
    return;
  }
  DrainOutcome d = tail->Take();
  facts.nvml.system_calls += d.calls;
  for (NvmlXidEvent& e : XidEvents(d, handles)) facts.nvml_xid_events.push_back(e);
}

}  // namespace

GpuLayerFacts SampleNvml(const NvmlSampleOptions& opts) {
  GpuLayerFacts facts;
  TimePoint start = SteadyClock::now();
  std::optional<InitOutcome> init = InitPhase(opts, start, facts);
  if (!init) return facts;
  std::shared_ptr<const Library> lib = init->lib;
  std::vector<std::pair<nvmlDevice_t, int>> handles =
      GpuPhase(opts, lib, *init->status.device_count, init->events, facts);
  TailPhase(opts, lib, init->events, start, handles, facts);
  return facts;
}

}  // namespace gpudoctor
