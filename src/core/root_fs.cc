#include "core/root_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "core/line_assembler.h"
#include "core/root_fs_lines.h"

namespace gpudoctor {
namespace {

Status ErrnoStatus(const std::string& path, int err) {
  std::string msg = path + ": " + std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return NotFound(msg);
  if (err == EACCES || err == EPERM) return PermissionDenied(msg);
  return IoError(msg);
}

std::string TrimTrailingSlash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

RootFs::RootFs() : RootFs("/proc", "/sys", "/") {}

RootFs::RootFs(std::string procfs, std::string sysfs, std::string rootfs)
    : procfs_(TrimTrailingSlash(std::move(procfs))),
      sysfs_(TrimTrailingSlash(std::move(sysfs))),
      rootfs_(TrimTrailingSlash(std::move(rootfs))) {}

std::string RootFs::Join(const std::string& base, std::string_view rel) {
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  if (rel.empty()) return base;
  if (base == "/") return "/" + std::string(rel);
  return base + "/" + std::string(rel);
}

std::string RootFs::ProcPath(std::string_view rel) const { return Join(procfs_, rel); }
std::string RootFs::SysPath(std::string_view rel) const { return Join(sysfs_, rel); }
std::string RootFs::RootPath(std::string_view abs) const { return Join(rootfs_, abs); }

Result<std::string> RootFs::ReadFile(const std::string& path, size_t max_bytes) {
  std::string out;
  Status st = ForEachFileChunk(path, max_bytes, 8192, [&out](std::string_view chunk) {
    out.append(chunk);
    return true;
  });
  if (!st.ok()) return st;
  return out;
}

Status ForEachFileChunk(const std::string& path, size_t max_bytes, size_t chunk_bytes,
                        const std::function<bool(std::string_view chunk)>& fn, bool* reached_end) {
  if (reached_end != nullptr) *reached_end = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, errno);
  chunk_bytes = std::max<size_t>(chunk_bytes, 1);
  std::unique_ptr<char[]> buf(new char[chunk_bytes]);
  size_t total = 0;
  while (total < max_bytes) {
    ssize_t n = ::read(fd, buf.get(), std::min(chunk_bytes, max_bytes - total));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ErrnoStatus(path, err);
    }
    if (n == 0) {
      if (reached_end != nullptr) *reached_end = true;
      break;
    }
    total += static_cast<size_t>(n);
    if (!fn(std::string_view(buf.get(), static_cast<size_t>(n)))) break;
  }
  ::close(fd);
  return Status::Ok();
}

Status ForEachFileLine(const std::string& path, size_t max_bytes,
                       const std::function<bool(std::string_view line)>& fn, size_t chunk_bytes) {
  LineAssembler lines(max_bytes, fn);
  Status st = ForEachFileChunk(path, max_bytes, chunk_bytes,
                               [&lines](std::string_view chunk) { return lines.Piece(chunk); });
  if (!st.ok()) return st;
  lines.Finish();
  return Status::Ok();
}

Result<std::vector<std::string>> RootFs::ListDir(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus(path, errno);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> RootFs::ReadLink(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return ErrnoStatus(path, errno);
  return std::string(buf, static_cast<size_t>(n));
}

bool RootFs::Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Result<FileInfo> RootFs::Stat(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(path, errno);
  FileInfo info;
  info.mtime_unix_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  info.size_bytes = static_cast<uint64_t>(st.st_size);
  info.is_dir = S_ISDIR(st.st_mode);
  info.is_regular = S_ISREG(st.st_mode);
  return info;
}

Result<FsUsage> RootFs::StatVfs(std::string_view mount_point) const {
  std::string path = RootPath(mount_point);
  struct statvfs sv;
  if (::statvfs(path.c_str(), &sv) != 0) return ErrnoStatus(path, errno);
  FsUsage u;
  uint64_t frsize = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
  u.total_bytes = static_cast<uint64_t>(sv.f_blocks) * frsize;
  u.available_bytes = static_cast<uint64_t>(sv.f_bavail) * frsize;
  u.free_bytes = static_cast<uint64_t>(sv.f_bfree) * frsize;
  u.inodes_total = sv.f_files;
  u.inodes_free = sv.f_ffree;
  u.read_only = (sv.f_flag & ST_RDONLY) != 0;
  return u;
}

std::string OwnDescriptorPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace gpudoctor
