// The CUDA runtime a GPU process loaded, from the library paths in /proc/PID/maps.
//
// Privacy: only the path column of maps is used, and only paths of CUDA libraries (libcudart,
// libnvrtc, libcublas, libcuda) are kept; addresses, other libraries, cmdline and environment are
// never read or stored.
// Safety: maps takes the task's mm lock, which a task stuck in the driver may hold forever. A
// process is skipped when any of its threads is in D state (/proc/PID/task/*/stat), and each
// read runs on a worker under a short deadline; after one read overran, no more maps are read in
// this run (the stuck worker is abandoned, core/deadline.h).
// Version: libcudart.so.X.Y.Z (a real file name: X.Y known); libcudart.so.X, libcudart.so.X.Y
// and bundled copies (libcudart-HASH.so.11.0) carry only the soname: X known. libnvrtc and
// libcublas count only when no libcudart is mapped (statically linked runtime), major only.
// Thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "facts/gpu_facts.h"

namespace gpudoctor {

struct CudaRuntimeSeen {
  std::optional<int> major, minor;  // minor only from a full X.Y.Z file name
  std::string path;                 // the library's path as mapped
  bool forward_compat = false;      // libcuda.so from a ".../compat/" directory
  // In `watch`'s cache only: /proc had no such process (exited, or of another PID namespace),
  // so it is not looked for again while NVML lists it under the same pid and comm.
  bool no_such_process = false;
};

// Pure parser of maps text (outside input).
CudaRuntimeSeen ParseCudaRuntimeMaps(std::string_view maps);

// What `watch` keeps between ticks: a process's libraries do not change, so maps is read once
// per process (pid and comm; entries of processes gone are dropped). A pid /proc does not have
// is remembered too (no_such_process) and not looked for again while NVML lists it.
using CudaRuntimeCache = std::map<std::pair<uint32_t, std::string>, CudaRuntimeSeen>;

// Fills cuda_runtime* and maps_note of every GPU process (each pid read once), stopping at
// `deadline`. Each read gets at most per_read_ms. `cache` may be null.
void ReadCudaRuntimes(const RootFs& fs, GpuLayerFacts& facts, TimePoint deadline,
                      CudaRuntimeCache* cache = nullptr, int per_read_ms = 500);

}  // namespace gpudoctor
