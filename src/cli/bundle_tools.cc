#include "cli/bundle_tools.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>

#include "core/strings.h"
#include "core/subprocess.h"

namespace gpudoctor {
namespace {

std::string Describe(const Status& s) { return s.message(); }

// A kmsg record "PRIO,SEQ,USEC,FLAGS;message\n continuation..." as a dmesg line.
std::string RecordLine(std::string_view rec) {
  size_t semi = rec.find(';');
  if (semi == std::string_view::npos) return std::string(rec);
  std::string_view head = rec.substr(0, semi);
  std::string_view msg = rec.substr(semi + 1);
  if (size_t nl = msg.find('\n'); nl != std::string_view::npos) msg = msg.substr(0, nl);
  unsigned long long usec = 0;
  size_t c1 = head.find(','), c2 = c1 == head.npos ? head.npos : head.find(',', c1 + 1);
  if (c2 != head.npos) {
    std::string num(head.substr(c2 + 1, head.find(',', c2 + 1) - c2 - 1));
    usec = std::strtoull(num.c_str(), nullptr, 10);
  }
  char stamp[40];
  std::snprintf(stamp, sizeof stamp, "[%5llu.%06llu] ", usec / 1000000, usec % 1000000);
  return stamp + std::string(msg) + "\n";
}

// "PRIO,SEQ,USEC,FLAGS;" opens a kmsg record.
bool IsRecord(std::string_view line) {
  size_t semi = line.find(';');
  if (semi == std::string_view::npos || semi == 0) return false;
  for (char c : line.substr(0, semi)) {
    if (!((c >= '0' && c <= '9') || c == ',' || c == '-' || c == '+' || c == 'c')) return false;
  }
  return line[0] >= '0' && line[0] <= '9';
}

// A saved ring (kmsg records, as fixture trees keep it) as dmesg lines; other text unchanged.
// The records' continuation lines (" SUBSYSTEM=pci") are dropped.
std::string RecordsAsLines(const std::string& text) {
  size_t first_nl = text.find('\n');
  if (!IsRecord(std::string_view(text).substr(0, first_nl))) return text;
  std::string out;
  for (size_t from = 0; from < text.size();) {
    size_t nl = text.find('\n', from);
    std::string_view line(text.data() + from, (nl == std::string::npos ? text.size() : nl) - from);
    if (IsRecord(line)) out += RecordLine(line);
    if (nl == std::string::npos) break;
    from = nl + 1;
  }
  return out;
}

// Runs `argv` for at most `timeout_s`; its stdout (cut at max_bytes with a marker line, and a
// note saying so), or why not.
Result<std::string> RunTool(const std::vector<std::string>& argv, double timeout_s,
                            size_t max_bytes, std::vector<std::string>& notes) {
  auto r = RunProcess(argv, timeout_s, max_bytes);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    std::string err = Sanitize(r->err.substr(0, 200), 200);
    return IoError(argv[0] + " exited with " + std::to_string(r->exit_code) +
                   (err.empty() ? "" : ": " + err));
  }
  std::string out = std::move(r->out);
  if (r->out_truncated) {
    out += "\n[gpudoctor: cut at " + std::to_string(max_bytes) + " bytes]\n";
    notes.push_back(argv[0] + ": output cut at " + std::to_string(max_bytes) + " bytes");
  }
  return out;
}

void NvidiaSmi(const BundleToolOptions& o, std::vector<BundleMember>& members,
               std::vector<std::string>& notes) {
  auto out = RunTool({"nvidia-smi", "-q"}, o.tool_timeout_s, o.max_smi_bytes, notes);
  if (!out.ok()) {
    notes.push_back("nvidia-smi -q: " + Describe(out.status()));
    return;
  }
  members.push_back({"nvidia/nvidia-smi-q.txt", std::move(*out)});
}

// nvidia-bug-report.sh writes FILE.gz itself; run in a private directory, read back bounded.
void BugReport(const BundleToolOptions& o, std::vector<BundleMember>& members,
               std::vector<std::string>& notes) {
  char dir[] = "/tmp/gpudoctor-bug-report-XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    notes.push_back("nvidia-bug-report.sh: no temporary directory: " +
                    std::string(std::strerror(errno)));
    return;
  }
  std::string base = std::string(dir) + "/nvidia-bug-report.log";
  auto r = RunProcess({"nvidia-bug-report.sh", "--output-file", base}, o.tool_timeout_s, 64 * 1024);
  std::string gz = base + ".gz";
  if (!r.ok()) {
    notes.push_back("nvidia-bug-report.sh: " + Describe(r.status()));
  } else if (r->exit_code != 0) {
    notes.push_back("nvidia-bug-report.sh exited with " + std::to_string(r->exit_code));
  } else {
    int fd = ::open(gz.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      notes.push_back("nvidia-bug-report.sh wrote no " + gz);
    } else if (static_cast<uint64_t>(st.st_size) > o.max_bug_report_bytes) {
      notes.push_back("nvidia-bug-report.log.gz left out: " + std::to_string(st.st_size) +
                      " bytes, more than " + std::to_string(o.max_bug_report_bytes));
    } else {
      std::string data(static_cast<size_t>(st.st_size), '\0');
      size_t have = 0;
      while (have < data.size()) {
        ssize_t n = ::read(fd, data.data() + have, data.size() - have);
        if (n <= 0) break;
        have += static_cast<size_t>(n);
      }
      data.resize(have);
      members.push_back({"nvidia/nvidia-bug-report.log.gz", std::move(data)});
    }
    if (fd >= 0) ::close(fd);
  }
  ::unlink(gz.c_str());
  ::unlink(base.c_str());
  ::rmdir(dir);
}

}  // namespace

Result<std::string> KernelLogTail(const std::string& path, size_t max_bytes, TimePoint deadline) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    std::string why = path + ": " + std::strerror(e);
    return e == ENOENT                 ? NotFound(why)
           : e == EACCES || e == EPERM ? PermissionDenied(why)
                                       : IoError(why);
  }
  struct stat st {};
  std::string out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // A saved ring or dmesg text: its last max_bytes, from a line start.
    off_t from = st.st_size > static_cast<off_t>(max_bytes) ? st.st_size - max_bytes : 0;
    out.resize(static_cast<size_t>(st.st_size - from));
    ssize_t n = ::pread(fd, out.data(), out.size(), from);
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    if (from > 0) {
      size_t nl = out.find('\n');
      out.erase(0, nl == std::string::npos ? out.size() : nl + 1);
    }
    ::close(fd);
    return RecordsAsLines(out);
  }
  // The kmsg device: one record per read, EAGAIN at the end, EPIPE when the ring overran us.
  std::deque<std::string> lines;
  size_t bytes = 0;
  std::string buf(8192, '\0');
  while (SteadyClock::now() < deadline) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EPIPE) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    lines.push_back(RecordLine(std::string_view(buf.data(), static_cast<size_t>(n))));
    bytes += lines.back().size();
    while (bytes > max_bytes && !lines.empty()) {
      bytes -= lines.front().size();
      lines.pop_front();
    }
  }
  ::close(fd);
  for (const auto& l : lines) out += l;
  return out;
}

void CollectBundleAttachments(const Settings& settings, const BundleToolOptions& options,
                              std::vector<BundleMember>& members, std::vector<std::string>& notes) {
  if (options.tool_timeout_s <= 0) {
    notes.push_back("nvidia-smi -q and nvidia-bug-report.sh: not run (--tool-timeout 0)");
  } else if (settings.fs.rootfs() != "/") {
    notes.push_back("nvidia-smi -q and nvidia-bug-report.sh: not run (--path.rootfs " +
                    Sanitize(settings.fs.rootfs(), 200) + " is not this host)");
  } else {
    NvidiaSmi(options, members, notes);
    BugReport(options, members, notes);
  }
  auto tail = KernelLogTail(settings.fs.RootPath("/dev/kmsg"), options.kernel_tail_bytes,
                            SteadyClock::now() + std::chrono::seconds(5));
  if (tail.ok()) {
    members.push_back({"kernel-tail.txt", std::move(*tail)});
  } else {
    notes.push_back("kernel-tail.txt: " + tail.status().message());
  }
}

}  // namespace gpudoctor
