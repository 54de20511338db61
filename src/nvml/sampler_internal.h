// Internals of the NVML sampler shared by its .cc files (sampler.cc, session.cc, the gpu_*.cc
// parts of GpuSampler, nvml_events.cc). Not part of the public interface: sampler.h and
// session.h are.
//
// Contract of what is here:
// - Plausibility limits: a value outside them is garbage from the driver and is left absent.
// - Calls: every NVML call of a unit of work goes through one Calls (NVML_CALL / NVML_CALL0),
//   which sets the breadcrumb (guarded.h), counts the call and, given a CallMemo, does not ask
//   again what answered NOT_SUPPORTED.
// - WorkerShared: what a worker shares with its owner, who may abandon it after a deadline.
// - RunInit and DrainEvents: units of work run on a worker (they may hang inside NVML).
// Thread-safety: a Calls and a CallMemo are used by one worker at a time; WorkerShared is
// shared as documented on its members.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/deadline.h"
#include "facts/gpu_facts.h"
#include "nvml/guarded.h"
#include "nvml/loader.h"
#include "nvml/sampler.h"

namespace gpudoctor::nvml_internal {

using nvml::Breadcrumb;
using nvml::Library;
using nvml::nvmlDevice_t;
using nvml::nvmlEventSet_t;
using nvml::nvmlFieldValue_t;
using nvml::nvmlReturn_t;

// Errors listed per GPU at most (GpuFacts::errors).
inline constexpr size_t kMaxErrorsPerGpu = 16;

// Plausibility limits: values outside are garbage from the driver, dropped as unknown.
inline constexpr int kMinTempC = -40, kMaxTempC = 150;
inline constexpr uint32_t kMaxPowerMw = 10'000'000;  // 10 kW
inline constexpr uint32_t kMaxClockMhz = 20'000;
inline constexpr uint64_t kMaxMemoryBytes = 1ULL << 44;  // 16 TiB
inline constexpr uint64_t kMaxCounter = 1ULL << 48;
inline constexpr uint64_t kMaxRows = 1'000'000;
inline constexpr unsigned long long kMaxReasonMask = 0xFFFF;

inline std::optional<uint32_t> InRange(uint32_t v, uint32_t lo, uint32_t hi) {
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

inline bool ValidPcieWidth(uint32_t w) {
  return w == 1 || w == 2 || w == 4 || w == 8 || w == 12 || w == 16 || w == 32;
}

inline std::optional<uint64_t> Counter(std::optional<uint64_t> v, uint64_t max = kMaxCounter) {
  if (!v || *v > max) return std::nullopt;
  return v;
}

inline std::optional<bool> Flag(std::optional<uint64_t> v) {
  if (!v || *v > 1) return std::nullopt;
  return *v == 1;
}

// A fixed-size string result: an unterminated buffer is garbage (empty); non-printable bytes
// are replaced.
std::string TerminatedString(const char* buf, size_t size);

// Value of a field entry as an unsigned integer; nullopt for errors, negatives, unknown types.
std::optional<uint64_t> FieldUnsigned(const nvmlFieldValue_t& f);

double MsSince(TimePoint t);

// State shared between a worker and its owner; outlives both (shared_ptr).
struct WorkerShared {
  Breadcrumb crumb;
  // The GPU's facts as far as the worker got, published after each phase: a hang later in the
  // sample must not cost the readings taken before it.
  std::mutex partial_mu;
  std::optional<GpuFacts> partial;
  // A session tick's facts in place (GpuSampler::RunTick), instead of a copy into `partial`
  // after every call: the worker holds partial_mu except while inside an NVML call, so the owner
  // (under partial_mu) reads a consistent *live whenever the worker is in a call or stuck in one.
  // Null outside RunTick (then `partial` holds the tick's last facts).
  const GpuFacts* live = nullptr;
};

// For a GPU whose worker did not return: fills what the worker learned about its GPU (the
// breadcrumb's identity) into `f` where `f` lacks it, and names `hang` after the result.
void NameFromCrumb(Breadcrumb& crumb, GpuFacts& f, NvmlHang& hang);

// What one GPU's calls answered before: a call (symbol and its integer arguments) that said
// NOT_SUPPORTED is not asked again; one that succeeded and later says NOT_SUPPORTED is an error.
// A call is known by its symbol's address (one of Library::names, which never move) and its
// integer arguments: remembering and looking up allocate nothing and compare no strings.
struct CallMemo {
  static constexpr int kMaxArgs = 3;
  struct Entry {
    const char* symbol = nullptr;
    long long args[kMaxArgs] = {};
    bool supported = false;  // else it answered NOT_SUPPORTED
  };
  std::vector<Entry> entries;

  Entry* Find(const Entry& key) {
    for (Entry& e : entries) {
      if (e.symbol == key.symbol && e.args[0] == key.args[0] && e.args[1] == key.args[1] &&
          e.args[2] == key.args[2]) {
        return &e;
      }
    }
    return nullptr;
  }
  // Forgets the NOT_SUPPORTED answers (they are asked again).
  void ForgetUnsupported() {
    std::erase_if(entries, [](const Entry& e) { return !e.supported; });
  }
};

// One GPU's (or the init phase's) calls: counts, remembers NOT_SUPPORTED (with a memo).
class Calls {
 public:
  Calls(const Library& lib, Breadcrumb& crumb, CallMemo* memo = nullptr)
      : lib_(lib), crumb_(crumb), memo_(memo) {}

  // `symbol` is one of lib().names (its address is the memo's key).
  template <typename Fn, typename... Args>
  nvmlReturn_t Make(const std::string& symbol, Fn fn, Args... args) {
    if (memo_ == nullptr || fn == nullptr) return Call(symbol, fn, args...);
    static_assert(((std::is_integral_v<Args> ? 1 : 0) + ... + 0) <= CallMemo::kMaxArgs);
    CallMemo::Entry key;
    key.symbol = symbol.c_str();
    int n = 0;
    (AppendKey(key, n, args), ...);
    (void)n;
    CallMemo::Entry* known = memo_->Find(key);
    if (known != nullptr && !known->supported) return nvml::NVML_ERROR_NOT_SUPPORTED;
    nvmlReturn_t r = Call(symbol, fn, args...);
    if (r == nvml::NVML_SUCCESS) {
      if (known == nullptr) {
        key.supported = true;
        memo_->entries.push_back(key);
      }
    } else if (r == nvml::NVML_ERROR_NOT_SUPPORTED) {
      if (known != nullptr) {
        vanished_ = true;
      } else {
        memo_->entries.push_back(key);
      }
    }
    return r;
  }

  // True once after a call that succeeded earlier answered NOT_SUPPORTED.
  bool TakeVanished() { return std::exchange(vanished_, false); }

  // A lock the worker holds between its calls and lets go of during each call (null: none).
  void HoldBetweenCalls(std::unique_lock<std::mutex>* hold) { hold_ = hold; }

  const Library& lib() const { return lib_; }
  Breadcrumb& crumb() { return crumb_; }

 private:
  template <typename A>
  static void AppendKey(CallMemo::Entry& key, int& n, A a) {
    if constexpr (std::is_integral_v<A>) {
      if (n < CallMemo::kMaxArgs) key.args[n] = static_cast<long long>(a);
      ++n;
    }
  }

  template <typename Fn, typename... Args>
  nvmlReturn_t Call(const std::string& symbol, Fn fn, Args... args) {
    if (hold_ == nullptr || fn == nullptr) {
      return nvml::GuardedCall(crumb_, symbol.c_str(), fn, args...);
    }
    hold_->unlock();
    nvmlReturn_t r = nvml::GuardedCall(crumb_, symbol.c_str(), fn, args...);
    hold_->lock();
    return r;
  }

  const Library& lib_;
  Breadcrumb& crumb_;
  CallMemo* memo_;
  std::unique_lock<std::mutex>* hold_ = nullptr;
  bool vanished_ = false;
};

#define NVML_CALL(calls, member, ...) \
  (calls).Make((calls).lib().names.member, (calls).lib().api.member, __VA_ARGS__)
#define NVML_CALL0(calls, member) (calls).Make((calls).lib().names.member, (calls).lib().api.member)

// The init sequence (sampler.cc): load the library, nvmlInit_v2, device count, driver/NVML/CUDA
// versions, an event set for Xid events (when asked for and the symbols exist).
struct InitOutcome {
  NvmlStatus status;
  DriverFacts driver;
  std::shared_ptr<const Library> lib;
  nvmlEventSet_t events = nullptr;
};
InitOutcome RunInit(const NvmlSampleOptions& opts, Breadcrumb& crumb);

// A non-blocking drain of the pending events of `set` (nvml_events.cc); the set is freed after
// it when `free_set`. `calls` is the breadcrumb's call count at the end.
struct DrainOutcome {
  std::vector<std::pair<nvmlDevice_t, uint64_t>> xids;
  int calls = 0;
};
DrainOutcome DrainEvents(const Library& lib, Breadcrumb& crumb, nvmlEventSet_t set, bool free_set);

// The drained Xids as facts, stamped now; each gets the index paired with its device in
// `handles` (the last pair that matches), none when no pair does.
std::vector<NvmlXidEvent> XidEvents(const DrainOutcome& drained,
                                    const std::vector<std::pair<nvmlDevice_t, int>>& handles);

}  // namespace gpudoctor::nvml_internal
