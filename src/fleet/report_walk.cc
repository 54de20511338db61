#include "fleet/report_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "core/deadline.h"

namespace gpudoctor::fleet {
namespace {

constexpr int kMaxDirDepth = 8;
constexpr size_t kMaxFiles = 1000000;
// Directories whose listing is done stay open until their files are stat-ed; at most this many.
constexpr size_t kMaxHeldDirs = 64;
constexpr size_t kMaxWorkers = 8;
constexpr size_t kBatch = 128;       // stats a worker takes at a time
constexpr size_t kPerWorker = 1024;  // pending stats per worker started (thread hand-off cost)

// A 64-bit hash over words (names are short; a byte loop was a measurable part of a query).
struct Hasher {
  uint64_t h = 1469598103934665603ull;
  void Word(uint64_t w) {
    h ^= w;
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  void Bytes(const char* p, size_t n) {
    Word(n);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      Word(w);
    }
    if (i < n) {
      uint64_t w = 0;
      std::memcpy(&w, p + i, n - i);
      Word(w);
    }
  }
  void Str(std::string_view s) { Bytes(s.data(), s.size()); }
};

// A 64-bit finaliser (every input bit moves every output bit about half the time), so that
// the sum of the per-entry hashes below is a good hash of the set.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint64_t StrHash(std::string_view s) {
  Hasher h;
  h.Str(s);
  return Mix(h.h);
}

// One report file's part of the fingerprint: its directory (hash of the directory's path),
// name, and size and mtime when it is a regular file.
uint64_t FileHash(uint64_t dir_hash, const char* name, size_t len,
                  const std::optional<FileInfo>& fi) {
  Hasher h;
  h.Word(dir_hash);
  h.Bytes(name, len);
  h.Word(fi ? 1 : 0);
  if (fi) {
    h.Word(fi->size_bytes);
    h.Word(static_cast<uint64_t>(fi->mtime_unix_ns));
  }
  return Mix(h.h);
}

// One stamp's part of the stamp hash, added to `sum` (a hash of the set, like the fingerprint:
// the same whatever order the walk met the directories in): its path and what moves when it
// changes.
void StampWord(uint64_t& sum, std::string_view path, const struct stat* st) {
  Hasher h;
  h.Str(path);
  if (st == nullptr) {
    h.Word(0);
    sum += Mix(h.h);
    return;
  }
  h.Word(1);
  h.Word(st->st_ino);
  h.Word(static_cast<uint64_t>(st->st_mtim.tv_sec) * 1000000000 + st->st_mtim.tv_nsec);
  h.Word(static_cast<uint64_t>(st->st_ctim.tv_sec) * 1000000000 + st->st_ctim.tv_nsec);
  h.Word(S_ISDIR(st->st_mode) ? 0 : static_cast<uint64_t>(st->st_size));
  sum += Mix(h.h);
}

uint64_t StampTotal(size_t count, uint64_t sum) {
  Hasher h;
  h.Word(count);
  h.Word(sum);
  return Mix(h.h);
}

struct Entry {
  uint32_t dir;   // index into State::dirs
  uint32_t name;  // offset into State::names (NUL-terminated)
  uint32_t len;
};

// Everything the stat workers touch; shared with them, so an abandoned worker (a hung
// filesystem) never touches freed memory. Open directory descriptors are closed by the walk
// after their stats, the rest when the last owner lets go.
struct State {
  std::vector<std::string> dirs;
  std::vector<int> fds;  // per directory, -1 when closed
  std::string names;
  std::vector<Entry> files;
  std::vector<std::optional<FileInfo>> info;
  std::vector<uint8_t> gone;      // the stat failed (removed since the listing): not listed
  std::vector<uint32_t> pending;  // files to stat
  std::vector<std::string> rel;   // per directory: its path below the top ("" for the top)
  std::vector<std::string> stamp_paths;
  uint64_t stamps = 0;  // StampWord sum
  ~State() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
};

FileInfo RegularInfo(int64_t sec, int64_t nsec, uint64_t size) {
  FileInfo fi;
  fi.mtime_unix_ns = sec * 1000000000 + nsec;
  fi.size_bytes = size;
  fi.is_regular = true;
  return fi;
}

std::atomic<bool> g_no_statx{false};

// Size and mtime of `name` in directory `dfd` (not following a link). statx asks for the type,
// size and mtime only; where the kernel or a sandbox has no statx, fstatat.
void StatOne(int dfd, const char* name, std::optional<FileInfo>& out, uint8_t& gone) {
  if (!g_no_statx.load(std::memory_order_relaxed)) {
    struct statx sx;
    constexpr unsigned kNeed = STATX_TYPE | STATX_SIZE | STATX_MTIME;
    if (::statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT, kNeed, &sx) == 0) {
      if ((sx.stx_mask & kNeed) == kNeed) {
        if (S_ISREG(sx.stx_mode)) {
          out = RegularInfo(sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec, sx.stx_size);
        }
        return;
      }
    } else if (errno == ENOSYS || errno == EPERM) {
      g_no_statx.store(true, std::memory_order_relaxed);
    } else {
      gone = 1;
      return;
    }
  }
  struct stat st;
  if (::fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    gone = 1;
    return;
  }
  if (S_ISREG(st.st_mode)) out = RegularInfo(st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size);
}

void StatRange(State& s, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    const uint32_t f = s.pending[i];
    const Entry& e = s.files[f];
    StatOne(s.fds[e.dir], s.names.data() + e.name, s.info[f], s.gone[f]);
  }
}

// One round of stats on the workers.
struct StatJob {
  std::shared_ptr<State> s;
  size_t n = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};  // stats finished (progress; read when a wait times out)
  std::mutex mu;
  std::condition_variable cv;
  size_t running = 0;  // workers not finished
};

void StatWorker(StatJob& job) {
  for (;;) {
    const size_t i = job.next.fetch_add(kBatch);
    if (i >= job.n) break;
    const size_t to = std::min(i + kBatch, job.n);
    StatRange(*job.s, i, to);
    // Progress is counted, not signalled: a wake-up of the waiting walk per batch cost
    // hundreds of context switches a query.
    job.done.fetch_add(to - i, std::memory_order_relaxed);
  }
  std::lock_guard lock(job.mu);
  if (--job.running == 0) job.cv.notify_one();
}

// Capacity for `more` elements, growing at least geometrically (many small directories must
// not reallocate each time).
template <typename V>
void Room(V& v, size_t more) {
  if (v.capacity() - v.size() < more) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

class Walker {
 public:
  // `sorted`: each directory's entries in name order (the order of the paths; the fingerprint
  // does not depend on it).
  Walker(std::shared_ptr<State> s, std::chrono::milliseconds stall, bool sorted,
         std::vector<InputProblem>& problems)
      : s_(std::move(s)), stall_(stall), sorted_(sorted), problems_(problems) {}

  // True when the file limit cut the walk short (which files are in then depends on the order).
  bool limit_hit() const { return limit_hit_; }

  // Lists directory `id` (open as s_->fds[id]) and what is below it.
  Status Dir(uint32_t id, int depth) {
    State& s = *s_;
    const int fd = s.fds[id];
    struct Local {
      uint32_t name, len;
      unsigned char type;
    };
    std::vector<Local> entries;
    {
      // Stamped before the listing: a change after it moves the stamp.
      struct stat dst;
      const bool have = ::fstat(fd, &dst) == 0;
      s.stamp_paths.push_back("d" + s.rel[id]);
      StampWord(s.stamps, s.stamp_paths.back(), have ? &dst : nullptr);
    }
    {
      const int dup_fd = ::dup(fd);
      DIR* d = dup_fd < 0 ? nullptr : ::fdopendir(dup_fd);
      if (d == nullptr) {
        if (dup_fd >= 0) ::close(dup_fd);
        if (id == 0) return IoError(s.dirs[0] + ": cannot open directory");
        problems_.push_back({s.dirs[id], "", "cannot open directory: skipped"});
        return Status::Ok();
      }
      while (struct dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
        const size_t len = std::strlen(e->d_name);
        entries.push_back(
            {static_cast<uint32_t>(s.names.size()), static_cast<uint32_t>(len), e->d_type});
        s.names.append(e->d_name, len + 1);
      }
      ::closedir(d);
    }
    // Room for this directory's files up front: growing the vectors entry by entry costs page
    // faults and copies (a tenth of a query at 40,000 files).
    Room(s.files, entries.size());
    Room(s.info, entries.size());
    Room(s.gone, entries.size());
    Room(s.pending, entries.size());
    if (sorted_) {
      const char* base = s.names.data();
      std::sort(entries.begin(), entries.end(), [base](const Local& a, const Local& b) {
        return std::string_view(base + a.name, a.len) < std::string_view(base + b.name, b.len);
      });
    }
    for (const Local& e : entries) {
      if (s.files.size() >= kMaxFiles) {
        limit_hit_ = true;
        problems_.push_back(
            {s.dirs[id], "",
             "more than " + std::to_string(kMaxFiles) + " report files: the rest not read"});
        break;
      }
      const std::string_view name(s.names.data() + e.name, e.len);  // the buffer may grow below
      const bool json = name.size() > 5 && name.substr(name.size() - 5) == ".json";
      unsigned char type = e.type;
      std::optional<FileInfo> known;
      if (type == DT_UNKNOWN) {  // a filesystem without types in its directory entries
        struct stat st;
        if (::fstatat(fd, s.names.data() + e.name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = IFTODT(st.st_mode);
        if (S_ISREG(st.st_mode)) {
          known = RegularInfo(st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size);
        }
      }
      if (type == DT_DIR) {
        std::string p = s.dirs[id] + "/" + std::string(name);
        if (depth >= kMaxDirDepth) {
          problems_.push_back(
              {p, "",
               "directory more than " + std::to_string(kMaxDirDepth) + " levels deep: skipped"});
          continue;
        }
        const int sub =
            ::openat(fd, s.names.data() + e.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (sub < 0) {
          problems_.push_back({p, "", "cannot open directory: skipped"});
          // Stamped too: made readable (its ctime moves), it is read.
          struct stat dst;
          const bool have = ::fstatat(fd, s.names.data() + e.name, &dst, AT_SYMLINK_NOFOLLOW) == 0;
          s.stamp_paths.push_back(
              "d" + (s.rel[id].empty() ? std::string(name) : s.rel[id] + "/" + std::string(name)));
          StampWord(s.stamps, s.stamp_paths.back(), have ? &dst : nullptr);
          continue;
        }
        const auto sub_id = static_cast<uint32_t>(s.dirs.size());
        s.dirs.push_back(std::move(p));
        s.fds.push_back(sub);
        s.rel.push_back(s.rel[id].empty() ? std::string(name)
                                          : s.rel[id] + "/" + std::string(name));
        if (Status st = Dir(sub_id, depth + 1); !st.ok()) return st;
        continue;
      }
      if (type == DT_LNK) {
        // A link to a file is read like the file; a link to a directory could loop.
        std::string p = s.dirs[id] + "/" + std::string(name);
        auto target = RootFs::Stat(p);
        if (target.ok() && target->is_dir) {
          problems_.push_back({p, "", "symbolic link to a directory: not followed, skipped"});
          continue;
        }
        if (!json) continue;
        if (target.ok() && target->is_regular) known = *target;
        {
          struct stat lst;
          const bool have = ::fstatat(fd, s.names.data() + e.name, &lst, 0) == 0;
          s.stamp_paths.push_back(
              "l" + (s.rel[id].empty() ? std::string(name) : s.rel[id] + "/" + std::string(name)));
          StampWord(s.stamps, s.stamp_paths.back(), have ? &lst : nullptr);
        }
        Add(id, e.name, e.len, known, false);
        continue;
      }
      if (!json) continue;
      // A regular file is stat-ed on the workers; a FIFO or device named *.json is listed
      // without a stat (reading it is refused and named).
      Add(id, e.name, e.len, known, type == DT_REG && !known);
    }
    held_.push_back(id);
    if (held_.size() >= kMaxHeldDirs) return Flush();
    return Status::Ok();
  }

  // Stats the pending files on up to kMaxWorkers workers and closes the directories done.
  Status Flush() {
    State& s = *s_;
    const size_t n = s.pending.size();
    if (n > 0) {
      auto job = std::make_shared<StatJob>();
      job->s = s_;
      job->n = n;
      const size_t hw = std::max(1u, std::thread::hardware_concurrency());
      const size_t workers =
          std::clamp<size_t>((n + kPerWorker - 1) / kPerWorker, 1, std::min(hw, kMaxWorkers));
      job->running = workers;
      for (size_t k = 0; k < workers; ++k) {
        if (!RunOnWorker([job] { StatWorker(*job); })) {
          std::lock_guard lock(job->mu);
          --job->running;
        }
      }
      std::unique_lock lock(job->mu);
      if (job->running == 0 && job->done == 0) {  // no thread could be started: stat here
        lock.unlock();
        job->next = n;
        StatRange(s, 0, n);
        lock.lock();
      }
      // Woken when the last worker ends; each `stall` without that, progress is checked.
      size_t seen = job->done.load();
      while (job->running > 0) {
        if (job->cv.wait_for(lock, stall_, [&] { return job->running == 0; })) break;
        const size_t now_done = job->done.load();
        if (now_done == seen) {
          for (size_t k = 0; k < job->running; ++k) CountAbandonedWorker();
          return TimeoutError(s.dirs[0] + ": file stats made no progress within " +
                              std::to_string(stall_.count()) + " ms (a hung filesystem?)");
        }
        seen = now_done;
      }
      s.pending.clear();
    }
    for (uint32_t id : held_) {
      ::close(s.fds[id]);
      s.fds[id] = -1;
    }
    held_.clear();
    return Status::Ok();
  }

 private:
  void Add(uint32_t dir, uint32_t name, uint32_t len, const std::optional<FileInfo>& info,
           bool stat) {
    State& s = *s_;
    if (stat) s.pending.push_back(static_cast<uint32_t>(s.files.size()));
    s.files.push_back({dir, name, len});
    s.info.push_back(info);
    s.gone.push_back(0);
  }

  std::shared_ptr<State> s_;
  std::chrono::milliseconds stall_;
  bool sorted_;
  bool limit_hit_ = false;
  std::vector<InputProblem>& problems_;
  std::vector<uint32_t> held_;
};

}  // namespace

namespace {

// The walk; *limit_hit is set when the file limit cut it short (the caller then walks again in
// name order, so that which files are in does not depend on the listing order).
Result<ReportWalk> Walk(const std::string& dir, bool with_paths, bool sorted,
                        std::chrono::milliseconds stall, bool* limit_hit) {
  auto s = std::make_shared<State>();
  s->names.reserve(size_t{1} << 20);
  const int top = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top < 0) return IoError(dir + ": cannot open directory");
  s->dirs.push_back(dir);
  s->fds.push_back(top);
  s->rel.emplace_back();
  ReportWalk out;
  Walker walker(s, stall, sorted, out.problems);
  if (Status st = walker.Dir(0, 0); !st.ok()) return st;
  if (Status st = walker.Flush(); !st.ok()) return st;
  *limit_hit = walker.limit_hit();
  if (*limit_hit && !sorted) return out;

  // The fingerprint is a hash of sets (sums of per-entry hashes): the same whatever order the
  // directories listed their entries in, so a query need not sort 40,000 names.
  std::vector<uint64_t> dir_hash(s->dirs.size());
  uint64_t dirs_sum = 0, files_sum = 0, problems_sum = 0;
  for (size_t d = 0; d < s->dirs.size(); ++d) {
    dir_hash[d] = StrHash(s->dirs[d]);
    dirs_sum += dir_hash[d];
  }
  const size_t n = s->files.size();
  if (with_paths) {
    out.info.reserve(n);
    out.files.reserve(n);
  }
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s->gone[i]) continue;
    ++count;
    const Entry& e = s->files[i];
    const auto& fi = s->info[i];
    files_sum += FileHash(dir_hash[e.dir], s->names.data() + e.name, e.len, fi);
    if (with_paths) {
      out.info.push_back(fi);
      std::string p;
      p.reserve(s->dirs[e.dir].size() + 1 + e.len);
      p.append(s->dirs[e.dir]).append(1, '/').append(s->names.data() + e.name, e.len);
      out.files.push_back(std::move(p));
    }
  }
  for (const auto& p : out.problems) {
    Hasher ph;
    ph.Str(p.source);
    ph.Str(p.message);
    problems_sum += Mix(ph.h);
  }
  Hasher h;
  h.Word(count);
  h.Word(files_sum);
  h.Word(s->dirs.size());
  h.Word(dirs_sum);
  h.Word(out.problems.size());
  h.Word(problems_sum);
  out.fingerprint = Mix(h.h);
  out.file_count = count;
  out.stamp_paths = std::move(s->stamp_paths);
  out.stamp_hash = StampTotal(out.stamp_paths.size(), s->stamps);
  return out;
}

}  // namespace

Result<ReportWalk> WalkReports(const std::string& dir, bool with_paths,
                               std::chrono::milliseconds stall) {
  bool limit_hit = false;
  if (!with_paths) {
    auto quick = Walk(dir, false, /*sorted=*/false, stall, &limit_hit);
    if (!quick.ok() || !limit_hit) return quick;
  }
  return Walk(dir, with_paths, /*sorted=*/true, stall, &limit_hit);
}

Result<uint64_t> StampHash(const std::string& dir, const std::vector<std::string>& stamp_paths) {
  const int top = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top < 0) return IoError(dir + ": cannot open directory");
  uint64_t sum = 0;
  for (const std::string& p : stamp_paths) {
    struct stat st;
    bool have = false;
    if (p == "d") {
      have = ::fstat(top, &st) == 0;
    } else if (p.size() > 1 && (p[0] == 'd' || p[0] == 'l')) {
      // A directory is not followed (the walk enters no link to one); a link file is.
      have = ::fstatat(top, p.c_str() + 1, &st, p[0] == 'd' ? AT_SYMLINK_NOFOLLOW : 0) == 0 &&
             (p[0] == 'l' || S_ISDIR(st.st_mode));
    }
    StampWord(sum, p, have ? &st : nullptr);
  }
  ::close(top);
  return StampTotal(stamp_paths.size(), sum);
}

}  // namespace gpudoctor::fleet
