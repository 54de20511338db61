// Fake NVML: a real shared library named libnvidia-ml.so.1 that answers from a scenario file, so
// the unchanged gpudoctor binary can be tested on machines without a GPU. Test-only code.
//
// Environment:
//   FAKE_NVML_SCENARIO  path of the scenario (re-read at every nvmlInit_v2, and while
//                       initialised whenever the file's mtime or size changes: a test can
//                       inject a fault into a running `gpudoctor watch` by rewriting it;
//                       counter reads keep counting across such a change)
//   FAKE_NVML_COUNTS    optional file rewritten after every call: "total N" then "gpuI N" lines
//
// Scenario: `key=value` lines, `#` comments, `include=other.scenario` (relative to the file).
// Later lines override earlier ones. Per-GPU keys are `gpu.I.KEY` with `gpu.*.KEY` as default.
// A value that is absent makes the call return NVML_ERROR_NOT_SUPPORTED.
//   System:  init.return, init.block=1, device_count, count.return, driver_version,
//            nvml_version, cuda_driver_version, block=<symbol>, return.<symbol>=<code>
//   Per GPU: name uuid serial vbios pci_bus_id pci_device_id util_gpu util_mem mem_total
//            mem_used temp temp_slowdown temp_shutdown temp_mem_max power_mw power_limit_mw
//            clock_sm clock_mem clock_gfx max_clock_sm max_clock_mem max_clock_gfx reasons fan
//            persistence pcie_gen pcie_max_gen pcie_width pcie_max_width pcie_tx_kbps
//            pcie_rx_kbps enc_util dec_util processes=pid:bytes,pid:na xid=79,48
//            field.<id>[.<scope>]=value  field.<id>.step=growth per read  field.<id>.type=N
//            (a field asked for with scope 0 or all links, 0xFFFFFFFF, reads field.<id>)
//            (ECC, remap and PCIe replay function forms read the same field keys)
//            lost=1 (every call returns GPU_IS_LOST)  block=<symbol> (that call never returns)
//            return.<symbol>=<code>  delay_us.<symbol>=N  garbage.<symbol>=1 (string calls fill
//            the whole buffer without a terminating NUL)
// Build variant FAKE_NVML_MINIMAL leaves out some optional and versioned symbols to test the
// loader's fallbacks (see CMakeLists.txt).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "nvml/abi.h"

using namespace gpudoctor::nvml;  // NOLINT: test library mirrors the C API

namespace {

constexpr int kMaxGpus = 64;

struct FakeGpu {
  int index;
};
FakeGpu g_gpus[kMaxGpus];

struct FakeEventSet {
  std::deque<nvmlEventData_t> queue;
};

std::mutex g_mu;
std::map<std::string, std::string> g_scenario;
std::map<std::string, long long> g_reads;  // "gpu/field/scope" -> reads so far
std::atomic<int> g_total_calls{0};
std::atomic<int> g_gpu_calls[kMaxGpus];
int g_counts_fd = -1;

void ParseFile(const std::string& path, int depth) {
  if (depth > 8) return;
  std::ifstream in(path);
  std::string line;
  std::string dir = path.substr(0, path.find_last_of('/') + 1);
  while (std::getline(in, line)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      size_t b = s.find_first_not_of(" \t\r");
      size_t e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key == "include") {
      ParseFile(value[0] == '/' ? value : dir + value, depth + 1);
    } else if (!key.empty()) {
      g_scenario[key] = value;
    }
  }
}

// The scenario file's identity when last parsed (mtime ns + size).
std::mutex g_stat_mu;
long long g_scenario_mtime_ns = -1;
long long g_scenario_size = -1;

bool ScenarioStat(long long& mtime_ns, long long& size) {
  const char* path = getenv("FAKE_NVML_SCENARIO");
  struct stat st {};
  if (path == nullptr || stat(path, &st) != 0) return false;
  mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  size = static_cast<long long>(st.st_size);
  return true;
}

// Re-parses the scenario when the file changed since it was last read (not at init).
void ReloadIfChanged() {
  long long mtime = 0, size = 0;
  if (!ScenarioStat(mtime, size)) return;
  {
    std::lock_guard<std::mutex> lock(g_stat_mu);
    if (mtime == g_scenario_mtime_ns && size == g_scenario_size) return;
    g_scenario_mtime_ns = mtime;
    g_scenario_size = size;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_scenario.clear();
  const char* path = getenv("FAKE_NVML_SCENARIO");
  if (path != nullptr) ParseFile(path, 0);
}

void Reload() {
  {
    std::lock_guard<std::mutex> lock(g_stat_mu);
    if (!ScenarioStat(g_scenario_mtime_ns, g_scenario_size)) g_scenario_mtime_ns = -1;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_scenario.clear();
  g_reads.clear();
  const char* path = getenv("FAKE_NVML_SCENARIO");
  if (path != nullptr) ParseFile(path, 0);
  g_total_calls = 0;
  for (auto& c : g_gpu_calls) c = 0;
  if (g_counts_fd >= 0) close(g_counts_fd);
  g_counts_fd = -1;
  if (const char* counts = getenv("FAKE_NVML_COUNTS")) {
    g_counts_fd = open(counts, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
}

std::optional<std::string> Sys(const std::string& key) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_scenario.find(key);
  if (it == g_scenario.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Gpu(int gpu, const std::string& key) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_scenario.find("gpu." + std::to_string(gpu) + "." + key);
  if (it == g_scenario.end()) it = g_scenario.find("gpu.*." + key);
  if (it == g_scenario.end()) return std::nullopt;
  return it->second;
}

std::optional<unsigned long long> Num(const std::optional<std::string>& s) {
  if (!s || s->empty()) return std::nullopt;
  char* end = nullptr;
  unsigned long long v = strtoull(s->c_str(), &end, 0);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return v;
}

void WriteCounts() {
  if (g_counts_fd < 0) return;
  std::string text = "total " + std::to_string(g_total_calls.load()) + "\n";
  for (int i = 0; i < kMaxGpus; ++i) {
    int c = g_gpu_calls[i].load();
    if (c > 0) text += "gpu" + std::to_string(i) + " " + std::to_string(c) + "\n";
  }
  ssize_t ignored = pwrite(g_counts_fd, text.data(), text.size(), 0);
  (void)ignored;
}

[[noreturn]] void BlockForever() {
  for (;;) sleep(3600);
}

int GpuIndex(nvmlDevice_t dev) {
  auto* g = reinterpret_cast<FakeGpu*>(dev);
  if (g < g_gpus || g >= g_gpus + kMaxGpus) return -1;
  return g->index;
}

// Common prologue: counts the call and applies block / delay / return / lost rules.
// Returns the code to return early, or nullopt to go on answering.
std::optional<nvmlReturn_t> Enter(const char* symbol, int gpu) {
  ReloadIfChanged();
  g_total_calls.fetch_add(1);
  if (gpu >= 0 && gpu < kMaxGpus) g_gpu_calls[gpu].fetch_add(1);
  WriteCounts();
  // FAKE_NVML_TRACE=1: every call on stderr, to see where a call budget goes.
  static const bool trace = getenv("FAKE_NVML_TRACE") != nullptr;
  if (trace) std::fprintf(stderr, "fake_nvml gpu%d %s\n", gpu, symbol);
  if (gpu < 0) {
    if (Sys("block") == std::string(symbol)) BlockForever();
    if (auto r = Num(Sys(std::string("return.") + symbol))) return static_cast<nvmlReturn_t>(*r);
    return std::nullopt;
  }
  if (Gpu(gpu, "block") == std::string(symbol)) BlockForever();
  if (auto d = Num(Gpu(gpu, std::string("delay_us.") + symbol)))
    usleep(static_cast<useconds_t>(*d));
  if (auto r = Num(Gpu(gpu, std::string("return.") + symbol))) return static_cast<nvmlReturn_t>(*r);
  if (Num(Gpu(gpu, "lost")).value_or(0) == 1) return NVML_ERROR_GPU_IS_LOST;
  return std::nullopt;
}

#define ENTER_SYS(symbol) \
  if (auto early = Enter(symbol, -1)) return *early;
#define ENTER_DEV(symbol, dev)          \
  int gpu = GpuIndex(dev);              \
  if (gpu < 0) {                        \
    Enter(symbol, -1);                  \
    return NVML_ERROR_INVALID_ARGUMENT; \
  }                                     \
  if (auto early = Enter(symbol, gpu)) return *early;

nvmlReturn_t UintOut(int gpu, const char* key, unsigned* out) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto v = Num(Gpu(gpu, key));
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  *out = static_cast<unsigned>(*v);
  return NVML_SUCCESS;
}

nvmlReturn_t StringOut(int gpu, const char* symbol, const char* key, char* buf, unsigned len) {
  if (buf == nullptr || len == 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (Num(Gpu(gpu, std::string("garbage.") + symbol)).value_or(0) == 1) {
    std::memset(buf, 'Z', len);  // no terminating NUL anywhere in the buffer
    return NVML_SUCCESS;
  }
  auto v = Gpu(gpu, key);
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  if (v->size() + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, v->c_str(), v->size() + 1);
  return NVML_SUCCESS;
}

// A field value for gpu: scope-specific key first; counters grow by `step` per read.
nvmlReturn_t FieldRead(int gpu, unsigned id, unsigned scope, unsigned long long* value, int* type) {
  std::string base = "field." + std::to_string(id);
  auto v = Gpu(gpu, base + "." + std::to_string(scope));
  if (!v && id == kFieldNvLinkGetState) {
    unsigned links = static_cast<unsigned>(Num(Gpu(gpu, "field.91")).value_or(0));
    if (scope >= links) return NVML_ERROR_INVALID_ARGUMENT;
    v = Gpu(gpu, base);
  } else if (!v && (scope == 0 || scope == kScopeAllLinks)) {
    v = Gpu(gpu, base);
  }
  auto n = Num(v);
  if (!n) return NVML_ERROR_NOT_SUPPORTED;
  long long reads;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    reads = g_reads[std::to_string(gpu) + "/" + std::to_string(id) + "/" + std::to_string(scope)]++;
  }
  unsigned long long step = Num(Gpu(gpu, base + ".step")).value_or(0);
  *value = *n + step * static_cast<unsigned long long>(reads);
  *type =
      static_cast<int>(Num(Gpu(gpu, base + ".type")).value_or(NVML_VALUE_TYPE_UNSIGNED_LONG_LONG));
  return NVML_SUCCESS;
}

nvmlReturn_t FieldUint(int gpu, unsigned id, unsigned* out) {
  unsigned long long v = 0;
  int type = 0;
  nvmlReturn_t r = FieldRead(gpu, id, 0, &v, &type);
  if (r == NVML_SUCCESS) *out = static_cast<unsigned>(v);
  return r;
}

struct ProcessEntry {
  unsigned pid;
  unsigned long long bytes;
};
std::vector<ProcessEntry> Processes(int gpu) {
  std::vector<ProcessEntry> out;
  auto v = Gpu(gpu, "processes");
  if (!v) return out;
  std::stringstream ss(*v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t colon = item.find(':');
    if (colon == std::string::npos) continue;
    unsigned pid = static_cast<unsigned>(strtoul(item.substr(0, colon).c_str(), nullptr, 10));
    std::string b = item.substr(colon + 1);
    out.push_back({pid, b == "na" ? kValueNotAvailable : strtoull(b.c_str(), nullptr, 0)});
  }
  return out;
}

const char* ErrorText(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "RM has detected an NVML/RM version mismatch.";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t Reasons(const char* symbol, nvmlDevice_t dev, unsigned long long* mask) {
  ENTER_DEV(symbol, dev);
  auto v = Num(Gpu(gpu, "reasons"));
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  *mask = *v;
  return NVML_SUCCESS;
}
template <typename Info>
nvmlReturn_t ProcessList(int gpu, unsigned* count, Info* infos) {
  if (!Gpu(gpu, "processes")) return NVML_ERROR_NOT_SUPPORTED;
  auto procs = Processes(gpu);
  if (*count < procs.size() || infos == nullptr) {
    unsigned needed = static_cast<unsigned>(procs.size());
    *count = needed;
    return needed == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (size_t i = 0; i < procs.size(); ++i) {
    std::memset(&infos[i], 0, sizeof infos[i]);
    infos[i].pid = procs[i].pid;
    infos[i].usedGpuMemory = procs[i].bytes;
  }
  *count = static_cast<unsigned>(procs.size());
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int fake_nvml_call_count(int gpu) {
  if (gpu < 0) return g_total_calls.load();
  if (gpu >= kMaxGpus) return 0;
  return g_gpu_calls[gpu].load();
}

nvmlReturn_t nvmlInit_v2() {
  Reload();
  Enter("nvmlInit_v2", -1);
  if (Sys("init.block") == std::string("1")) BlockForever();
  if (auto r = Num(Sys("init.return"))) return static_cast<nvmlReturn_t>(*r);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown() {
  ENTER_SYS("nvmlShutdown");
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t r) { return ErrorText(r); }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  ENTER_SYS("nvmlDeviceGetCount_v2");
  if (auto r = Num(Sys("count.return"))) return static_cast<nvmlReturn_t>(*r);
  *count = static_cast<unsigned>(Num(Sys("device_count")).value_or(0));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* dev) {
  if (index >= kMaxGpus) {
    Enter("nvmlDeviceGetHandleByIndex_v2", -1);
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  g_gpus[index].index = static_cast<int>(index);
  if (auto early = Enter("nvmlDeviceGetHandleByIndex_v2", static_cast<int>(index))) return *early;
  *dev = reinterpret_cast<nvmlDevice_t>(&g_gpus[index]);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  ENTER_SYS("nvmlSystemGetDriverVersion");
  auto v = Sys("driver_version");
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  snprintf(buf, len, "%s", v->c_str());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* buf, unsigned len) {
  ENTER_SYS("nvmlSystemGetNVMLVersion");
  auto v = Sys("nvml_version");
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  snprintf(buf, len, "%s", v->c_str());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  ENTER_SYS("nvmlSystemGetCudaDriverVersion_v2");
  auto n = Num(Sys("cuda_driver_version"));
  if (!n) return NVML_ERROR_LIBRARY_NOT_FOUND;
  *v = static_cast<int>(*n);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char* buf, unsigned len) {
  ENTER_DEV("nvmlDeviceGetName", dev);
  return StringOut(gpu, "nvmlDeviceGetName", "name", buf, len);
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char* buf, unsigned len) {
  ENTER_DEV("nvmlDeviceGetUUID", dev);
  return StringOut(gpu, "nvmlDeviceGetUUID", "uuid", buf, len);
}
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t dev, char* buf, unsigned len) {
  ENTER_DEV("nvmlDeviceGetSerial", dev);
  return StringOut(gpu, "nvmlDeviceGetSerial", "serial", buf, len);
}
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t dev, char* buf, unsigned len) {
  ENTER_DEV("nvmlDeviceGetVbiosVersion", dev);
  return StringOut(gpu, "nvmlDeviceGetVbiosVersion", "vbios", buf, len);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t* pci) {
  ENTER_DEV("nvmlDeviceGetPciInfo_v3", dev);
  if (Num(Gpu(gpu, "garbage.nvmlDeviceGetPciInfo_v3")).value_or(0) == 1) {
    std::memset(pci, 0xff, sizeof *pci);
    return NVML_SUCCESS;
  }
  auto id = Gpu(gpu, "pci_bus_id");
  if (!id) return NVML_ERROR_NOT_SUPPORTED;
  std::memset(pci, 0, sizeof *pci);
  unsigned d = 0, b = 0, s = 0;
  if (sscanf(id->c_str(), "%x:%x:%x", &d, &b, &s) != 3) return NVML_ERROR_UNKNOWN;
  pci->domain = d;
  pci->bus = b;
  pci->device = s;
  snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", d, b, s);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", d & 0xffff, b, s);
  pci->pciDeviceId = static_cast<unsigned>(Num(Gpu(gpu, "pci_device_id")).value_or(0x233010de));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t* u) {
  ENTER_DEV("nvmlDeviceGetUtilizationRates", dev);
  auto g = Num(Gpu(gpu, "util_gpu"));
  auto m = Num(Gpu(gpu, "util_mem"));
  if (!g || !m) return NVML_ERROR_NOT_SUPPORTED;
  u->gpu = static_cast<unsigned>(*g);
  u->memory = static_cast<unsigned>(*m);
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_MINIMAL
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t* m) {
  ENTER_DEV("nvmlDeviceGetMemoryInfo_v2", dev);
  if (m->version != kMemoryV2Version) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  auto total = Num(Gpu(gpu, "mem_total"));
  auto used = Num(Gpu(gpu, "mem_used"));
  if (!total || !used) return NVML_ERROR_NOT_SUPPORTED;
  m->total = *total;
  m->used = *used;
  m->reserved = Num(Gpu(gpu, "mem_reserved")).value_or(0);
  m->free = *total > *used ? *total - *used : 0;
  return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t* m) {
  ENTER_DEV("nvmlDeviceGetMemoryInfo", dev);
  auto total = Num(Gpu(gpu, "mem_total"));
  auto used = Num(Gpu(gpu, "mem_used"));
  if (!total || !used) return NVML_ERROR_NOT_SUPPORTED;
  m->total = *total;
  m->used = *used;
  m->free = *total > *used ? *total - *used : 0;
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_MINIMAL
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned* t) {
  ENTER_DEV("nvmlDeviceGetTemperature", dev);
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return UintOut(gpu, "temp", t);
}
#endif

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t dev, nvmlTemperature_t* t) {
  ENTER_DEV("nvmlDeviceGetTemperatureV", dev);
  if (t->version != kTemperatureV1Version) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  auto v = Num(Gpu(gpu, "temp"));
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  t->temperature = static_cast<int>(*v);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t dev, int which, unsigned* t) {
  ENTER_DEV("nvmlDeviceGetTemperatureThreshold", dev);
  switch (which) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
      return UintOut(gpu, "temp_shutdown", t);
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
      return UintOut(gpu, "temp_slowdown", t);
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
      return UintOut(gpu, "temp_mem_max", t);
    default:
      return NVML_ERROR_NOT_SUPPORTED;
  }
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned* p) {
  ENTER_DEV("nvmlDeviceGetPowerUsage", dev);
  return UintOut(gpu, "power_mw", p);
}
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned* p) {
  ENTER_DEV("nvmlDeviceGetEnforcedPowerLimit", dev);
  return UintOut(gpu, "power_limit_mw", p);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned* mhz) {
  ENTER_DEV("nvmlDeviceGetClockInfo", dev);
  switch (type) {
    case NVML_CLOCK_SM:
      return UintOut(gpu, "clock_sm", mhz);
    case NVML_CLOCK_MEM:
      return UintOut(gpu, "clock_mem", mhz);
    case NVML_CLOCK_GRAPHICS:
      return UintOut(gpu, "clock_gfx", mhz);
    default:
      return NVML_ERROR_NOT_SUPPORTED;
  }
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type, unsigned* mhz) {
  ENTER_DEV("nvmlDeviceGetMaxClockInfo", dev);
  switch (type) {
    case NVML_CLOCK_SM:
      return UintOut(gpu, "max_clock_sm", mhz);
    case NVML_CLOCK_MEM:
      return UintOut(gpu, "max_clock_mem", mhz);
    case NVML_CLOCK_GRAPHICS:
      return UintOut(gpu, "max_clock_gfx", mhz);
    default:
      return NVML_ERROR_NOT_SUPPORTED;
  }
}

#ifndef FAKE_NVML_MINIMAL
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev, unsigned long long* mask) {
  return Reasons("nvmlDeviceGetCurrentClocksEventReasons", dev, mask);
}
#endif
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long* mask) {
  return Reasons("nvmlDeviceGetCurrentClocksThrottleReasons", dev, mask);
}

#ifndef FAKE_NVML_MINIMAL
nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t dev, unsigned* pct) {
  ENTER_DEV("nvmlDeviceGetFanSpeed", dev);
  return UintOut(gpu, "fan", pct);
}
#endif

// Video engines: enc_util / dec_util percent, over a sampling period of 167 ms (an H100's).
nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t dev, unsigned* pct, unsigned* period_us) {
  ENTER_DEV("nvmlDeviceGetEncoderUtilization", dev);
  *period_us = 167000;
  return UintOut(gpu, "enc_util", pct);
}
nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t dev, unsigned* pct, unsigned* period_us) {
  ENTER_DEV("nvmlDeviceGetDecoderUtilization", dev);
  *period_us = 167000;
  return UintOut(gpu, "dec_util", pct);
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, int* mode) {
  ENTER_DEV("nvmlDeviceGetPersistenceMode", dev);
  auto v = Num(Gpu(gpu, "persistence"));
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  *mode = static_cast<int>(*v);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t dev, unsigned* v) {
  ENTER_DEV("nvmlDeviceGetCurrPcieLinkGeneration", dev);
  return UintOut(gpu, "pcie_gen", v);
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t dev, unsigned* v) {
  ENTER_DEV("nvmlDeviceGetCurrPcieLinkWidth", dev);
  return UintOut(gpu, "pcie_width", v);
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t dev, unsigned* v) {
  ENTER_DEV("nvmlDeviceGetMaxPcieLinkGeneration", dev);
  return UintOut(gpu, "pcie_max_gen", v);
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t dev, unsigned* v) {
  ENTER_DEV("nvmlDeviceGetMaxPcieLinkWidth", dev);
  return UintOut(gpu, "pcie_max_width", v);
}
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t dev, unsigned* v) {
  ENTER_DEV("nvmlDeviceGetPcieReplayCounter", dev);
  return FieldUint(gpu, kFieldPcieReplayCounter, v);
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t dev, int counter, unsigned* kbps) {
  ENTER_DEV("nvmlDeviceGetPcieThroughput", dev);
  usleep(20000);  // the real call measures over 20 ms
  return UintOut(gpu, counter == NVML_PCIE_UTIL_TX_BYTES ? "pcie_tx_kbps" : "pcie_rx_kbps", kbps);
}

#ifndef FAKE_NVML_MINIMAL
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t dev, int count, nvmlFieldValue_t* values) {
  ENTER_DEV("nvmlDeviceGetFieldValues", dev);
  if (count < 0 || values == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < count; ++i) {
    unsigned long long v = 0;
    int type = 0;
    values[i].nvmlReturn = FieldRead(gpu, values[i].fieldId, values[i].scopeId, &v, &type);
    if (values[i].nvmlReturn != NVML_SUCCESS) continue;
    values[i].valueType = type;
    if (type == NVML_VALUE_TYPE_UNSIGNED_INT) {
      values[i].value.uiVal = static_cast<unsigned>(v);
    } else {
      values[i].value.ullVal = v;
    }
  }
  return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int type, int counter,
                                         unsigned long long* v) {
  ENTER_DEV("nvmlDeviceGetTotalEccErrors", dev);
  unsigned id = counter == NVML_VOLATILE_ECC
                    ? (type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? kFieldEccSbeVolatileTotal
                                                                : kFieldEccDbeVolatileTotal)
                    : (type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? kFieldEccSbeAggregateTotal
                                                                : kFieldEccDbeAggregateTotal);
  int t = 0;
  return FieldRead(gpu, id, 0, v, &t);
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned* corr, unsigned* unc,
                                       unsigned* pending, unsigned* failed) {
  ENTER_DEV("nvmlDeviceGetRemappedRows", dev);
  if (FieldUint(gpu, kFieldRemappedCorrectable, corr) != NVML_SUCCESS ||
      FieldUint(gpu, kFieldRemappedUncorrectable, unc) != NVML_SUCCESS ||
      FieldUint(gpu, kFieldRemappedPending, pending) != NVML_SUCCESS ||
      FieldUint(gpu, kFieldRemappedFailure, failed) != NVML_SUCCESS) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  return NVML_SUCCESS;
}

// Retired pages: the count comes from the same fields as the batched form (29, 30; 31 pending).
// Addresses are made up (0x1000 × n) when the caller's buffer is large enough.
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t dev, int cause, unsigned* count,
                                       unsigned long long* addresses) {
  ENTER_DEV("nvmlDeviceGetRetiredPages", dev);
  unsigned long long n = 0;
  int type = 0;
  nvmlReturn_t r = FieldRead(gpu, cause == 0 ? kFieldRetiredSbe : kFieldRetiredDbe, 0, &n, &type);
  if (r != NVML_SUCCESS) return r;
  if (addresses == nullptr || *count < n) {
    *count = static_cast<unsigned>(n);
    return n == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned long long i = 0; i < n; ++i) addresses[i] = 0x1000 * (i + 1);
  *count = static_cast<unsigned>(n);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t dev, int* state) {
  ENTER_DEV("nvmlDeviceGetRetiredPagesPendingStatus", dev);
  unsigned long long v = 0;
  int type = 0;
  nvmlReturn_t r = FieldRead(gpu, kFieldRetiredPending, 0, &v, &type);
  if (r == NVML_SUCCESS) *state = static_cast<int>(v);
  return r;
}

// ECC mode: current and pending both from field 1 (NVML_FI_DEV_ECC_CURRENT); field.1.pending
// overrides the pending mode.
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, int* current, int* pending) {
  ENTER_DEV("nvmlDeviceGetEccMode", dev);
  unsigned long long v = 0;
  int t = 0;
  nvmlReturn_t r = FieldRead(gpu, kFieldEccCurrent, 0, &v, &t);
  if (r != NVML_SUCCESS) return r;
  *current = static_cast<int>(v);
  *pending = static_cast<int>(Num(Gpu(gpu, "field.1.pending")).value_or(v));
  return NVML_SUCCESS;
}

// Per-link NVLink error counters: field.<total id>.<link> when given, else link 0 carries the
// scenario's total (field.<total id>, growing by its step) and the other links 0, so the sum
// over the links equals what the batched total field answers.
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t dev, unsigned link, int counter,
                                             unsigned long long* value) {
  ENTER_DEV("nvmlDeviceGetNvLinkErrorCounter", dev);
  unsigned id = 0;
  switch (counter) {
    case NVML_NVLINK_ERROR_DL_REPLAY:
      id = kFieldNvLinkReplayErrorTotal;
      break;
    case NVML_NVLINK_ERROR_DL_RECOVERY:
      id = kFieldNvLinkRecoveryErrorTotal;
      break;
    case NVML_NVLINK_ERROR_DL_CRC_FLIT:
      id = kFieldNvLinkCrcFlitErrorTotal;
      break;
    case NVML_NVLINK_ERROR_DL_CRC_DATA:
      id = kFieldNvLinkCrcDataErrorTotal;
      break;
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
  unsigned links = static_cast<unsigned>(Num(Gpu(gpu, "field.91")).value_or(0));
  if (link >= links) return NVML_ERROR_INVALID_ARGUMENT;
  int t = 0;
  if (Gpu(gpu, "field." + std::to_string(id) + "." + std::to_string(link)) || link == 0) {
    return FieldRead(gpu, id, link, value, &t);
  }
  if (!Gpu(gpu, "field." + std::to_string(id))) return NVML_ERROR_NOT_SUPPORTED;
  *value = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned link, int* state) {
  ENTER_DEV("nvmlDeviceGetNvLinkState", dev);
  unsigned long long v = 0;
  int t = 0;
  nvmlReturn_t r = FieldRead(gpu, kFieldNvLinkGetState, link, &v, &t);
  if (r == NVML_SUCCESS) *state = static_cast<int>(v);
  return r;
}

#ifndef FAKE_NVML_MINIMAL
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned* count,
                                                     nvmlProcessInfo_t* infos) {
  ENTER_DEV("nvmlDeviceGetComputeRunningProcesses_v3", dev);
  return ProcessList(gpu, count, infos);
}
#endif
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t dev, unsigned* count,
                                                  nvmlProcessInfo_v1_t* infos) {
  ENTER_DEV("nvmlDeviceGetComputeRunningProcesses", dev);
  return ProcessList(gpu, count, infos);
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  ENTER_SYS("nvmlEventSetCreate");
  *set = reinterpret_cast<nvmlEventSet_t>(new FakeEventSet());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev, unsigned long long types,
                                      nvmlEventSet_t set) {
  ENTER_DEV("nvmlDeviceRegisterEvents", dev);
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if ((types & kEventTypeXidCriticalError) == 0) return NVML_SUCCESS;
  auto xids = Gpu(gpu, "xid");
  if (!xids) return NVML_SUCCESS;
  auto* s = reinterpret_cast<FakeEventSet*>(set);
  std::stringstream ss(*xids);
  std::string item;
  std::lock_guard<std::mutex> lock(g_mu);
  while (std::getline(ss, item, ',')) {
    nvmlEventData_t e;
    std::memset(&e, 0, sizeof e);
    e.device = dev;
    e.eventType = kEventTypeXidCriticalError;
    e.eventData = strtoull(item.c_str(), nullptr, 10);
    e.gpuInstanceId = e.computeInstanceId = 0xFFFFFFFFu;
    s->queue.push_back(e);
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeout_ms) {
  ENTER_SYS("nvmlEventSetWait_v2");
  auto* s = reinterpret_cast<FakeEventSet*>(set);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!s->queue.empty()) {
      *data = s->queue.front();
      s->queue.pop_front();
      return NVML_SUCCESS;
    }
  }
  if (timeout_ms > 0) usleep(timeout_ms * 1000);
  return NVML_ERROR_TIMEOUT;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  ENTER_SYS("nvmlEventSetFree");
  delete reinterpret_cast<FakeEventSet*>(set);
  return NVML_SUCCESS;
}

}  // extern "C"
