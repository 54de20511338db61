#include "watch/cpu_placement.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "core/root_fs.h"
#include "core/strings.h"

namespace gpudoctor {
namespace {

// This process's thread ids, from the kernel's own procfs (RootFs(), not --path.procfs: see the
// header).
std::vector<pid_t> OwnThreads() {
  std::vector<pid_t> tids;
  auto names = RootFs::ListDir(RootFs().ProcPath("self/task"));
  if (!names.ok()) return tids;
  for (const std::string& name : *names) {
    if (auto tid = ParseInt64(name); tid && *tid > 0) tids.push_back(static_cast<pid_t>(*tid));
  }
  return tids;
}

}  // namespace

cpu_set_t CpuPlacement::AllowedCpus() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) CPU_ZERO(&set);
  return set;
}

int CpuPlacement::CurrentCpuOfThisThread() { return ::sched_getcpu(); }

bool CpuPlacement::ApplyToAllThreads(const cpu_set_t& set) {
  // A thread started meanwhile by a thread not changed yet inherits the old CPUs: go round again
  // until a pass changes nothing new (three passes at most; a thread missed still runs, only
  // where it ran before).
  bool all = true;
  std::vector<pid_t> done;
  for (int pass = 0; pass < 3; ++pass) {
    bool changed = false;
    for (pid_t tid : OwnThreads()) {
      if (std::find(done.begin(), done.end(), tid) != done.end()) continue;
      done.push_back(tid);
      changed = true;
      // A thread that ended meanwhile (ESRCH) is no failure.
      if (::sched_setaffinity(tid, sizeof set, &set) != 0 && errno != ESRCH) all = false;
    }
    if (!changed) break;
  }
  return all;
}

CpuPlacement::CpuPlacement(bool enabled, const cpu_set_t& allowed, CpuPlacementPolicy policy,
                           Apply apply, CurrentCpu current)
    : enabled_(enabled),
      can_pin_(CPU_COUNT(&allowed) >= 2),
      allowed_(allowed),
      policy_(policy),
      apply_(std::move(apply)),
      current_(std::move(current)) {}

bool CpuPlacement::Pin() {
  int cpu = current_();
  // The CPU we run on, unless it is not one we may use (then the lowest we may).
  if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed_)) {
    cpu = -1;
    for (int c = 0; c < CPU_SETSIZE && cpu < 0; ++c) {
      if (CPU_ISSET(c, &allowed_)) cpu = c;
    }
  }
  if (cpu < 0) return false;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (!apply_(one)) {
    apply_(allowed_);  // all or nothing: no thread left alone on one CPU
    return false;
  }
  pinned_cpu_ = cpu;
  return true;
}

void CpuPlacement::Widen() {
  apply_(allowed_);
  pinned_cpu_ = -1;
}

void CpuPlacement::SetEnabled(bool enabled) {
  if (enabled == enabled_) return;
  enabled_ = enabled;
  if (!enabled && pinned_cpu_ >= 0) Widen();
  started_ = false;
  late_in_a_row_ = 0;
  on_time_since_widen_ = 0;
}

std::string CpuPlacement::OnTick(double late_s) {
  if (!enabled_ || !can_pin_) return "";
  if (!started_) {
    started_ = true;
    if (!Pin()) return "threads may run on any allowed CPU (could not keep them on one)";
    return "threads kept on CPU " + std::to_string(pinned_cpu_) +
           " while ticks run on time ([watch] one_cpu)";
  }
  const bool late = late_s >= policy_.late_s;
  if (pinned_cpu_ >= 0) {
    late_in_a_row_ = late ? late_in_a_row_ + 1 : 0;
    if (late_in_a_row_ < policy_.late_ticks_to_widen) return "";
    late_in_a_row_ = 0;
    on_time_since_widen_ = 0;
    int was = pinned_cpu_;
    Widen();
    return "ticks started late on CPU " + std::to_string(was) + " (" +
           std::to_string(static_cast<int>(late_s * 1000)) + " ms, " +
           std::to_string(policy_.late_ticks_to_widen) +
           " ticks in a row): threads may run on any allowed CPU again";
  }
  on_time_since_widen_ = late ? 0 : on_time_since_widen_ + 1;
  if (on_time_since_widen_ < policy_.on_time_ticks_to_pin) return "";
  on_time_since_widen_ = 0;
  if (!Pin()) return "";
  return "threads kept on CPU " + std::to_string(pinned_cpu_) + " again after " +
         std::to_string(policy_.on_time_ticks_to_pin) + " ticks on time";
}

}  // namespace gpudoctor
