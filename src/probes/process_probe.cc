// Process probe. Source: /proc/[0-9]*/stat and, for processes with more than one thread,
// /proc/PID/task/TID/stat (state, comm, CPU), then
// for tasks in D only: wchan and sched (or schedstat). NEVER cmdline, environ, maps, smaps or
// status: they take the task's mm lock and block forever on a task stuck in D.
// Stuck test: a task in D at both ends of the window whose run time and switch count did not
// move never ran in between (one that did cycles through short D sleeps: I/O, not stuck). How
// long it has not run = now - se.exec_start, only with "now" read from this thread's own sched
// while pinned to the task's last CPU: per-CPU task clocks exclude irq/steal time and drift
// apart (hundreds of ms within an hour, seconds vs /proc/uptime), so no cross-CPU or uptime
// comparison is made; an estimate above the uptime is dropped.
// Under `watch` one scan of every task (each process's stat, and the task/ walk of multi-threaded
// processes: most of this probe's cost, one stat read per thread) serves for ProcessRescanEvery:
// the proc.dstate threshold min_stuck_s less one tick (9 s at the defaults), at most 10 s. Stuck
// time is the kernel's (now - exec_start), not counted from our first sighting, so a task that
// enters D just after a scan and is found by the next one is reported on the same tick as a scan on
// every tick would report it: the tick its stuck time reaches min_stuck_s. `check` always walks
// task/; its leaders' stat lines come from the /proc walk the check shares with the sockets and
// suspicious probes (SharedSamples). Between scans on a quiet host (the last scan found no task in
// D) a run reads nothing and reports that scan's facts again. A host whose last scan found tasks
// in D (a busy I/O host has some most of the time) re-reads only those tasks on the runs between
// scans (stat, then wchan and sched of those still in D), so each stays reported with fresh
// evidence every tick while in D, and counts (total, zombies, tasks_scanned) are the scan's. A
// scan cut short (truncated) leaves no such shortcut: the next run scans again, walking task/ only
// once per ProcessRescanEvery and re-reading the threads the last walk found in D in between.
// Units: seconds. Failure modes: tasks that exit mid-scan are skipped;
// unreadable files leave fields empty; the scan stops near the check deadline (facts.truncated); no
// /proc → failed. References: proc_pid_stat(5), kernel/sched/debug.c; shared/reference/signals.md
// §9.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>
#include <memory>
#include <thread>

#include "core/strings.h"
#include "net/proc_scan.h"
#include "parsers/pid_stat.h"
#include "probes/kept_task_stats.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "probes/shared_samples.h"

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

// A parent waiting for its vfork child (kernel_clone, do_fork, wait_for_vfork_done) waits for the
// child, not for a driver, whatever the child does.
bool ForkWait(std::string_view wchan) {
  return wchan == "kernel_clone" || wchan == "do_fork" || wchan == "_do_fork" ||
         wchan == "wait_for_vfork_done" || wchan.find("vfork") != std::string_view::npos;
}

// The task's kernel stack (/proc/PID/task/TID/stack, root only) names the module of each frame:
// "os_acquire_mutex+0x1d/0x40 [nvidia]". It takes no mm lock, but it takes the task's
// exec_update_lock, which a task stuck inside execve holds: such tasks (wchan naming exec or
// de_thread) are not read. Unreadable (not root, no CONFIG_STACKTRACE) is no evidence.
bool NvidiaFrameInStack(const RootFs& fs, const std::string& dir, std::string_view wchan) {
  if (wchan.find("exec") != std::string_view::npos ||
      wchan.find("de_thread") != std::string_view::npos) {
    return false;
  }
  auto stack = fs.ReadProc(dir + "/stack", 8192);
  if (!stack.ok()) return false;
  return stack->find("[nvidia") != std::string::npos;
}

bool HasAnyPrefix(std::string_view s, const auto& prefixes) {
  for (std::string_view p : prefixes) {
    if (StartsWith(s, p)) return true;
  }
  return false;
}

// What the kernel shows about how much a task ran. Both samples of one task come from the same
// file (sched, else schedstat), so the counters are comparable.
struct RunCounters {
  std::optional<double> runtime_ms;
  std::optional<uint64_t> switches;
  std::optional<double> exec_start_ms;  // only from sched
};

// nullopt when no counter is comparable; true when any of them moved.
std::optional<bool> RanBetween(const RunCounters& a, const RunCounters& b) {
  bool known = false, ran = false;
  if (a.runtime_ms && b.runtime_ms) {
    known = true;
    ran = ran || *a.runtime_ms != *b.runtime_ms;
  }
  if (a.switches && b.switches) {
    known = true;
    ran = ran || *a.switches != *b.switches;
  }
  if (!known) return std::nullopt;
  return ran;
}

struct Candidate {
  int pid = 0, tid = 0;
  std::string dir;  // "PID/task/TID", or "PID" for the main thread
  std::string comm, thread_comm;
  RunCounters first;  // at the first sample
};

// The longest one scan serves under watch (zombie and task counts stay this fresh).
constexpr auto kMaxRescanEvery = std::chrono::seconds(10);

}  // namespace

// The catalogue's default proc.dstate min_stuck_s (rules/ is above probes/ in the layering, so
// the value is restated here; ProcessProbeTest.DefaultStuckThresholdIsTheCatalogues keeps the
// two equal).
const double kDefaultProcDstateMinStuckS = 10;

namespace {}  // namespace

// Under watch, how long one scan of every task serves (see the header): a task that enters D
// just after a scan is found by the next one, which comes on the first tick after
// min_stuck_s - interval, so by the tick its stuck time (the kernel's, from when it last ran, not
// from our sighting) reaches min_stuck_s: the same tick a scan on every tick would report it.
// At least one tick, at most kMaxRescanEvery.
SteadyClock::duration ProcessRescanEvery(const Settings& s) {
  double min_stuck_s =
      s.thresholds.Find("proc.dstate", "min_stuck_s").value_or(kDefaultProcDstateMinStuckS);
  double interval_s = s.watch_interval_s > 0 ? s.watch_interval_s : 1;
  double every_s = std::max(interval_s, min_stuck_s - interval_s);
  auto every =
      std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(every_s));
  return std::min<SteadyClock::duration>(every, kMaxRescanEvery);
}

namespace {

// What the last task/ walk found under watch: its time and the non-leader threads in D.
struct TaskWalkCarry : ProbeCarry {
  TimePoint walked_at{};
  struct Thread {
    int pid = 0, tid = 0;
    std::string dir, comm;  // "PID/task/TID"; the process's (leader's) comm
  };
  std::vector<Thread> threads_in_d;
  // The last scan (under watch): its time and, when it found no task in D, its facts.
  TimePoint scanned_at{};
  std::optional<ProcessFacts> quiet_facts;
  // When the last scan (complete, not cut short) found tasks in D: its counts and those tasks
  // (leaders and threads, comm = the process's), the only ones read until the next scan.
  std::optional<ProcessFacts> scan_counts;
  std::vector<Thread> tasks_in_d;
  // The scans' kept stat descriptors (shared by the copies of this carry; one run at a time).
  std::shared_ptr<KeptTaskStats> kept_stats;
};

// One task's stat with one read: the line (well under 4 KiB) comes whole from the first read,
// so open, read, close (3 calls; reading on to the end took a 4th) and no allocation; with a kept
// descriptor (`kept`, under watch) one pread.
// `proc_fd`: a descriptor of the procfs root (ProcDir), so the kernel resolves only `dir/stat`
// below it and no path string is built; -1: the path from `fs`.
std::optional<PidStat> ReadStat(const RootFs& fs, const std::string& dir, int proc_fd = -1,
                                KeptTaskStats* kept = nullptr) {
  char buf[4096];
  ssize_t n = -1;
  if (kept != nullptr) {
    if (int fd = kept->Find(dir); fd >= 0) {
      do {
        n = ::pread(fd, buf, sizeof buf, 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) kept->Drop(dir);  // the task exited (ESRCH): its number may be reused
    }
  }
  if (n <= 0) {
    int fd = -1;
    std::array<char, 256> rel{};
    if (proc_fd >= 0 && dir.size() + 6 <= rel.size()) {
      std::copy(dir.begin(), dir.end(), rel.begin());
      std::copy_n("/stat", 6, rel.begin() + static_cast<std::ptrdiff_t>(dir.size()));
      fd = ::openat(proc_fd, rel.data(), O_RDONLY | O_CLOEXEC);
    } else {
      fd = ::open(fs.ProcPath(dir + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) return std::nullopt;  // ENOENT: the task exited; normal
    do {
      n = ::read(fd, buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    if (n <= 0 || kept == nullptr || !kept->Keep(dir, fd)) ::close(fd);
  }
  if (n <= 0) return std::nullopt;
  auto st = ParsePidStat(std::string_view(buf, static_cast<size_t>(n)));
  if (!st.ok()) return std::nullopt;
  return *st;
}

// The procfs root open as a directory for ReadStat's openat; closed with the scan.
class ProcDir {
 public:
  explicit ProcDir(const RootFs& fs)
      : fd_(::open(fs.ProcPath("").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}
  ~ProcDir() {
    if (fd_ >= 0) ::close(fd_);
  }
  ProcDir(const ProcDir&) = delete;
  ProcDir& operator=(const ProcDir&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

RunCounters ReadRunCounters(const RootFs& fs, const std::string& dir) {
  RunCounters c;
  if (auto text = fs.ReadProc(dir + "/sched", 16384); text.ok()) {
    SchedInfo info = ParseSchedInfo(*text);
    c.runtime_ms = info.sum_exec_runtime_ms;
    c.switches = info.nr_switches;
    c.exec_start_ms = info.exec_start_ms;
    if (c.runtime_ms || c.switches) return c;
  }
  if (auto text = fs.ReadProc(dir + "/schedstat", 256); text.ok()) {
    if (auto ss = ParseSchedstat(*text)) {
      c.runtime_ms = static_cast<double>(ss->run_ns) / 1e6;
      c.switches = ss->timeslices;
    }
  }
  return c;
}

// Pins the calling thread to one CPU for its lifetime and restores the previous affinity after.
// ok() is false when the CPU is outside this thread's allowed set (cpuset) or the calls fail.
class CpuPin {
 public:
  explicit CpuPin(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return;
    CPU_ZERO(&saved_);
    if (sched_getaffinity(0, sizeof saved_, &saved_) != 0 || !CPU_ISSET(cpu, &saved_)) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return;
    pinned_ = true;
    ok_ = sched_getcpu() == cpu;
  }
  ~CpuPin() {
    if (pinned_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  CpuPin(const CpuPin&) = delete;
  CpuPin& operator=(const CpuPin&) = delete;
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_;
  bool pinned_ = false, ok_ = false;
};

// "Now" on CPU `cpu`'s task clock, in ms: this thread's own se.exec_start while it runs there
// (set when it was switched in, current within a tick). nullopt when it cannot run there.
std::optional<double> SchedClockOnCpuMs(const RootFs& fs, int cpu) {
  CpuPin pin(cpu);
  if (!pin.ok()) return std::nullopt;
  auto text = fs.ReadProc("thread-self/sched", 16384);
  if (!text.ok()) return std::nullopt;
  return ParseSchedExecStartMs(*text);
}

struct FirstScan {
  ProcessFacts facts;
  std::vector<Candidate> in_d;
};

constexpr int kDeadlineCheckEvery = 128;  // stat reads between two looks at the clock

// The processes to scan: /proc's entry names (each leader's stat read here), or under `check`
// the shared walk's processes with their stat lines already read (SharedSamples::ProcessesBefore:
// the sockets and suspicious probes' walk at the window's start, so /proc is walked once for the
// three probes).
struct ProcessList {
  const std::vector<std::string>* names = nullptr;
  const ProcessScan* leaders = nullptr;
};

// walk_threads false: task/ is not walked; the threads of `recheck` (the last walk's threads in
// D) are read instead. `walked` collects the non-leader threads found in D by a walk.
// `kept`: under watch, the stat descriptors kept from scan to scan (null: none kept).
FirstScan ScanAll(const RootFs& fs, const ProcessList& list, TimePoint stop_at, bool walk_threads,
                  const std::vector<TaskWalkCarry::Thread>& recheck,
                  std::vector<TaskWalkCarry::Thread>* walked, KeptTaskStats* kept) {
  FirstScan scan;
  if (list.leaders != nullptr && list.leaders->truncated) scan.facts.truncated = true;
  ProcDir proc(fs);
  if (kept != nullptr) kept->StartScan(proc.fd());
  int reads = 0;
  // True when the scan must stop here: the task cap, or (every N reads) the deadline.
  auto must_stop = [&] {
    if (scan.facts.tasks_scanned >= kMaxTasksScanned) return true;
    return ++reads % kDeadlineCheckEvery == 0 && SteadyClock::now() >= stop_at;
  };
  const size_t count = list.leaders ? list.leaders->processes.size() : list.names->size();
  std::string name;
  std::optional<PidStat> read;
  for (size_t i = 0; i < count; ++i) {
    std::optional<int64_t> pid;
    const PidStat* leader = nullptr;
    if (list.leaders != nullptr) {
      const ScannedProcess& p = list.leaders->processes[i];
      if (!p.stat) continue;
      pid = p.pid;
      name = std::to_string(p.pid);
      leader = &*p.stat;
    } else {
      name = (*list.names)[i];
      pid = ParseInt64(name);
    }
    if (!pid || *pid <= 0) continue;
    if (must_stop()) {
      scan.facts.truncated = true;
      break;
    }
    if (leader == nullptr) {
      read = ReadStat(fs, name, proc.fd(), kept);
      if (!read) continue;
      leader = &*read;
    }
    ++scan.facts.total;
    ++scan.facts.tasks_scanned;
    if (leader->state == 'Z') ++scan.facts.zombie_count;
    auto add_if_d = [&](const PidStat& st, int tid, std::string dir) {
      if (st.state != 'D') return;
      Candidate c{static_cast<int>(*pid), tid, std::move(dir), leader->comm, "", {}};
      if (st.comm != leader->comm) c.thread_comm = st.comm;
      c.first = ReadRunCounters(fs, c.dir);
      scan.in_d.push_back(std::move(c));
    };
    // A single-threaded process has one task, the leader, whose stat was just read: no
    // task/ walk (most processes; the walk was most of this probe's cost). Any other count,
    // or none, walks task/ so a thread in D inside a multi-threaded process is still seen.
    if (leader->num_threads == 1 || !walk_threads) {
      add_if_d(*leader, static_cast<int>(*pid), name);
      continue;
    }
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
      if (must_stop()) {
        scan.facts.truncated = true;
        break;
      }
      std::string dir = name + "/task/" + tid_name;
      auto st = ReadStat(fs, dir, proc.fd(), kept);
      if (!st) continue;
      ++scan.facts.tasks_scanned;
      if (st->state == 'D' && walked != nullptr) {
        walked->push_back({static_cast<int>(*pid), static_cast<int>(*tid), dir, leader->comm});
      }
      add_if_d(*st, static_cast<int>(*tid), dir);
    }
    if (scan.facts.truncated) break;
  }
  if (!walk_threads) {
    for (const TaskWalkCarry::Thread& t : recheck) {
      if (must_stop()) {
        scan.facts.truncated = true;
        break;
      }
      auto st = ReadStat(fs, t.dir, proc.fd(), kept);
      if (!st) continue;  // exited
      ++scan.facts.tasks_scanned;
      if (st->state != 'D') continue;
      Candidate c{t.pid, t.tid, t.dir, t.comm, "", {}};
      if (st->comm != t.comm) c.thread_comm = st->comm;
      c.first = ReadRunCounters(fs, c.dir);
      scan.in_d.push_back(std::move(c));
    }
  }
  // A complete walk read every task: the descriptors it did not read belong to exited tasks.
  if (kept != nullptr && walk_threads && !scan.facts.truncated) kept->CloseUnread();
  return scan;
}

// Fills stuck_s of the tasks that did not run in the window, one CPU at a time (one migration
// of this thread per CPU). exec_ms[i] is the task's exec_start from its second sample.
void EstimateStuck(const RootFs& fs, std::vector<StuckProcess>& tasks,
                   const std::vector<std::optional<double>>& exec_ms) {
  std::map<int, std::vector<size_t>> by_cpu;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].ran_in_window == false && tasks[i].cpu && exec_ms[i]) {
      by_cpu[*tasks[i].cpu].push_back(i);
    }
  }
  if (by_cpu.empty()) return;  // nothing to estimate: no read
  std::optional<double> uptime_s;
  if (auto text = fs.ReadProc("uptime", 256); text.ok()) uptime_s = ParseUptimeS(*text);
  for (const auto& [cpu, indices] : by_cpu) {
    std::optional<double> now_ms = SchedClockOnCpuMs(fs, cpu);
    if (!now_ms) continue;
    for (size_t i : indices) {
      double s = (*now_ms - *exec_ms[i]) / 1000.0;
      if (s < 0 || (uptime_s && s > *uptime_s)) continue;  // not sane: no estimate
      tasks[i].stuck_s = s;
    }
  }
}

bool Worse(const StuckProcess& a, const StuckProcess& b) {
  bool ar = a.ran_in_window.value_or(false), br = b.ran_in_window.value_or(false);
  if (ar != br) return br;  // tasks that ran (not stuck) last
  bool an = a.nvidia_tool || a.nvidia_wait, bn = b.nvidia_tool || b.nvidia_wait;
  if (an != bn) return an;
  double as = a.stuck_s.value_or(-1), bs = b.stuck_s.value_or(-1);
  if (as != bs) return as > bs;
  return a.tid < b.tid;
}

// Time kept free before the check's deadline for the second sample and the patch.
constexpr auto kDeadlineReserve = std::chrono::milliseconds(100);

// The tasks the last scan found in D, read again; the counts are that scan's.
FirstScan RecheckTasksInD(const RootFs& fs, const TaskWalkCarry& last) {
  FirstScan scan;
  scan.facts = *last.scan_counts;
  for (const TaskWalkCarry::Thread& t : last.tasks_in_d) {
    auto st = ReadStat(fs, t.dir);
    if (!st || st->state != 'D') continue;  // exited or out of D
    Candidate c{t.pid, t.tid, t.dir, t.comm, "", {}};
    if (st->comm != t.comm) c.thread_comm = st->comm;
    c.first = ReadRunCounters(fs, c.dir);
    scan.in_d.push_back(std::move(c));
  }
  return scan;
}

// The second sample of the tasks in D, the facts and the carry. `scanned`: `scan` read every
// process (a scan), not only the last scan's tasks in D.
ProbeOutput Finish(const ProbeContext& ctx, TimePoint t0, FirstScan scan,
                   const TaskWalkCarry& carry_in, bool scanned) {
  const RootFs& fs = ctx.fs();
  auto carry = std::make_shared<TaskWalkCarry>(carry_in);
  TimePoint window_end = t0 + ctx.sample_window();
  if (scanned) {
    carry->scanned_at = t0;
    carry->scan_counts.reset();
    carry->tasks_in_d.clear();
    if (!scan.facts.truncated && !scan.in_d.empty()) {
      carry->scan_counts = scan.facts;
      for (const Candidate& c : scan.in_d)
        carry->tasks_in_d.push_back({c.pid, c.tid, c.dir, c.comm});
    }
  }
  ProcessFacts facts = std::move(scan.facts);
  // Healthy hosts have no task in D: they skip the wait.
  if (!scan.in_d.empty())
    std::this_thread::sleep_until(std::min(window_end, ctx.deadline - kDeadlineReserve));
  facts.window_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();

  std::vector<StuckProcess> stuck;
  std::vector<std::optional<double>> exec_ms;
  for (size_t i = 0; i < scan.in_d.size(); ++i) {
    if (i % kDeadlineCheckEvery == kDeadlineCheckEvery - 1 &&
        SteadyClock::now() >= ctx.deadline - kDeadlineReserve / 2) {
      facts.truncated = true;
      break;
    }
    const Candidate& c = scan.in_d[i];
    auto st = ReadStat(fs, c.dir);
    if (!st || st->state != 'D') continue;
    StuckProcess p;
    p.pid = c.pid;
    p.tid = c.tid;
    p.comm = c.comm;
    p.thread_comm = c.thread_comm;
    p.cpu = st->processor;
    if (auto w = fs.ReadProc(c.dir + "/wchan", 256); w.ok()) p.wchan = ParseWchan(*w);
    RunCounters second = ReadRunCounters(fs, c.dir);
    p.ran_in_window = RanBetween(c.first, second);
    p.nvidia_tool = HasAnyPrefix(p.comm, kNvidiaCommPrefixes) ||
                    HasAnyPrefix(p.thread_comm, kNvidiaCommPrefixes);
    p.nvidia_wait = HasAnyPrefix(p.wchan, kNvidiaWchanPrefixes) ||
                    (!ForkWait(p.wchan) && NvidiaFrameInStack(fs, c.dir, p.wchan));
    stuck.push_back(std::move(p));
    exec_ms.push_back(second.exec_start_ms);
  }
  EstimateStuck(fs, stuck, exec_ms);
  facts.dstate_count = static_cast<int>(stuck.size());
  std::sort(stuck.begin(), stuck.end(), Worse);
  if (stuck.size() > kMaxStuckListed) stuck.resize(kMaxStuckListed);
  facts.dstate = std::move(stuck);
  // Whether "inside the NVIDIA driver" can be said of an NVIDIA tool whose wchan is no driver
  // function: only when the module is loaded at all.
  facts.nvidia_module_loaded = RootFs::Exists(ctx.fs().SysPath("module/nvidia"));
  carry->quiet_facts.reset();
  if (facts.dstate_count == 0 && scan.in_d.empty() && !facts.truncated) carry->quiet_facts = facts;
  ProbeOutput out = ProbeOk([facts = std::move(facts)](Snapshot& s) { s.host.processes = facts; });
  if (ctx.continuous) out.next = std::move(carry);
  return out;
}

}  // namespace

ProbeOutput RunProcessProbe(const ProbeContext& ctx) {
  const RootFs& fs = ctx.fs();
  const auto* last_walk = dynamic_cast<const TaskWalkCarry*>(ctx.previous.get());
  TimePoint t0 = SteadyClock::now();
  const SteadyClock::duration rescan_every = ProcessRescanEvery(*ctx.settings);
  if (ctx.continuous && last_walk != nullptr && last_walk->quiet_facts &&
      t0 - last_walk->scanned_at < rescan_every - rescan_every / 10) {
    ProbeOutput out =
        ProbeOk([facts = *last_walk->quiet_facts](Snapshot& s) { s.host.processes = facts; });
    out.next = ctx.previous;  // unchanged: the same carry serves the next run
    return out;
  }
  // Under watch, within ProcessRescanEvery of a scan that found tasks in D: only those tasks are
  // read again (see the header).
  const bool recheck_only = ctx.continuous && last_walk != nullptr && last_walk->scan_counts &&
                            t0 - last_walk->scanned_at < rescan_every - rescan_every / 10;
  if (recheck_only) return Finish(ctx, t0, RecheckTasksInD(fs, *last_walk), *last_walk, false);
  // `check`: the walk shared with the sockets and suspicious probes, when it read something and
  // was not cut at its process cap (below this probe's task cap); else this probe's own walk.
  ProcessList list;
  if (ctx.shared != nullptr && !ctx.continuous) {
    const ProcessScan& shared = ctx.shared->ProcessesBefore();
    if (!shared.processes.empty() && shared.processes.size() < ProcScanOptions{}.max_processes) {
      list.leaders = &shared;
    }
  }
  Result<std::vector<std::string>> names = std::vector<std::string>{};
  if (list.leaders == nullptr) {
    names = RootFs::ListDir(fs.ProcPath(""));
    if (!names.ok()) return ProbeFailed("process list: " + names.status().ToString());
    list.names = &*names;
  }

  // The scan leaves room for the window and the second sample before the deadline.
  // Under watch: walk task/ only every ProcessRescanEvery (see the header).
  const bool walk_threads = !ctx.continuous || last_walk == nullptr ||
                            t0 - last_walk->walked_at >= rescan_every - rescan_every / 10;
  static const std::vector<TaskWalkCarry::Thread> kNone;
  auto carry = std::make_shared<TaskWalkCarry>();
  if (walk_threads) {
    carry->walked_at = t0;
  } else {
    *carry = *last_walk;
  }
  // Under watch the stat descriptors stay open from scan to scan (KeptTaskStats).
  if (ctx.continuous) {
    carry->kept_stats = last_walk != nullptr && last_walk->kept_stats != nullptr
                            ? last_walk->kept_stats
                            : std::make_shared<KeptTaskStats>();
  }
  FirstScan scan = ScanAll(fs, list, ctx.deadline - ctx.sample_window() - kDeadlineReserve,
                           walk_threads, last_walk ? last_walk->threads_in_d : kNone,
                           walk_threads ? &carry->threads_in_d : nullptr, carry->kept_stats.get());
  return Finish(ctx, t0, std::move(scan), *carry, true);
}

}  // namespace gpudoctor
