// Fake NVML: a real shared library named libnvidia-ml.so.1 that answers from a scenario file, so
// the unchanged gpudoctor binary can be tested on machines without a GPU. Test-only code.
//
// Environment:
//   FAKE_NVML_SCENARIO  path of the scenario (re-read at every nvmlInit_v2, and while
//                       initialised by the first call after the file or one it includes is
//                       rewritten, appended to or renamed into place, or after the variable
//                       names another file: a test can inject a fault into a running
//                       `gpudoctor watch` by rewriting it; counter reads keep counting across
//                       such a change). Seen through inotify on the files' directories: a
//                       call costs one non-blocking read() of it, about a real call's ioctl.
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
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
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

// ---- The scenario, parsed once per change into lookups that need no string building ----

// A scenario value and, when the whole of it parses as a number (strtoull, base 0), the number.
struct Value {
  std::string text;
  std::optional<unsigned long long> num;
};
using KeyMap = std::map<std::string, Value, std::less<>>;

Value MakeValue(const std::string& text) {
  Value v{text, std::nullopt};
  if (!text.empty()) {
    char* end = nullptr;
    unsigned long long n = strtoull(text.c_str(), &end, 0);
    if (end != nullptr && *end == '\0') v.num = n;
  }
  return v;
}

// Per-call rules keyed by NVML symbol: block=<symbol>, return.<symbol>, delay_us.<symbol>,
// garbage.<symbol>.
struct Rules {
  std::string block;
  KeyMap ret, delay, garbage;
  bool any = false;  // any rule at all (the common case is none: one test per call)
};

struct ProcessEntry {
  unsigned pid;
  unsigned long long bytes;
};
// processes=pid:bytes,pid:na
std::vector<ProcessEntry> ParseProcesses(const std::string& text) {
  std::vector<ProcessEntry> out;
  std::stringstream ss(text);
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

// One GPU's view: `gpu.N.KEY` over `gpu.*.KEY`, with the prefix taken off; field keys parsed.
struct GpuView {
  KeyMap keys;
  Rules rules;
  bool lost = false;
  std::map<unsigned, const Value*> field_base;                         // field.<id>
  std::map<std::pair<unsigned, unsigned>, const Value*> field_scoped;  // field.<id>.<scope>
  std::map<unsigned, unsigned long long> field_step, field_type;       // field.<id>.step/.type
  bool has_processes = false;
  std::vector<ProcessEntry> processes;
};

struct Scenario {
  KeyMap sys;
  Rules sys_rules;
  // gpus[i] is GPU i's view: its own where the scenario has `gpu.i.` keys, else the one view
  // built from `gpu.*.` keys alone, shared (views are read-only once built).
  std::vector<std::unique_ptr<GpuView>> own_views;
  std::unique_ptr<GpuView> shared_view = std::make_unique<GpuView>();
  const GpuView* gpus[kMaxGpus];
  Scenario() {
    for (const GpuView*& g : gpus) g = shared_view.get();
  }
  std::vector<std::string> files;      // the scenario and its includes, as opened
  std::string env_path;                // the FAKE_NVML_SCENARIO it was read from
  long long mtime_ns = -1, size = -1;  // the file's when read (the fallback without inotify)
};

// A decimal number written as std::to_string writes it (the only spelling a key ever matched).
std::optional<unsigned> CanonicalUint(std::string_view s) {
  if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  unsigned long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > 0xFFFFFFFFull) return std::nullopt;
  return static_cast<unsigned>(v);
}

void AddRule(Rules& r, const std::string& key, const Value& v) {
  static const std::pair<const char*, KeyMap Rules::*> kPrefixes[] = {
      {"return.", &Rules::ret}, {"delay_us.", &Rules::delay}, {"garbage.", &Rules::garbage}};
  if (key == "block") {
    r.block = v.text;
    r.any = true;
    return;
  }
  for (const auto& [prefix, member] : kPrefixes) {
    size_t n = std::strlen(prefix);
    if (key.compare(0, n, prefix) == 0) {
      (r.*member)[key.substr(n)] = v;
      r.any = true;
    }
  }
}

void ParseFile(const std::string& path, int depth, std::map<std::string, std::string>& raw,
               std::vector<std::string>& files) {
  if (depth > 8) return;
  files.push_back(path);
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
      ParseFile(value[0] == '/' ? value : dir + value, depth + 1, raw, files);
    } else if (!key.empty()) {
      raw[key] = value;
    }
  }
}

void BuildView(GpuView& g) {
  for (const auto& [key, v] : g.keys) AddRule(g.rules, key, v);
  g.lost = g.keys.count("lost") && g.keys.at("lost").num.value_or(0) == 1;
  if (auto it = g.keys.find("processes"); it != g.keys.end()) {
    g.has_processes = true;
    g.processes = ParseProcesses(it->second.text);
  }
  for (const auto& [key, v] : g.keys) {
    if (key.compare(0, 6, "field.") != 0) continue;
    std::string_view rest = std::string_view(key).substr(6);
    size_t dot = rest.find('.');
    auto id = CanonicalUint(rest.substr(0, dot));
    if (!id) continue;
    if (dot == std::string_view::npos) {
      g.field_base[*id] = &v;
      continue;
    }
    std::string_view tail = rest.substr(dot + 1);
    if (tail == "step") {
      if (v.num) g.field_step[*id] = *v.num;
    } else if (tail == "type") {
      if (v.num) g.field_type[*id] = *v.num;
    } else if (auto scope = CanonicalUint(tail)) {
      g.field_scoped[{*id, *scope}] = &v;
    }
  }
}

std::shared_ptr<Scenario> ParseScenario(const char* path) {
  auto sc = std::make_shared<Scenario>();
  std::map<std::string, std::string> raw;
  if (path != nullptr) ParseFile(path, 0, raw, sc->files);
  KeyMap any;  // gpu.*.KEY
  std::map<int, KeyMap> own;
  for (const auto& [key, text] : raw) {
    if (key.compare(0, 4, "gpu.") != 0) {
      sc->sys[key] = MakeValue(text);
      continue;
    }
    size_t dot = key.find('.', 4);
    if (dot == std::string::npos) continue;
    std::string who = key.substr(4, dot - 4);
    std::string sub = key.substr(dot + 1);
    if (who == "*") {
      any[sub] = MakeValue(text);
    } else if (auto n = CanonicalUint(who); n && *n < kMaxGpus) {
      own[static_cast<int>(*n)][sub] = MakeValue(text);
    }
  }
  for (const auto& [key, v] : sc->sys) AddRule(sc->sys_rules, key, v);
  sc->shared_view->keys = any;
  BuildView(*sc->shared_view);
  for (int i = 0; i < kMaxGpus; ++i) {
    auto it = own.find(i);
    if (it == own.end()) continue;
    auto g = std::make_unique<GpuView>();
    g->keys = any;
    for (auto& [k, v] : it->second) g->keys[k] = v;
    BuildView(*g);
    sc->gpus[i] = g.get();
    sc->own_views.push_back(std::move(g));
  }
  return sc;
}

// ---- Noticing a rewritten scenario ----
// The directories of the scenario and its includes are watched with inotify. Every call asks the
// kernel how many event bytes are queued (one ioctl, about what a real NVML call costs; a stat()
// of the path cost a path walk) and takes the lock only when some are, or while another thread
// is re-reading: a rewrite, an append or a rename into place is seen by every call that starts
// after it returned (the kernel queues the event before write() or rename() returns), on any
// thread. Where inotify is unavailable every call stats the file (mtime and size), as before.

std::mutex g_mu;  // loading, the watches, counter reads, the event queues
// The scenario calls answer from; replaced whole (readers keep theirs while it is replaced).
// g_current_mu guards only the pointer's copy and replacement.
std::mutex g_current_mu;
std::shared_ptr<const Scenario> g_current = std::make_shared<const Scenario>();

std::shared_ptr<const Scenario> LoadCurrent() {
  std::lock_guard<std::mutex> lock(g_current_mu);
  return g_current;
}
// Set (under g_mu) before queued events are consumed, cleared once what they caused is loaded: a
// call that finds no event queued waits for such a load (the events it would have seen).
std::atomic<bool> g_loading{false};
std::atomic<int> g_inotify_fd{-1};                   // opened once, never closed
std::atomic<bool> g_stat_mode{false};                // no inotify: stat the file every call
std::vector<std::pair<int, std::string>> g_watched;  // (watch descriptor, file name in it)
std::map<std::tuple<int, unsigned, unsigned>, long long> g_reads;  // counter reads so far
std::atomic<int> g_total_calls{0};
std::atomic<int> g_gpu_calls[kMaxGpus];
int g_counts_fd = -1;

bool StatScenario(const char* path, long long& mtime_ns, long long& size) {
  struct stat st {};
  if (path == nullptr || stat(path, &st) != 0) return false;
  mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  size = static_cast<long long>(st.st_size);
  return true;
}

// Watches the directories of the scenario's files (g_mu held). False when inotify cannot.
bool Watch(const Scenario& sc) {
  int fd = g_inotify_fd.load();
  if (fd < 0) {
    fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return false;
    g_inotify_fd.store(fd);
  }
  std::vector<std::pair<int, std::string>> watched;
  constexpr uint32_t kMask = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE |
                             IN_DELETE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;
  for (const std::string& file : sc.files) {
    size_t slash = file.find_last_of('/');
    std::string dir = slash == std::string::npos ? "." : file.substr(0, slash + 1);
    std::string name = slash == std::string::npos ? file : file.substr(slash + 1);
    int wd = inotify_add_watch(fd, dir.c_str(), kMask);
    if (wd < 0) {
      if (errno == ENOENT) continue;  // no such directory: the file is absent anyway
      return false;
    }
    watched.emplace_back(wd, name);
  }
  for (const auto& [wd, name] : g_watched) {
    bool kept = false;
    for (const auto& w : watched) kept = kept || w.first == wd;
    if (!kept) inotify_rm_watch(fd, wd);
  }
  g_watched = std::move(watched);
  return true;
}

// True when an inotify event since the last look touches a file of the scenario; consumes the
// queued events (g_mu held, g_loading set).
bool ScenarioEvent() {
  bool changed = false;
  alignas(inotify_event) char buf[4096];
  for (;;) {
    ssize_t n = read(g_inotify_fd.load(), buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      if (e->mask & (IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
        changed = true;
        continue;
      }
      for (const auto& [wd, name] : g_watched) {
        if (wd == e->wd && e->len > 0 && name == e->name) changed = true;
      }
    }
  }
  return changed;
}

// (Re)reads the scenario and watches its files (g_mu held, g_loading set).
void Load(const char* path) {
  if (!g_stat_mode.load() && g_inotify_fd.load() >= 0) ScenarioEvent();  // reflected below
  std::shared_ptr<Scenario> sc = ParseScenario(path);
  sc->env_path = path ? path : "";
  if (!StatScenario(path, sc->mtime_ns, sc->size)) sc->mtime_ns = sc->size = -1;
  if (!g_stat_mode.load() && !Watch(*sc)) g_stat_mode.store(true);
  std::lock_guard<std::mutex> lock(g_current_mu);
  g_current = std::move(sc);
}

bool StatChanged(const Scenario& sc, const char* path) {
  long long mtime = 0, size = 0;
  if (!StatScenario(path, mtime, size)) mtime = size = -1;
  return mtime != sc.mtime_ns || size != sc.size;
}

// The scenario as of now: re-read when FAKE_NVML_SCENARIO names another file or a file of it
// changed (not at init: nvmlInit_v2 always re-reads).
std::shared_ptr<const Scenario> Current() {
  const char* path = getenv("FAKE_NVML_SCENARIO");
  std::string_view want = path ? path : "";
  bool look = false;
  bool stat_mode = g_stat_mode.load();
  if (!stat_mode) {
    int queued = 0;
    int fd = g_inotify_fd.load();
    look = fd < 0 || ioctl(fd, FIONREAD, &queued) != 0 || queued > 0 || g_loading.load();
  }
  std::shared_ptr<const Scenario> sc = LoadCurrent();
  if (!look) look = sc->env_path != want || (stat_mode && StatChanged(*sc, path));
  if (!look) return sc;
  std::lock_guard<std::mutex> lock(g_mu);
  g_loading.store(true);
  sc = LoadCurrent();
  bool changed = sc->env_path != want;
  if (!changed && !g_stat_mode.load() && g_inotify_fd.load() >= 0) {
    changed = ScenarioEvent();
  } else if (!changed) {
    changed = StatChanged(*sc, path);
  }
  if (changed) Load(path);
  g_loading.store(false);
  return LoadCurrent();
}

void Reload() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_loading.store(true);
  Load(getenv("FAKE_NVML_SCENARIO"));
  g_loading.store(false);
  g_reads.clear();
  g_total_calls = 0;
  for (auto& c : g_gpu_calls) c = 0;
  if (g_counts_fd >= 0) close(g_counts_fd);
  g_counts_fd = -1;
  if (const char* counts = getenv("FAKE_NVML_COUNTS")) {
    g_counts_fd = open(counts, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
}

// The scenario the calling thread's current call answers from (set by Enter).
thread_local std::shared_ptr<const Scenario> t_scenario;

const Value* Find(const KeyMap& m, std::string_view key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

const Value* Sys(std::string_view key) { return Find(t_scenario->sys, key); }

const GpuView& View(int gpu) { return *t_scenario->gpus[gpu]; }

const Value* Gpu(int gpu, std::string_view key) { return Find(View(gpu).keys, key); }

std::optional<unsigned long long> Num(const Value* v) {
  if (v == nullptr) return std::nullopt;
  return v->num;
}

std::optional<unsigned long long> RuleNum(const KeyMap& m, const char* symbol) {
  if (m.empty()) return std::nullopt;
  return Num(Find(m, symbol));
}

void WriteCounts() {
  if (g_counts_fd < 0) return;
  char text[16 * (kMaxGpus + 1)];
  int len = std::snprintf(text, sizeof text, "total %d\n", g_total_calls.load());
  for (int i = 0; i < kMaxGpus; ++i) {
    int c = g_gpu_calls[i].load();
    if (c > 0) len += std::snprintf(text + len, sizeof text - len, "gpu%d %d\n", i, c);
  }
  ssize_t ignored = pwrite(g_counts_fd, text, static_cast<size_t>(len), 0);
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
  t_scenario = Current();
  g_total_calls.fetch_add(1);
  if (gpu >= 0 && gpu < kMaxGpus) g_gpu_calls[gpu].fetch_add(1);
  WriteCounts();
  // FAKE_NVML_TRACE=1: every call on stderr, to see where a call budget goes.
  static const bool trace = getenv("FAKE_NVML_TRACE") != nullptr;
  if (trace) std::fprintf(stderr, "fake_nvml gpu%d %s\n", gpu, symbol);
  const Rules& rules = gpu < 0 ? t_scenario->sys_rules : View(gpu).rules;
  if (rules.any) {
    if (rules.block == symbol) BlockForever();
    if (gpu >= 0) {
      if (auto d = RuleNum(rules.delay, symbol)) usleep(static_cast<useconds_t>(*d));
    }
    if (auto r = RuleNum(rules.ret, symbol)) return static_cast<nvmlReturn_t>(*r);
  }
  if (gpu >= 0 && View(gpu).lost) return NVML_ERROR_GPU_IS_LOST;
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
  if (RuleNum(View(gpu).rules.garbage, symbol).value_or(0) == 1) {
    std::memset(buf, 'Z', len);  // no terminating NUL anywhere in the buffer
    return NVML_SUCCESS;
  }
  const Value* v = Gpu(gpu, key);
  if (v == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  if (v->text.size() + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, v->text.c_str(), v->text.size() + 1);
  return NVML_SUCCESS;
}

// field.<id> for gpu; nullptr when absent.
const Value* FieldBase(int gpu, unsigned id) {
  const GpuView& g = View(gpu);
  auto it = g.field_base.find(id);
  return it == g.field_base.end() ? nullptr : it->second;
}

// field.<id>.<scope> for gpu; nullptr when absent.
const Value* FieldScoped(int gpu, unsigned id, unsigned scope) {
  const GpuView& g = View(gpu);
  auto it = g.field_scoped.find({id, scope});
  return it == g.field_scoped.end() ? nullptr : it->second;
}

// A field value for gpu: scope-specific key first; counters grow by `step` per read.
// `reads_locked`: the caller holds g_mu (a batch takes it once for all its fields).
nvmlReturn_t FieldRead(int gpu, unsigned id, unsigned scope, unsigned long long* value, int* type,
                       bool reads_locked = false) {
  const GpuView& g = View(gpu);
  const Value* v = FieldScoped(gpu, id, scope);
  if (v == nullptr && id == kFieldNvLinkGetState) {
    auto links = Num(FieldBase(gpu, kFieldNvLinkLinkCount)).value_or(0);
    if (scope >= static_cast<unsigned>(links)) return NVML_ERROR_INVALID_ARGUMENT;
    v = FieldBase(gpu, id);
  } else if (v == nullptr && (scope == 0 || scope == kScopeAllLinks)) {
    v = FieldBase(gpu, id);
  }
  auto n = Num(v);
  if (!n) return NVML_ERROR_NOT_SUPPORTED;
  long long reads;
  if (reads_locked) {
    reads = g_reads[{gpu, id, scope}]++;
  } else {
    std::lock_guard<std::mutex> lock(g_mu);
    reads = g_reads[{gpu, id, scope}]++;
  }
  auto step = g.field_step.find(id);
  auto t = g.field_type.find(id);
  *value =
      *n + (step == g.field_step.end() ? 0 : step->second) * static_cast<unsigned long long>(reads);
  *type = t == g.field_type.end() ? static_cast<int>(NVML_VALUE_TYPE_UNSIGNED_LONG_LONG)
                                  : static_cast<int>(t->second);
  return NVML_SUCCESS;
}

nvmlReturn_t FieldUint(int gpu, unsigned id, unsigned* out) {
  unsigned long long v = 0;
  int type = 0;
  nvmlReturn_t r = FieldRead(gpu, id, 0, &v, &type);
  if (r == NVML_SUCCESS) *out = static_cast<unsigned>(v);
  return r;
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
  if (!View(gpu).has_processes) return NVML_ERROR_NOT_SUPPORTED;
  const std::vector<ProcessEntry>& procs = View(gpu).processes;
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
  if (const Value* b = Sys("init.block"); b != nullptr && b->text == "1") BlockForever();
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
  const Value* v = Sys("driver_version");
  if (v == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  snprintf(buf, len, "%s", v->text.c_str());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* buf, unsigned len) {
  ENTER_SYS("nvmlSystemGetNVMLVersion");
  const Value* v = Sys("nvml_version");
  if (v == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  snprintf(buf, len, "%s", v->text.c_str());
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
  if (RuleNum(View(gpu).rules.garbage, "nvmlDeviceGetPciInfo_v3").value_or(0) == 1) {
    std::memset(pci, 0xff, sizeof *pci);
    return NVML_SUCCESS;
  }
  const Value* id = Gpu(gpu, "pci_bus_id");
  if (id == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  std::memset(pci, 0, sizeof *pci);
  unsigned d = 0, b = 0, s = 0;
  if (sscanf(id->text.c_str(), "%x:%x:%x", &d, &b, &s) != 3) return NVML_ERROR_UNKNOWN;
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
  std::lock_guard<std::mutex> lock(g_mu);  // once for the batch's counter reads
  for (int i = 0; i < count; ++i) {
    unsigned long long v = 0;
    int type = 0;
    values[i].nvmlReturn =
        FieldRead(gpu, values[i].fieldId, values[i].scopeId, &v, &type, /*reads_locked=*/true);
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
  unsigned links = static_cast<unsigned>(Num(FieldBase(gpu, kFieldNvLinkLinkCount)).value_or(0));
  if (link >= links) return NVML_ERROR_INVALID_ARGUMENT;
  int t = 0;
  if (FieldScoped(gpu, id, link) != nullptr || link == 0) {
    return FieldRead(gpu, id, link, value, &t);
  }
  if (FieldBase(gpu, id) == nullptr) return NVML_ERROR_NOT_SUPPORTED;
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
  const Value* xids = Gpu(gpu, "xid");
  if (xids == nullptr) return NVML_SUCCESS;
  auto* s = reinterpret_cast<FakeEventSet*>(set);
  std::stringstream ss(xids->text);
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
