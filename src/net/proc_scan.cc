#include "net/proc_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <mutex>
#include <utility>

#include "core/strings.h"

namespace gpudoctor {

std::optional<uint64_t> ParseSocketLink(std::string_view link) {
  if (!StartsWith(link, "socket:[") || !EndsWith(link, "]")) return std::nullopt;
  return ParseUint64(link.substr(8, link.size() - 9));
}

bool IsNvidiaGpuDevice(std::string_view link) {
  constexpr std::string_view kPrefix = "/dev/nvidia";
  if (!StartsWith(link, kPrefix) || link.size() == kPrefix.size()) return false;
  for (char c : link.substr(kPrefix.size())) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::map<uint32_t, std::string> ParsePasswd(std::string_view text) {
  std::map<uint32_t, std::string> out;
  for (std::string_view line : SplitLines(text)) {
    auto f = Split(line, ":", /*skip_empty=*/false);
    if (f.size() < 3 || f[0].empty()) continue;
    auto uid = ParseUint64(f[2]);
    if (!uid || *uid > 0xffffffffu) continue;
    out.emplace(static_cast<uint32_t>(*uid), Sanitize(f[0], 64));
  }
  return out;
}

namespace {

// Each process is read through descriptors of its own directory (openat, readlinkat, fstat)
// opened under the root-prefixed procfs: the kernel resolves /proc/PID once per process instead
// of once per file and per fd link.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// /proc/PID/stat (`name` under `dir`) into *out with one read: the line (well under 4 KiB) comes
// whole from the first read, so open, read, close and no read of the end. False on error.
bool ReadStatLine(int dir, const char* name, std::string* out) {
  Fd fd(::openat(dir, name, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  char buf[4096];
  ssize_t n;
  do {
    n = ::read(fd.get(), buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

// The target of the link `name` under `dir` into *out; false on error.
bool ReadLinkAt(int dir, const char* name, std::string* out) {
  char buf[4096];
  ssize_t n = ::readlinkat(dir, name, buf, sizeof buf);
  if (n < 0) return false;
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

}  // namespace

ProcessScan ScanProcesses(const RootFs& fs, const ProcScanOptions& opts) {
  ProcessScan scan;
  scan.started_at = SteadyClock::now();
  auto entries = RootFs::ListDir(fs.procfs());
  if (!entries.ok()) return scan;
  // Sized once (/proc's entries are the processes and ~60 other names): a vector grown by
  // doubling had the old and the new array alive at once, on a host with thousands of processes
  // a transient of twice the scan.
  scan.processes.reserve(std::min(entries->size(), opts.max_processes));
  Fd proc(::open(fs.procfs().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (proc.get() < 0) return scan;
  auto past_deadline = [&opts] { return opts.deadline && SteadyClock::now() >= *opts.deadline; };
  size_t visited = 0;
  std::string text, link;
  for (const auto& name : *entries) {
    if (scan.processes.size() >= opts.max_processes) break;
    if (visited++ % kScanDeadlineStride == 0 && past_deadline()) {
      scan.truncated = true;
      break;
    }
    auto pid = ParseInt64(name);
    if (!pid || *pid <= 0 || *pid > 0x3fffffff) continue;
    // A walk that reads nothing but stat, and any walk for a known kernel thread, opens PID/stat
    // straight from /proc (open, read, close); the others open the process's directory once for
    // stat, uid, fds and exe.
    const bool known_kernel_thread =
        opts.kernel_threads != nullptr &&
        std::binary_search(opts.kernel_threads->begin(), opts.kernel_threads->end(),
                           static_cast<int>(*pid));
    if (known_kernel_thread && opts.skip_kernel_threads) {
      ++scan.kernel_threads_skipped;
      continue;
    }
    const bool dir_wanted = opts.read_fds || opts.read_exe || opts.read_uid;
    Fd dir(-1);
    auto open_dir = [&] {
      dir.reset(::openat(proc.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      return dir.get() >= 0;
    };
    if (dir_wanted && !known_kernel_thread && !open_dir()) continue;  // exited meanwhile
    const bool through_dir = dir.get() >= 0;
    if (!ReadStatLine(through_dir ? dir.get() : proc.get(),
                      through_dir ? "stat" : (name + "/stat").c_str(), &text)) {
      continue;  // exited meanwhile
    }
    auto st = ParsePidStat(text);
    if (!st.ok()) continue;
    const bool kernel_thread = st->IsKernelThread();
    if (known_kernel_thread && kernel_thread) ++scan.kernel_threads_hinted;
    // A pid that was a kernel thread's and is now a process's is read in full.
    if (dir_wanted && !through_dir && !kernel_thread && !open_dir()) continue;
    ScannedProcess p;
    p.pid = static_cast<int>(*pid);
    p.state = st->state;
    p.cpu_ticks = st->utime_ticks.value_or(0) + st->stime_ticks.value_or(0);
    p.start_ticks = st->start_ticks;
    // stat's comm is the comm file's text (both print the task's name, kernel threads' and
    // workqueue workers' included), so the comm file is not read as well.
    p.comm = Sanitize(Trim(st->comm), 64);
    p.kernel_thread = kernel_thread;
    struct stat sb {};
    if (opts.read_uid && kernel_thread) {
      p.uid = 0;  // kernel threads run as root; no stat(2) of their directory
    } else if (opts.read_uid && ::fstat(dir.get(), &sb) == 0) {
      p.uid = sb.st_uid;
    }
    if (opts.keep_stat) p.stat = std::make_shared<const PidStat>(std::move(*st));
    if (p.state == 'D') {
      ++scan.skipped_dstate;
      scan.processes.push_back(std::move(p));
      continue;
    }
    if (kernel_thread) {
      // A kernel thread has no open files and no exe link (its fd dir lists empty, readlink of
      // exe fails): both are known without opening them. On a many-core node most tasks are
      // kernel threads (per-CPU workers).
      p.fds_read = opts.read_fds;
      scan.processes.push_back(std::move(p));
      continue;
    }
    // The exe link first: the kernel checks the same ptrace access for it as for every fd link
    // (proc_fd_access_allowed), so a refused exe means refused fd links, and the fd directory,
    // which root may still list, is not listed for nothing (a process with hundreds of fds costs
    // a dentry for each: this VM's protected pid 1, 298 fds, was ~3% of a check).
    bool links_refused = false;
    if (opts.read_exe) {
      if (ReadLinkAt(dir.get(), "exe", &link)) {
        p.exe = Sanitize(link, 512);
      } else {
        links_refused = errno == EACCES || errno == EPERM;
      }
    }
    if (opts.read_fds && !links_refused) {
      // The fd directory read with getdents64 into a buffer on the stack: opendir's DIR costs an
      // fstat, an fcntl and a 32 KiB allocation per process, for a directory read once.
      Fd fds(::openat(dir.get(), "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (fds.get() >= 0) {
        p.fds_read = true;
        size_t fds_visited = 0;
        alignas(dirent64) char buf[8192];
        bool stop = false;
        while (!stop) {
          ssize_t n = ::getdents64(fds.get(), buf, sizeof buf);
          if (n <= 0) break;
          for (ssize_t off = 0; off < n && !stop;) {
            const auto* e = reinterpret_cast<const dirent64*>(buf + off);
            if (e->d_reclen == 0) {
              stop = true;
              break;
            }
            off += e->d_reclen;
            if (e->d_name[0] == '.') continue;
            if (++fds_visited % kScanDeadlineStride == 0 && past_deadline()) {
              scan.truncated = true;
              stop = true;
              break;
            }
            if (!ReadLinkAt(fds.get(), e->d_name, &link)) {
              // The kernel checks ptrace access per task, so once one link is refused every
              // other link of this process is too (an fd dir listed but not readable): stop.
              if (errno == EACCES || errno == EPERM) {
                p.fds_read = false;
                stop = true;
              }
              continue;
            }
            if (auto inode = ParseSocketLink(link)) {
              p.socket_inodes.push_back(*inode);
            } else if (IsNvidiaGpuDevice(link)) {
              p.gpu_device_open = true;
            }
          }
        }
        std::sort(p.socket_inodes.begin(), p.socket_inodes.end());
      }
    }
    scan.processes.push_back(std::move(p));
    if (scan.truncated) break;
  }
  return scan;
}

namespace {

struct RecentScan {
  std::timed_mutex mu;
  std::string procfs;
  TimePoint started_at{};
  std::weak_ptr<const ProcessScan> scan;
  // The kernel threads the last walk of `procfs` found (sorted pids): the next walk reads them
  // through PID/stat alone (ProcScanOptions::kernel_threads). Kernel threads live as long as the
  // host mostly; a pid reused by a process since is read in full.
  std::vector<int> kernel_threads;
};

std::atomic<uint64_t> g_full_scans_taken{0};  // RecentFullScansTaken

}  // namespace

uint64_t RecentFullScansTaken() { return g_full_scans_taken.load(); }

std::shared_ptr<const ProcessScan> RecentFullScan(const RootFs& fs,
                                                  std::chrono::milliseconds max_age,
                                                  std::optional<TimePoint> deadline,
                                                  std::optional<TimePoint> newer_than) {
  static RecentScan recent;
  const TimePoint called = SteadyClock::now();
  ProcScanOptions opts;
  opts.read_fds = true;
  opts.read_exe = true;
  opts.deadline = deadline;
  std::unique_lock lock(recent.mu, std::defer_lock);
  if (deadline ? !lock.try_lock_until(*deadline) : (lock.lock(), false)) {
    g_full_scans_taken.fetch_add(1);
    return std::make_shared<const ProcessScan>(ScanProcesses(fs, opts));
  }
  if (recent.procfs == fs.procfs() && recent.started_at >= called - max_age &&
      (!newer_than || recent.started_at > *newer_than)) {
    if (auto scan = recent.scan.lock()) return scan;
  }
  if (recent.procfs == fs.procfs()) opts.kernel_threads = &recent.kernel_threads;
  const TimePoint started = SteadyClock::now();
  g_full_scans_taken.fetch_add(1);
  auto scan = std::make_shared<const ProcessScan>(ScanProcesses(fs, opts));
  recent.procfs = fs.procfs();
  recent.started_at = started;
  recent.scan = scan;
  recent.kernel_threads.clear();
  for (const ScannedProcess& p : scan->processes) {
    if (p.kernel_thread) recent.kernel_threads.push_back(p.pid);
  }
  std::sort(recent.kernel_threads.begin(), recent.kernel_threads.end());
  return scan;
}

}  // namespace gpudoctor
