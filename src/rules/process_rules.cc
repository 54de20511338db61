// Process rules: proc.dstate (tasks stuck in uninterruptible sleep) and proc.zombies.
#include <algorithm>
#include <string>

#include "core/strings.h"
#include "rules/host_rules.h"

namespace gpudoctor {
namespace {

constexpr size_t kTasksInEvidence = 3;

bool NetworkFsWait(const std::string& wchan) {
  return StartsWith(wchan, "nfs") || StartsWith(wchan, "rpc_") || StartsWith(wchan, "__rpc_") ||
         StartsWith(wchan, "cifs") || StartsWith(wchan, "smb") || StartsWith(wchan, "fuse_") ||
         StartsWith(wchan, "request_wait_answer");
}

std::string Describe(const StuckProcess& p) {
  std::string s = p.comm + " (pid " + std::to_string(p.pid);
  if (p.tid != p.pid) s += ", thread " + std::to_string(p.tid);
  if (!p.thread_comm.empty()) s += " '" + p.thread_comm + "'";
  s += ")";
  if (!p.wchan.empty()) s += " in " + p.wchan;
  if (p.stuck_s) s += " for " + FormatDouble(*p.stuck_s, 0) + " s";
  if (!p.stuck_s && p.ran_in_window == false) s += " (did not run during the window)";
  return s;
}

// A task counts when the evidence says it has not run for min_stuck_s: it did not run at all
// during the window (a task that ran is cycling through short D sleeps: I/O), and the longer of
// its measured time off-CPU and the window reaches min_stuck_s. A task that did not run but has
// no measurement (its CPU's clock was not readable, e.g. outside our cpuset) and a window
// shorter than min_stuck_s does NOT count, NVIDIA or not: a driver call can legitimately wait a
// few seconds on the RM lock (another nvidia-smi initialising GPUs), and calling that critical
// would be a false fault; with --sample-ms >= min_stuck_s the window itself is the evidence.
// Unknown (no run counters readable): no evidence either way, not counted.
bool Qualifies(const StuckProcess& p, std::optional<double> window_s, double min_stuck_s) {
  if (p.ran_in_window != false) return false;
  double off_cpu_s = std::max(p.stuck_s.value_or(0), window_s.value_or(0));
  return off_cpu_s >= min_stuck_s;
}

// Where a task waits, in words, for advice about a task not known to be in the NVIDIA driver.
std::string WhereItWaits(const StuckProcess& p) {
  if (p.wchan.empty()) return "an unknown kernel function (wchan not readable)";
  if (NetworkFsWait(p.wchan)) return p.wchan + " (a network filesystem wait)";
  return "kernel function " + p.wchan;
}

// Evidence that the counts cover only part of the host's tasks.
void AddTruncation(const ProcessFacts& procs, Finding& f) {
  if (!procs.truncated) return;
  f.AddBool("scan_truncated", true).Add("tasks_scanned", procs.tasks_scanned);
}

void DstateRule(const ProcessFacts& procs, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "proc.dstate";
  double min_stuck_s = t.Get(id, "min_stuck_s");
  std::vector<const StuckProcess*> stuck;
  for (const StuckProcess& p : procs.dstate) {
    if (Qualifies(p, procs.window_s, min_stuck_s)) stuck.push_back(&p);
  }
  if (stuck.empty()) return;
  int nvidia = 0, network_fs = 0;
  const StuckProcess* first_nvidia = nullptr;
  const StuckProcess* first_network = nullptr;
  double max_stuck_s = 0;
  // "Inside the NVIDIA driver" needs evidence: a driver function as wchan or an NVIDIA frame on
  // the task's kernel stack (nvidia_wait). A tool's name does not: an nvidia-smi parent waiting
  // in kernel_clone for its child is waiting for the child.
  auto in_driver = [](const StuckProcess& p) { return p.nvidia_wait; };
  const StuckProcess* first_tool_elsewhere = nullptr;
  for (const StuckProcess* p : stuck) {
    if (in_driver(*p)) {
      ++nvidia;
      if (!first_nvidia) first_nvidia = p;
    } else if (p->nvidia_tool && !first_tool_elsewhere) {
      first_tool_elsewhere = p;
    }
    if (NetworkFsWait(p->wchan)) {
      ++network_fs;
      if (!first_network) first_network = p;
    }
    max_stuck_s = std::max(max_stuck_s, p->stuck_s.value_or(0));
  }
  int count = static_cast<int>(stuck.size());
  bool crit = nvidia > 0 || count >= t.Get(id, "crit_count");
  std::string summary = std::to_string(count) + (count == 1 ? " task" : " tasks") +
                        " stuck in uninterruptible sleep (D)";
  if (first_nvidia)
    summary += ", including NVIDIA " + Describe(*first_nvidia);
  else
    summary += ": " + Describe(*stuck.front());
  Finding f = MakeFinding(id, crit ? Severity::kCrit : Severity::kWarn, std::move(summary));
  // Stuck inside the driver: only a reboot frees it. Stuck elsewhere (storage, NFS): watch.
  if (nvidia > 0) f.action = Action::kDrainReset;
  f.Add("stuck_count", count).Add("nvidia_stuck_count", nvidia);
  f.Add("network_fs_stuck_count", network_fs);
  f.Add("dstate_both_samples_count", procs.dstate_count);
  if (max_stuck_s > 0) f.Add("max_stuck_s", max_stuck_s);
  if (procs.window_s) f.Add("window_s", *procs.window_s);
  AddTruncation(procs, f);
  for (size_t i = 0; i < stuck.size() && i < kTasksInEvidence; ++i) {
    std::string k = "task" + std::to_string(i + 1) + "_";
    const StuckProcess& p = *stuck[i];
    f.Add(k + "pid", p.pid).Add(k + "tid", p.tid).Add(k + "comm", p.comm);
    f.Add(k + "wchan", p.wchan.empty() ? std::string("unknown") : p.wchan);
    if (p.stuck_s) f.Add(k + "stuck_s", *p.stuck_s);
    f.AddBool(k + "nvidia", in_driver(p));
  }
  // Specific advice first, the catalogue's general steps after.
  std::vector<std::string> specific;
  if (first_nvidia) {
    specific.push_back("NVIDIA " + Describe(*first_nvidia) +
                       " is stuck inside the NVIDIA driver: check the kernel log for Xid "
                       "119/120/79 (`dmesg | grep -i xid`), drain the node and reboot it.");
  }
  if (first_tool_elsewhere) {
    specific.push_back(
        "NVIDIA tool " + Describe(*first_tool_elsewhere) + " waits in " +
        WhereItWaits(*first_tool_elsewhere) + ", not in an NVIDIA driver function" +
        (procs.nvidia_module_loaded == false ? " (the nvidia module is not loaded)" : "") +
        ": read its kernel stack (`cat /proc/" + std::to_string(first_tool_elsewhere->tid) +
        "/stack` as root) to see what it waits for before blaming the GPU.");
  }
  if (first_network) {
    specific.push_back(std::to_string(network_fs) + " task(s) wait in " + first_network->wchan +
                       " (network filesystem): check the NFS/storage server and `mount -t "
                       "nfs,nfs4,cifs`; the GPU driver is probably not at fault for these.");
  }
  f.next_steps.insert(f.next_steps.begin(), specific.begin(), specific.end());
  out.push_back(std::move(f));
}

void ZombieRule(const ProcessFacts& procs, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "proc.zombies";
  if (procs.zombie_count < t.Get(id, "warn_count")) return;
  Finding f = MakeFinding(
      id, Severity::kWarn,
      std::to_string(procs.zombie_count) + " zombie processes of " + std::to_string(procs.total));
  f.Add("zombie_count", procs.zombie_count).Add("process_count", procs.total);
  AddTruncation(procs, f);
  out.push_back(std::move(f));
}

}  // namespace

void ProcessRules(const ProcessFacts& procs, const Thresholds& t, std::vector<Finding>& out) {
  DstateRule(procs, t, out);
  ZombieRule(procs, t, out);
}

}  // namespace gpudoctor
