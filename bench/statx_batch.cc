// The cost of the per-file stat a `fleet card` query does (docs/fleet.md "Freshness check"):
// statx(dirfd, name, AT_SYMLINK_NOFOLLOW, TYPE|SIZE|MTIME) of every *.json file below DIR, once
// in a plain loop and once batched through io_uring (IORING_OP_STATX, up to ENTRIES per
// io_uring_enter; raw system calls with the kernel's <linux/io_uring.h>, no liburing), plus
// one getppid() (the bare system call cost of this machine). Prints CPU (user + sys of the
// whole process, io_uring's io-wq workers included: they are threads of the process) and wall
// per variant. Usage: statx_batch DIR [ENTRIES (default 4096)] [SETUP_FLAGS (default 0)].
// Not part of gpudoctor: evidence for the choice of the plain statx workers.
#include <dirent.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct File {
  int dfd;
  std::string name;
};

double Cpu() {
  struct rusage r;
  ::getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + r.ru_stime.tv_sec +
         r.ru_stime.tv_usec * 1e-6;
}

double Wall() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void List(const std::string& dir, std::vector<File>& out, int depth) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr || depth > 8) return;
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    if (e->d_type == DT_DIR) {
      List(dir + "/" + n, out, depth + 1);
    } else if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) {
      out.push_back({dfd, n});
    }
  }
  ::closedir(d);
}

constexpr unsigned kMask = STATX_TYPE | STATX_SIZE | STATX_MTIME;

// Returns false (and says why) when io_uring cannot be set up here.
bool Uring(const std::vector<File>& files, unsigned entries, unsigned flags) {
  io_uring_params p{};
  p.flags = flags;
  const int fd = static_cast<int>(::syscall(__NR_io_uring_setup, entries, &p));
  if (fd < 0) {
    std::printf("io_uring_setup: %s\n", std::strerror(errno));
    return false;
  }
  const size_t sq_bytes = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  const size_t cq_bytes = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
  const size_t ring_bytes = std::max(sq_bytes, cq_bytes);  // IORING_FEAT_SINGLE_MMAP
  auto* ring = static_cast<char*>(::mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE,
                                         MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING));
  auto* sqes = static_cast<io_uring_sqe*>(::mmap(nullptr, p.sq_entries * sizeof(io_uring_sqe),
                                                 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                                                 fd, IORING_OFF_SQES));
  if (ring == MAP_FAILED || sqes == MAP_FAILED || !(p.features & IORING_FEAT_SINGLE_MMAP)) {
    std::printf("io_uring: cannot map the rings\n");
    return false;
  }
  auto* sq_tail = reinterpret_cast<std::atomic<unsigned>*>(ring + p.sq_off.tail);
  const unsigned sq_mask = *reinterpret_cast<unsigned*>(ring + p.sq_off.ring_mask);
  auto* sq_array = reinterpret_cast<unsigned*>(ring + p.sq_off.array);
  auto* cq_head = reinterpret_cast<std::atomic<unsigned>*>(ring + p.cq_off.head);
  auto* cq_tail = reinterpret_cast<std::atomic<unsigned>*>(ring + p.cq_off.tail);
  const unsigned cq_mask = *reinterpret_cast<unsigned*>(ring + p.cq_off.ring_mask);
  auto* cqes = reinterpret_cast<io_uring_cqe*>(ring + p.cq_off.cqes);
  std::vector<struct statx> out(files.size());
  size_t next = 0, done = 0, in_flight = 0, enters = 0, failed = 0;
  while (done < files.size()) {
    unsigned tail = sq_tail->load(std::memory_order_relaxed);
    unsigned submit = 0;
    while (next < files.size() && in_flight < p.sq_entries) {
      io_uring_sqe* s = &sqes[tail & sq_mask];
      std::memset(s, 0, sizeof *s);
      s->opcode = IORING_OP_STATX;
      s->fd = files[next].dfd;
      s->addr = reinterpret_cast<uintptr_t>(files[next].name.c_str());
      s->len = kMask;
      s->statx_flags = AT_SYMLINK_NOFOLLOW;
      s->off = reinterpret_cast<uintptr_t>(&out[next]);
      s->user_data = next;
      sq_array[tail & sq_mask] = tail & sq_mask;
      ++tail, ++next, ++in_flight, ++submit;
    }
    sq_tail->store(tail, std::memory_order_release);
    if (::syscall(__NR_io_uring_enter, fd, submit, in_flight, IORING_ENTER_GETEVENTS, nullptr, 0) <
        0) {
      std::printf("io_uring_enter: %s\n", std::strerror(errno));
      return false;
    }
    ++enters;
    unsigned head = cq_head->load(std::memory_order_relaxed);
    const unsigned end = cq_tail->load(std::memory_order_acquire);
    for (; head != end; ++head, ++done, --in_flight) failed += cqes[head & cq_mask].res < 0;
    cq_head->store(head, std::memory_order_release);
  }
  std::printf("io_uring_enter calls %zu, failed stats %zu\n", enters, failed);
  ::close(fd);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: statx_batch DIR [ENTRIES] [SETUP_FLAGS]\n");
    return 2;
  }
  const unsigned entries = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 4096;
  const unsigned flags = argc > 3 ? static_cast<unsigned>(std::strtoul(argv[3], nullptr, 0)) : 0;
  std::vector<File> files;
  List(argv[1], files, 0);
  std::printf("files %zu\n", files.size());
  double c = Cpu(), w = Wall();
  for (int i = 0; i < 200000; ++i) ::syscall(SYS_getppid);
  std::printf("bench=getppid cpu_us=%.3f\n", (Cpu() - c) / 200000 * 1e6);
  c = Cpu(), w = Wall();
  struct statx sx;
  for (const File& f : files) ::statx(f.dfd, f.name.c_str(), AT_SYMLINK_NOFOLLOW, kMask, &sx);
  std::printf("bench=statx_loop cpu_ms=%.1f wall_ms=%.1f\n", (Cpu() - c) * 1e3, (Wall() - w) * 1e3);
  c = Cpu(), w = Wall();
  if (Uring(files, entries, flags)) {
    std::printf("bench=statx_io_uring entries=%u flags=%#x cpu_ms=%.1f wall_ms=%.1f\n", entries,
                flags, (Cpu() - c) * 1e3, (Wall() - w) * 1e3);
  }
  return 0;
}
