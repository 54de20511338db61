// HostFixture: a private copy of a host fixture tree (tests/fixtures/hosts/<name>) in a TempDir,
// with optional "second samples": every file X that has a sibling X.next is replaced by X.next
// (atomic rename) as soon as the first read of X has closed. This lets a probe or the built
// binary see two different samples of /proc/stat or /proc/vmstat across its sampling window,
// without product code knowing anything about fixtures. Linux inotify; test-only code.
// Header-only so that both unit_tests and e2e_tests can use it without build changes.
#pragma once

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/root_fs.h"
#include "test_util.h"

namespace gpudoctor::testing {

class HostFixture {
 public:
  explicit HostFixture(const std::string& name) {
    namespace fs = std::filesystem;
    fs::path src = FixturePath("hosts/" + name);
    if (!fs::is_directory(src)) throw std::runtime_error("no host fixture " + src.string());
    fs::copy(src, dir_.path(), fs::copy_options::recursive);
    for (const char* sub : {"proc", "sys", "root"}) fs::create_directories(path(sub));
  }
  ~HostFixture() {
    stop_ = true;
    if (watcher_.joinable()) watcher_.join();
    if (inotify_fd_ >= 0) close(inotify_fd_);
  }
  HostFixture(const HostFixture&) = delete;
  HostFixture& operator=(const HostFixture&) = delete;

  std::string path(const std::string& sub) const { return dir_.path() + "/" + sub; }
  std::string proc() const { return path("proc"); }
  std::string sys() const { return path("sys"); }
  std::string root() const { return path("root"); }
  RootFs fs() const { return RootFs(proc(), sys(), root()); }
  // Flags for the binary: --path.procfs ... --path.sysfs ... --path.rootfs ...
  std::vector<std::string> PathFlags() const {
    return {"--path.procfs", proc(), "--path.sysfs", sys(), "--path.rootfs", root()};
  }
  // Writes (or overwrites) a file in the copy, e.g. Write("proc/meminfo", "...").
  void Write(const std::string& rel, const std::string& content) const { dir_.Write(rel, content); }
  void MakeDir(const std::string& rel) const { dir_.MakeDir(rel); }

  // Starts watching every X with an X.next under the tree; returns how many were armed. Call it
  // before the probe or binary runs. Each swap happens once.
  int ArmSecondSamples() {
    namespace fs = std::filesystem;
    inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotify_fd_ < 0) throw std::runtime_error("inotify_init1 failed");
    for (const auto& entry : fs::recursive_directory_iterator(dir_.path())) {
      std::string p = entry.path().string();
      if (!entry.is_regular_file() || p.size() < 5 || p.substr(p.size() - 5) != ".next") continue;
      std::string target = p.substr(0, p.size() - 5);
      int wd = inotify_add_watch(inotify_fd_, target.c_str(), IN_CLOSE_NOWRITE);
      if (wd < 0) throw std::runtime_error("inotify_add_watch failed for " + target);
      pending_[wd] = target;
    }
    int armed = static_cast<int>(pending_.size());
    watcher_ = std::thread([this] { Watch(); });
    return armed;
  }
  // Number of swaps done so far.
  int swaps_done() const { return swaps_done_.load(); }

 private:
  void Watch() {
    alignas(inotify_event) char buf[4096];
    while (!stop_ && !pending_.empty()) {
      pollfd pfd{inotify_fd_, POLLIN, 0};
      if (poll(&pfd, 1, 20) <= 0) continue;
      ssize_t n = read(inotify_fd_, buf, sizeof buf);
      for (ssize_t off = 0; n > 0 && off < n;) {
        auto* ev = reinterpret_cast<inotify_event*>(buf + off);
        off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
        auto it = pending_.find(ev->wd);
        if (it == pending_.end() || !(ev->mask & IN_CLOSE_NOWRITE)) continue;
        std::string target = it->second;
        pending_.erase(it);
        inotify_rm_watch(inotify_fd_, ev->wd);
        if (std::rename((target + ".next").c_str(), target.c_str()) == 0) ++swaps_done_;
      }
    }
  }

  TempDir dir_;
  int inotify_fd_ = -1;
  std::map<int, std::string> pending_;  // watch descriptor -> file to replace
  std::thread watcher_;
  std::atomic<bool> stop_{false};
  std::atomic<int> swaps_done_{0};
};

}  // namespace gpudoctor::testing
