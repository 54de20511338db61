// NvmlSession (session.h): NVML kept open across the ticks of `gpudoctor watch`. A tick:
// init when not yet done (with backoff), a re-enumeration now and then, the GPUs in turn on one
// sampler thread (GpuSampler::RunIdentity once, then RunTick; core/job_lane.h), then on that
// thread the non-blocking Xid drain.
#include "nvml/session.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/job_lane.h"
#include "nvml/gpu_sampler.h"
#include "nvml/sampler_internal.h"

namespace gpudoctor {
namespace {

using nvml::Breadcrumb;
using nvml::Library;
using nvml::nvmlDevice_t;
using nvml::nvmlEventSet_t;
using nvml::nvmlReturn_t;
using nvml_internal::Calls;
using nvml_internal::DrainEvents;
using nvml_internal::DrainOutcome;
using nvml_internal::GpuCarry;
using nvml_internal::GpuSampler;
using nvml_internal::InitOutcome;
using nvml_internal::kMaxErrorsPerGpu;
using nvml_internal::MsSince;
using nvml_internal::NameFromCrumb;
using nvml_internal::RunInit;
using nvml_internal::TerminatedString;
using nvml_internal::WorkerShared;
using nvml_internal::XidEvents;

constexpr auto kInitBackoffMin = std::chrono::seconds(1);
constexpr auto kInitBackoffMax = std::chrono::seconds(60);
// NOT_SUPPORTED answers are remembered for this many ticks, then asked again.
constexpr int kMemoTicks = 600;
// A GPU whose tick runs this long (at most half the NVML timeout) has the GPUs queued behind it
// on the sampler thread moved to another thread.
constexpr auto kGpuStall = std::chrono::milliseconds(100);
// The GPUs' ticks share one sampler thread while together they took less than this on the last
// tick; more (calls that sleep in the driver: PCIe throughput sleeps 20 ms a call) splits them
// over ceil(time / this) threads, so the NVML phase stays about this long.
constexpr auto kGpuThreadShare = std::chrono::milliseconds(50);

// The Xid drain of a tick, run on the sampler thread by the last of the tick's GPU jobs to finish
// (so never while a GPU's call is out, and with no hand-off of its own), unless the session
// cancelled it first: one compare-and-swap decides, so events are never drained by a run whose
// result nobody takes.
struct TailDrain {
  enum { kPending, kStarted, kCancelled };
  std::atomic<int> remaining{0};  // GPU jobs of the tick not through yet
  std::atomic<int> state{kPending};
  std::shared_ptr<const Library> lib;
  nvmlEventSet_t set = nullptr;
  WorkerShared shared;
  PendingResult<DrainOutcome> result;

  // Called by each GPU job when it is through: the last one drains.
  void JobDone() {
    if (remaining.fetch_sub(1) != 1) return;
    int expect = kPending;
    if (!state.compare_exchange_strong(expect, kStarted)) return;
    result.Set(DrainEvents(*lib, shared.crumb, set, /*free_set=*/false));
  }
};

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

// One GPU's work in a tick, on its worker: the per-boot constants first when the session has
// none for it (`have` false), then the tick.
TickOutcome RunGpuTick(const Library& lib, WorkerShared& shared, int index, nvmlEventSet_t events,
                       bool have, const GpuFacts& constants, nvmlDevice_t dev, GpuCarry& carry) {
  TickOutcome out;
  if (++carry.ticks % kMemoTicks == 0) carry.memo.ForgetUnsupported();
  if (!have) {
    GpuSampler id(lib, shared, index, events, std::chrono::milliseconds(0), &carry);
    GpuFacts c = id.RunIdentity();
    out.dev = id.device();
    out.identity_read = true;
    if (out.dev == nullptr || c.lost) {
      out.facts = std::move(c);
      return out;
    }
    GpuSampler tick(lib, shared, index, events, std::chrono::milliseconds(0), &carry);
    out.facts = tick.RunTick(c, out.dev);
    out.facts.persistence_on =
        out.facts.persistence_on ? out.facts.persistence_on : c.persistence_on;
    for (auto& e : c.errors) {
      if (out.facts.errors.size() < kMaxErrorsPerGpu) out.facts.errors.push_back(e);
    }
    return out;
  }
  GpuSampler tick(lib, shared, index, events, std::chrono::milliseconds(0), &carry);
  out.dev = dev;
  out.facts = tick.RunTick(constants, dev);
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
  int last_tick_threads = 0;
  // The GPUs' tick times summed (a decaying peak): how many sampler threads the next tick uses.
  SteadyClock::duration last_gpu_work{};
  // Per GPU.
  struct Gpu {
    bool have_constants = false;
    // Shared with the tick's job, which reads it (never copied per tick); replaced, not changed.
    std::shared_ptr<const GpuFacts> constants = std::make_shared<const GpuFacts>();
    nvmlDevice_t dev = nullptr;
    std::optional<GpuCounterRead> previous;
    TimePoint previous_at{};
    std::shared_ptr<WorkerShared> shared;
    std::shared_ptr<PendingResult<TickOutcome>> pending;  // still in flight from a tick
    TimePoint started{};  // when its tick's work began on the sampler thread
    // Remembered answers and slow-cadence reads; used by this GPU's one worker at a time. Each
    // GPU has its own (ResetGpus): a copied Gpu would share its neighbour's.
    std::shared_ptr<GpuCarry> carry = std::make_shared<GpuCarry>();
  };
  std::vector<Gpu> gpus;

  void ResetGpus(size_t n) {
    gpus.clear();
    gpus.resize(n);
  }

  // The steps of a tick (NvmlSession::Sample), each with the session's mutex held.
  // Init, when it has not succeeded yet. False when the tick ends here (`facts` say why).
  bool EnsureInit(TimePoint deadline, GpuLayerFacts& facts);
  // A listing of the GPUs (MaybeEnumerate) becomes the session's GPUs.
  void Renumber(const EnumOutcome& e);
  // Every GPU whose previous tick has returned, in turn on one sampler thread (JobLane), then
  // the Xid drain on that thread when no GPU is out; waits until `deadline`, each GPU at most
  // the NVML timeout from its own start. Each GPU's facts go into `facts`. True when a GPU is
  // hung (then nothing was drained).
  bool SampleGpus(TimePoint deadline, GpuLayerFacts& facts);
  GpuFacts TakeTick(Gpu& g, int index, TickOutcome out);
  // The facts and hang of a GPU whose worker is still out. True when it is hung.
  bool ReportStuckGpu(Gpu& g, int index, TimePoint start, GpuLayerFacts& facts);
  // Pending Xid events drained without blocking on a worker of their own (when the sampler
  // thread's last job did not drain them), and a drain's events into `facts`.
  void DrainXids(TimePoint deadline, GpuLayerFacts& facts);
  void TakeXids(const DrainOutcome& drained, GpuLayerFacts& facts);
};

NvmlSession::NvmlSession(NvmlSampleOptions options) : state_(std::make_unique<State>()) {
  state_->opts = std::move(options);
}

NvmlSession::~NvmlSession() = default;

int NvmlSession::init_attempts() const { return state_->init_attempts; }

int NvmlSession::enumerations() const { return state_->enumerations; }

int NvmlSession::last_tick_threads() const { return state_->last_tick_threads; }

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
  st.Renumber(e);
}

// GPUs are matched by UUID: one that is still there keeps its per-boot constants, counters and
// (if its worker is stuck) its stuck state under its new index; any other index starts afresh.
// An index whose UUID cannot be read now (a lost GPU answers nothing) or was not asked (stuck)
// keeps the GPU that was there if that one's UUID is seen nowhere else: a lost card stays
// named, a stuck one stays stuck.
void NvmlSession::State::Renumber(const EnumOutcome& e) {
  std::vector<Gpu> old = std::move(gpus);
  std::vector<bool> taken(old.size(), false);
  std::vector<bool> assigned(e.entries.size(), false);
  ResetGpus(e.entries.size());
  auto keep = [&](size_t i, size_t j) {
    taken[j] = assigned[i] = true;
    nvmlDevice_t dev = e.entries[i].dev;
    gpus[i] = std::move(old[j]);
    if (dev != nullptr) gpus[i].dev = dev;
    if (gpus[i].constants->index != static_cast<int>(i)) {
      auto c = std::make_shared<GpuFacts>(*gpus[i].constants);
      c->index = static_cast<int>(i);
      gpus[i].constants = std::move(c);
    }
  };
  for (size_t i = 0; i < e.entries.size(); ++i) {
    const EnumOutcome::Entry& entry = e.entries[i];
    if (entry.dev == nullptr || entry.uuid.empty()) continue;
    for (size_t j = 0; j < old.size(); ++j) {
      if (taken[j] || !old[j].have_constants || old[j].constants->uuid != entry.uuid) continue;
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
  status.device_count = static_cast<int>(e.entries.size());
}

GpuLayerFacts NvmlSession::Sample(TimePoint deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  State& st = *state_;
  GpuLayerFacts facts;
  if (!st.EnsureInit(deadline, facts)) return facts;
  MaybeEnumerate(deadline, facts);
  facts.nvml = st.status;
  facts.driver = st.driver;
  st.status.init_ms.reset();  // reported on the tick init finished, not on every tick after

  // The GPUs on one sampler thread; a GPU whose previous tick is still stuck is not called
  // again. Pending Xid events are drained without blocking, never while a GPU is out.
  st.SampleGpus(deadline, facts);
  return facts;
}

// Init (once, with backoff on failure).
bool NvmlSession::State::EnsureInit(TimePoint deadline, GpuLayerFacts& facts) {
  if (status.state == NvmlState::kOk) return true;
  TimePoint now = SteadyClock::now();
  if (init_pending == nullptr && now >= next_init_try) {
    ++init_attempts;
    init_shared = std::make_shared<WorkerShared>();
    auto shared = init_shared;
    NvmlSampleOptions options = opts;
    init_pending = StartDetached([options, shared] { return RunInit(options, shared->crumb); });
    init_started = now;
  }
  if (init_pending != nullptr) {
    TimePoint wait = std::min(deadline, init_started + opts.timeout);
    if (!init_pending->WaitUntil(wait)) {
      const char* call = init_shared->crumb.current.load();
      std::string name = call ? call : "nvmlInit_v2";
      bool hung = SteadyClock::now() >= init_started + opts.timeout;
      facts.nvml.state = hung ? NvmlState::kInitHung : NvmlState::kInitUnfinished;
      facts.nvml.error = hung ? name + " did not return" : name + " not finished yet";
      NvmlHang h{call ? call : "loading libnvidia-ml",
                 std::nullopt,
                 "",
                 "",
                 "",
                 "",
                 MsSince(init_started)};
      h.check_deadline = !hung;
      facts.hangs.push_back(std::move(h));
      return false;
    }
    InitOutcome init = init_pending->Take();
    init_pending = nullptr;
    status = init.status;
    status.init_ms = MsSince(init_started);
    driver = init.driver;
    if (init.status.state == NvmlState::kOk) {
      lib = init.lib;
      events = init.events;
      ResetGpus(static_cast<size_t>(*init.status.device_count));
      backoff = kInitBackoffMin;
    } else {
      next_init_try = SteadyClock::now() + backoff;
      backoff =
          std::min(backoff * 2, std::chrono::duration_cast<std::chrono::seconds>(kInitBackoffMax));
    }
  }
  if (status.state != NvmlState::kOk) {
    facts.nvml = status;
    facts.driver = driver;
    return false;
  }
  return true;
}

bool NvmlSession::State::SampleGpus(TimePoint deadline, GpuLayerFacts& facts) {
  TimePoint start = SteadyClock::now();
  std::vector<std::function<void()>> jobs;
  std::vector<size_t> laned;    // the GPU of each job
  bool out_before = false;      // a GPU's earlier tick is still out
  bool reads_identity = false;  // a GPU's per-boot constants are read this tick
  for (size_t i = 0; i < gpus.size(); ++i) {
    Gpu& g = gpus[i];
    if (g.pending != nullptr && !g.pending->Done()) {
      out_before = true;
      continue;
    }
    if (g.pending != nullptr) continue;  // back late: collected below
    reads_identity = reads_identity || !g.have_constants;
    laned.push_back(i);
  }
  // With no GPU out, the last GPU job of the tick drains the pending Xid events on its thread.
  std::shared_ptr<TailDrain> tail;
  if (events != nullptr && !out_before && !laned.empty()) {
    tail = std::make_shared<TailDrain>();
    tail->remaining.store(static_cast<int>(laned.size()));
    tail->lib = lib;
    tail->set = events;
  }
  for (size_t i : laned) {
    Gpu& g = gpus[i];
    // The GPU's previous tick has returned (or never ran): its worker is done with `shared`,
    // which is reused (the partial facts' storage with it).
    if (g.shared == nullptr) g.shared = std::make_shared<WorkerShared>();
    g.shared->crumb.calls.store(0);
    g.shared->crumb.current.store(nullptr);
    g.pending = std::make_shared<PendingResult<TickOutcome>>();
    g.started = start;
    jobs.push_back([tick_lib = lib, shared = g.shared, index = static_cast<int>(i),
                    tick_events = events, have = g.have_constants, constants = g.constants,
                    dev = g.dev, carry = g.carry, pending = g.pending, tail] {
      pending->Set(
          RunGpuTick(*tick_lib, *shared, index, tick_events, have, *constants, dev, *carry));
      if (tail != nullptr) tail->JobDone();
    });
  }
  // A tick that reads GPUs' per-boot constants (the first, or after a re-enumeration: ~25 calls
  // a GPU) gives each GPU a thread, as a check does.
  auto share = last_gpu_work / kGpuThreadShare + 1;
  if (reads_identity) share = static_cast<int64_t>(laned.size());
  int threads = static_cast<int>(std::min<int64_t>(share, std::max<size_t>(laned.size(), 1)));
  // Short ticks (watch --interval 0.3) move the GPUs behind a slow one sooner.
  auto stall =
      std::min<SteadyClock::duration>({kGpuStall, opts.timeout / 2, (deadline - start) / 4});
  JobLane lane(std::move(jobs));
  lane.Start(threads);
  lane.Run(deadline, stall, opts.timeout);
  last_tick_threads = lane.workers();
  std::vector<SteadyClock::duration> ran(gpus.size(), SteadyClock::duration::zero());
  for (size_t j = 0; j < laned.size(); ++j) {
    Gpu& g = gpus[laned[j]];
    ran[laned[j]] = lane.ran(j);
    if (lane.state(j) == JobLane::JobState::kWithdrawn) {
      g.pending = nullptr;  // never started: this tick's facts are missing, the next tick asks
      g.started = TimePoint{};
    } else if (TimePoint began = lane.started_at(j); began != TimePoint{}) {
      g.started = began;
    }
  }

  // How long the GPUs' ticks took together, held with a decay: a tick that skips its slow reads
  // does not put the next one on one thread.
  SteadyClock::duration work = SteadyClock::duration::zero();
  bool any_hung = false;
  facts.gpus.reserve(facts.gpus.size() + gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) {
    Gpu& g = gpus[i];
    int index = static_cast<int>(i);
    if (g.pending != nullptr && g.pending->Done()) {
      TickOutcome out = g.pending->Take();
      g.pending = nullptr;
      work += ran[i];
      facts.gpus.push_back(TakeTick(g, index, std::move(out)));
      continue;
    }
    if (ReportStuckGpu(g, index, start, facts)) any_hung = true;
  }
  last_gpu_work = std::max(work, last_gpu_work * 3 / 4);
  if (tail != nullptr) {
    int expect = TailDrain::kPending;
    if (!tail->state.compare_exchange_strong(expect, TailDrain::kCancelled)) {
      // Started by the last GPU job: taken when through, else cut by the deadline or stuck, and
      // the event API is not used again.
      if (tail->result.Done()) {
        DrainOutcome drained = tail->result.Take();
        if (!any_hung) TakeXids(drained, facts);
      } else {
        events = nullptr;
        events_broken = true;
      }
      return any_hung;
    }
  }
  if (any_hung || events == nullptr) return any_hung;
  for (const Gpu& g : gpus) {
    if (g.pending != nullptr) return any_hung;  // a GPU's call is out: no drain this tick
  }
  DrainXids(deadline, facts);
  return any_hung;
}

void NvmlSession::State::DrainXids(TimePoint deadline, GpuLayerFacts& facts) {
  auto tail_shared = std::make_shared<WorkerShared>();
  nvmlEventSet_t set = events;
  std::shared_ptr<const Library> tick_lib = lib;
  auto drained = RunWithDeadline(
      [tick_lib, tail_shared, set] {
        return DrainEvents(*tick_lib, tail_shared->crumb, set, /*free_set=*/false);
      },
      std::min(deadline, SteadyClock::now() + opts.timeout));
  if (!drained) {
    events = nullptr;  // the event API hung once: never again in this session
    events_broken = true;
    return;
  }
  TakeXids(*drained, facts);
}

// A GPU's returned tick; the per-boot constants it read are kept for the ticks after.
GpuFacts NvmlSession::State::TakeTick(Gpu& g, int index, TickOutcome out) {
  if (out.identity_read && out.dev != nullptr && !out.facts.lost) {
    g.have_constants = true;
    g.constants = std::make_shared<const GpuFacts>(out.facts);
    g.dev = out.dev;
  }
  GpuFacts f = std::move(out.facts);
  f.index = index;
  if (f.lost) lost_seen = true;
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
  return f;
}

// Still running: hung (past the NVML timeout) or merely unfinished at this tick's deadline.
// Readings it took before the stuck call are kept.
bool NvmlSession::State::ReportStuckGpu(Gpu& g, int index, TimePoint start, GpuLayerFacts& facts) {
  GpuFacts f = *g.constants;
  if (g.shared != nullptr && g.started >= start) {
    std::lock_guard<std::mutex> lock(g.shared->partial_mu);
    if (g.shared->live != nullptr) {
      f = *g.shared->live;  // the worker is inside a call (it holds the lock otherwise)
    } else if (g.shared->partial) {
      f = *g.shared->partial;
    }
  }
  f.index = index;
  f.first = f.second = GpuCounterRead{};
  // A GPU whose turn did not come this tick (pending null) is unfinished, never hung.
  bool hung = g.pending != nullptr && SteadyClock::now() >= g.started + opts.timeout;
  f.hung = hung;
  f.unfinished = !hung;
  NvmlHang h;
  h.gpu_index = index;
  h.check_deadline = !hung;
  if (g.shared != nullptr) {
    NameFromCrumb(g.shared->crumb, f, h);
    const char* call = g.shared->crumb.current.load();
    h.call = call ? call : "(between NVML calls)";
  }
  h.waited_ms = MsSince(g.started);
  facts.hangs.push_back(std::move(h));
  facts.gpus.push_back(std::move(f));
  return hung;
}

void NvmlSession::State::TakeXids(const DrainOutcome& drained, GpuLayerFacts& facts) {
  facts.nvml.system_calls = drained.calls;
  std::vector<std::pair<nvmlDevice_t, int>> handles;
  for (size_t i = 0; i < gpus.size(); ++i) handles.emplace_back(gpus[i].dev, static_cast<int>(i));
  for (NvmlXidEvent& e : XidEvents(drained, handles)) facts.nvml_xid_events.push_back(e);
}

}  // namespace gpudoctor
