// Guarded NVML calls. NVML calls can block forever inside the driver (Xid 119 GSP timeouts,
// nvmlInit hanging for hours: nvml.md §6), so gpudoctor never makes one on a thread it has to
// join. Instead one worker thread runs a whole unit of NVML work (the init sequence, or the
// complete sample of one GPU) and leaves a breadcrumb, an atomic pointer to the name of the call
// it is inside, before every call. The owner waits for the worker only until a deadline; if it
// overruns, the breadcrumb names the exact call that hung, the worker is abandoned (never
// joined), and no further NVML call is made for that GPU during the check.
//
// Cost: one thread per unit of work (per GPU), not per call; a call adds two relaxed atomic
// stores and a counter increment.
// Thread-safety: a Breadcrumb is written by its one worker and read by any thread.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "nvml/abi.h"

namespace gpudoctor::nvml {

struct Breadcrumb {
  std::atomic<const char*> current{nullptr};  // symbol of the call in flight, null between calls
  std::atomic<int> calls{0};                  // calls started so far

  // What the worker learned about its GPU before a possible hang (for the hang report).
  std::mutex mu;
  std::string uuid, pci_bus_id, serial, name;
};

// Makes a call with the breadcrumb set. A null function (optional symbol missing) returns
// NVML_ERROR_FUNCTION_NOT_FOUND without calling anything and without counting.
// `symbol` must outlive the worker (it points into the immutable Library).
template <typename Fn, typename... Args>
nvmlReturn_t GuardedCall(Breadcrumb& crumb, const char* symbol, Fn fn, Args... args) {
  if (fn == nullptr) return NVML_ERROR_FUNCTION_NOT_FOUND;
  crumb.current.store(symbol, std::memory_order_release);
  crumb.calls.fetch_add(1, std::memory_order_relaxed);
  nvmlReturn_t r = fn(args...);
  crumb.current.store(nullptr, std::memory_order_release);
  return r;
}

}  // namespace gpudoctor::nvml
