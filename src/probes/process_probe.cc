// Process probe. Source: /proc/[0-9]*/stat and /proc/PID/task/TID/stat (state, comm), then for
// tasks in D only: /proc/.../wchan and /proc/.../sched (se.exec_start), with /proc/thread-self/
// sched (or /proc/uptime) as the clock reference. NEVER cmdline, environ, maps, smaps or status:
// they take the task's mm lock and block forever on a task stuck in D.
// Units: seconds. Failure modes: tasks that exit mid-scan (ENOENT) are skipped; unreadable
// wchan/sched leave those fields empty; no /proc listing → failed.
// References: proc_pid_stat(5); shared/reference/signals.md §9 (GPUd, nvidia-persistenced#15).
#include <algorithm>
#include <array>
#include <thread>

#include "core/strings.h"
#include "parsers/pid_stat.h"
#include "probes/probe.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxStuckListed = 50;
constexpr int kMaxTasksScanned = 200000;

// Process names of NVIDIA driver tools, daemons and driver kernel threads (comm is at most 15
// characters: "nv-fabricmanage", "nvidia-persiste"). "nvc:" is libnvidia-container's worker.
constexpr std::array<std::string_view, 8> kNvidiaCommPrefixes = {
    "nvidia", "nv-", "nv_", "nvc:", "dcgm", "UVM ", "nvsm", "nvlsm"};
// Kernel symbols of the NVIDIA modules a task waits in (/proc/PID/wchan prints no module name).
constexpr std::array<std::string_view, 5> kNvidiaWchanPrefixes = {"uvm_", "nv_", "_nv", "nvidia",
                                                                  "os_acquire"};

bool HasAnyPrefix(std::string_view s, const auto& prefixes) {
  for (std::string_view p : prefixes) {
    if (StartsWith(s, p)) return true;
  }
  return false;
}

struct Candidate {
  int pid = 0, tid = 0;
  std::string dir;  // "PID/task/TID", or "PID" for the main thread
  std::string comm, thread_comm;
};

std::optional<PidStat> ReadStat(const RootFs& fs, const std::string& dir) {
  auto text = fs.ReadProc(dir + "/stat", 4096);
  if (!text.ok()) return std::nullopt;  // ENOENT: the task exited; normal
  auto st = ParsePidStat(*text);
  if (!st.ok()) return std::nullopt;
  return *st;
}

std::optional<double> ReadExecStartMs(const RootFs& fs, const std::string& dir) {
  auto text = fs.ReadProc(dir + "/sched", 16384);
  if (!text.ok()) return std::nullopt;
  return ParseSchedExecStartMs(*text);
}

// "Now" on the scheduler clock, in ms: our own running thread's exec_start is current within a
// tick and uses the same clock as the tasks' (which excludes suspend, and irq/steal time where
// the kernel accounts them). Falls back to uptime when the kernel has no sched file.
std::optional<double> SchedClockNowMs(const RootFs& fs) {
  if (auto self = ReadExecStartMs(fs, "thread-self")) return self;
  auto text = fs.ReadProc("uptime", 256);
  if (!text.ok()) return std::nullopt;
  if (auto up = ParseUptimeS(*text)) return *up * 1000.0;
  return std::nullopt;
}

struct FirstScan {
  ProcessFacts facts;
  std::vector<Candidate> in_d;
};

FirstScan ScanAll(const RootFs& fs, const std::vector<std::string>& names) {
  FirstScan scan;
  for (const std::string& name : names) {
    auto pid = ParseInt64(name);
    if (!pid || *pid <= 0) continue;
    if (scan.facts.tasks_scanned >= kMaxTasksScanned) break;
    auto leader = ReadStat(fs, name);
    if (!leader) continue;
    ++scan.facts.total;
    ++scan.facts.tasks_scanned;
    if (leader->state == 'Z') ++scan.facts.zombie_count;
    auto add_if_d = [&](const PidStat& st, int tid, std::string dir) {
      if (st.state != 'D') return;
      Candidate c{static_cast<int>(*pid), tid, std::move(dir), leader->comm, ""};
      if (st.comm != leader->comm) c.thread_comm = st.comm;
      scan.in_d.push_back(std::move(c));
    };
    auto tids = RootFs::ListDir(fs.ProcPath(name + "/task"));
    if (!tids.ok()) {
      add_if_d(*leader, static_cast<int>(*pid), name);
      continue;
    }
    for (const std::string& tid_name : *tids) {
      auto tid = ParseInt64(tid_name);
      if (!tid || *tid <= 0) continue;
      if (*tid == *pid) {  // the main thread: /proc/PID/stat is its stat, already read
        add_if_d(*leader, static_cast<int>(*tid), name);
        continue;
      }
      std::string dir = name + "/task/" + tid_name;
      auto st = ReadStat(fs, dir);
      if (!st) continue;
      ++scan.facts.tasks_scanned;
      add_if_d(*st, static_cast<int>(*tid), dir);
    }
  }
  return scan;
}

bool Worse(const StuckProcess& a, const StuckProcess& b) {
  bool an = a.nvidia_tool || a.nvidia_wait, bn = b.nvidia_tool || b.nvidia_wait;
  if (an != bn) return an;
  double as = a.stuck_s.value_or(-1), bs = b.stuck_s.value_or(-1);
  if (as != bs) return as > bs;
  return a.tid < b.tid;
}

}  // namespace

ProbeOutput RunProcessProbe(const ProbeContext& ctx) {
  const RootFs& fs = ctx.fs();
  auto names = RootFs::ListDir(fs.ProcPath(""));
  if (!names.ok()) return ProbeFailed("process list: " + names.status().ToString());

  TimePoint t0 = SteadyClock::now();
  FirstScan scan = ScanAll(fs, *names);

  ProcessFacts facts = std::move(scan.facts);
  // Healthy hosts have no task in D: they skip the wait.
  if (!scan.in_d.empty()) std::this_thread::sleep_until(t0 + ctx.sample_window());
  facts.window_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();

  std::optional<double> now_ms = SchedClockNowMs(fs);
  std::vector<StuckProcess> stuck;
  for (size_t i = 0; i < scan.in_d.size(); ++i) {
    const Candidate& c = scan.in_d[i];
    auto st = ReadStat(fs, c.dir);
    if (!st || st->state != 'D') continue;
    StuckProcess p;
    p.pid = c.pid;
    p.tid = c.tid;
    p.comm = c.comm;
    p.thread_comm = c.thread_comm;
    if (auto w = fs.ReadProc(c.dir + "/wchan", 256); w.ok()) p.wchan = ParseWchan(*w);
    auto exec_ms = ReadExecStartMs(fs, c.dir);
    if (exec_ms && now_ms) {
      // If it ran during the window, exec_start moved and stuck_s is just the time since then.
      p.stuck_s = std::max(0.0, *now_ms - *exec_ms) / 1000.0;
    }
    p.nvidia_tool = HasAnyPrefix(p.comm, kNvidiaCommPrefixes) ||
                    HasAnyPrefix(p.thread_comm, kNvidiaCommPrefixes);
    p.nvidia_wait = HasAnyPrefix(p.wchan, kNvidiaWchanPrefixes);
    stuck.push_back(std::move(p));
  }
  facts.dstate_count = static_cast<int>(stuck.size());
  std::sort(stuck.begin(), stuck.end(), Worse);
  if (stuck.size() > kMaxStuckListed) stuck.resize(kMaxStuckListed);
  facts.dstate = std::move(stuck);
  return ProbeOk([facts = std::move(facts)](Snapshot& s) { s.host.processes = facts; });
}

}  // namespace gpudoctor
