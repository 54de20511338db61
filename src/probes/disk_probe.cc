// Disk probe. Source: /proc/1/mountinfo (the host's mount namespace when /proc is the host's),
// falling back to /proc/self/mountinfo, then /proc/mounts; statvfs(2) of each selected mount
// through RootFs::StatVfs. Units: bytes and inode counts. Failure modes: no mount table → failed; a
// statvfs error is recorded on that mount; a statvfs that hangs (stale NFS, dead FUSE daemon) is
// abandoned at a per-check deadline (Settings::disk_statvfs_timeout_ms) and recorded as timed out.
// Which mounts count and how bind mounts collapse: parsers/mounts.h (MountIsChecked).
// [node] required_mounts are looked up in the same (unfiltered) table: host.mount.missing.
#include "probes/disk_probe.h"

#include <algorithm>

#include "core/job_lane.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

// More mounts than this after filtering is unusual; bounding keeps threads and time bounded.
constexpr size_t kMaxMountsChecked = 256;

MountFacts FactsOf(const MountEntry& m) {
  MountFacts f;
  f.device = m.device;
  f.mount_point = m.mount_point;
  f.fs_type = m.fs_type;
  f.read_only = m.read_only;
  return f;
}

}  // namespace

std::vector<MountFacts> StatMounts(const std::vector<MountEntry>& mounts, StatVfsFn stat,
                                   TimePoint deadline) {
  // One worker in turn (a JobLane): a local statvfs answers in microseconds, and a worker each
  // cost more CPU than the calls. One that stalls for kStatStall has the mounts behind it moved
  // to fresh workers, so a hung mount still blocks no other.
  constexpr auto kStatStall = std::chrono::milliseconds(50);
  std::vector<std::shared_ptr<PendingResult<Result<FsUsage>>>> pending;
  pending.reserve(mounts.size());
  std::vector<std::function<void()>> jobs;
  jobs.reserve(mounts.size());
  for (const MountEntry& m : mounts) {
    auto into = std::make_shared<PendingResult<Result<FsUsage>>>();
    pending.push_back(into);
    jobs.push_back([stat, into, point = m.mount_point] { into->Set(stat(point)); });
  }
  JobLane lane(std::move(jobs));
  if (!mounts.empty()) lane.Run(deadline, kStatStall);
  std::vector<MountFacts> out;
  out.reserve(mounts.size());
  for (size_t i = 0; i < mounts.size(); ++i) {
    if (lane.workers() == 0) pending[i] = nullptr;
    MountFacts f = FactsOf(mounts[i]);
    if (pending[i] == nullptr) {
      f.error = "could not start a worker thread";
    } else if (!pending[i]->WaitUntil(deadline)) {
      if (lane.state(i) != JobLane::JobState::kWithdrawn) CountAbandonedWorker();
      f.timed_out = true;
      f.error = "statvfs did not answer in time";
    } else if (Result<FsUsage> u = pending[i]->Take(); !u.ok()) {
      f.error = u.status().ToString();
    } else {
      f.total_bytes = u->total_bytes;
      f.available_bytes = u->available_bytes;
      f.free_bytes = u->free_bytes;
      if (u->inodes_total > 0) {
        f.inodes_total = u->inodes_total;
        f.inodes_free = std::min(u->inodes_free, u->inodes_total);
      }
      f.read_only = f.read_only || u->read_only;
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<RequiredMountFacts> FindRequiredMounts(const std::vector<MountEntry>& all,
                                                   const std::vector<std::string>& required) {
  std::vector<RequiredMountFacts> out;
  out.reserve(required.size());
  for (const std::string& point : required) {
    RequiredMountFacts r;
    r.mount_point = point;
    for (const MountEntry& m : all) {
      if (m.mount_point != point) continue;
      r.mounted = true;
      r.fs_type = m.fs_type;
      r.device = m.device;
    }
    out.push_back(std::move(r));
  }
  return out;
}

ProbeOutput RunDiskProbe(const ProbeContext& ctx) {
  // PID 1's table is the host's when /proc is the host's (a container with the host's /proc
  // mounted reads its own namespace through "self"); as node_exporter does: 1/mountinfo, then
  // self/mountinfo, then the older mounts format.
  static constexpr struct {
    const char* rel;
    bool mountinfo;
  } kTables[] = {{"1/mountinfo", true}, {"self/mountinfo", true}, {"mounts", false}};
  Result<std::string> text = std::string();
  std::string table;
  bool mountinfo = false;
  for (const auto& t : kTables) {
    text = ctx.fs().ReadProc(t.rel);
    table = t.rel;
    mountinfo = t.mountinfo;
    if (text.ok()) break;
  }
  if (!text.ok()) return ProbeFailed("mount table: " + text.status().ToString());
  auto all = mountinfo ? ParseMountInfo(*text) : ParseMounts(*text);
  if (!all.ok()) return ProbeFailed(ctx.fs().ProcPath(table) + ": " + all.status().message());
  std::vector<MountEntry> selected = SelectMountsToCheck(*all);
  if (selected.size() > kMaxMountsChecked) selected.resize(kMaxMountsChecked);

  TimePoint deadline =
      std::min(ctx.deadline, SteadyClock::now() +
                                 std::chrono::milliseconds(ctx.settings->disk_statvfs_timeout_ms));
  std::shared_ptr<const Settings> settings = ctx.settings;  // outlives abandoned workers
  auto mounts = StatMounts(
      selected, [settings](const std::string& point) { return settings->fs.StatVfs(point); },
      deadline);
  std::optional<std::vector<RequiredMountFacts>> required;
  if (!settings->required_mounts.empty()) {
    required = FindRequiredMounts(*all, settings->required_mounts);
  }
  return ProbeOk([mounts = std::move(mounts), required = std::move(required)](Snapshot& s) {
    s.host.mounts = mounts;
    s.host.required_mounts = required;
  });
}

}  // namespace gpudoctor
