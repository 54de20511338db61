#include "probes/kept_task_stats.h"

#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>

namespace gpudoctor {

KeptTaskStats::KeptTaskStats() {
  rlimit rl{};
  size_t limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? static_cast<size_t>(rl.rlim_cur) : 0;
  cap_ = std::min(kMaxKeptStatFiles, limit / 4);
}

KeptTaskStats::~KeptTaskStats() {
  for (auto& [dir, e] : files_) ::close(e.fd);
}

void KeptTaskStats::StartScan(int proc_fd) {
  ++scan_;
  struct statfs sfs {};
  keep_ = proc_fd >= 0 && ::fstatfs(proc_fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

int KeptTaskStats::Find(const std::string& dir) {
  auto it = files_.find(dir);
  if (it == files_.end()) return -1;
  it->second.scan = scan_;
  return it->second.fd;
}

bool KeptTaskStats::Keep(const std::string& dir, int fd) {
  if (!keep_ || files_.size() >= cap_) return false;
  return files_.emplace(dir, Entry{fd, scan_}).second;
}

void KeptTaskStats::Drop(const std::string& dir) {
  auto it = files_.find(dir);
  if (it == files_.end()) return;
  ::close(it->second.fd);
  files_.erase(it);
}

void KeptTaskStats::CloseUnread() {
  for (auto it = files_.begin(); it != files_.end();) {
    if (it->second.scan == scan_) {
      ++it;
      continue;
    }
    ::close(it->second.fd);
    it = files_.erase(it);
  }
}

}  // namespace gpudoctor
