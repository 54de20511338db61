#include "notify/notify_spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "core/replace_file.h"

namespace gpudoctor {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

NotifierKind KindOf(const std::string& s) {
  if (s == "exec") return NotifierKind::kExec;
  if (s == "alertmanager") return NotifierKind::kAlertmanager;
  return NotifierKind::kWebhook;
}

}  // namespace

std::string NotifySpoolPath(const std::string& db_path) { return db_path + ".notify-spool"; }

Status WriteNotifySpool(const std::string& path, const std::vector<PendingDelivery>& pending) {
  if (pending.empty()) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return IoError(Errno("unlink " + path));
    return Status::Ok();
  }
  std::vector<std::string> entries;  // each one's JSON text, oldest first
  size_t first = pending.size() > kMaxSpooled ? pending.size() - kMaxSpooled : 0;
  for (size_t i = first; i < pending.size(); ++i) {
    const PendingDelivery& p = pending[i];
    nlohmann::json j;
    j["notifier"] = p.notifier;
    j["kind"] = NotifierKindName(p.kind);
    j["what"] = p.what;
    j["queued_unix_ms"] = p.queued_unix_ms;
    if (!p.body.empty()) j["body"] = p.body;
    if (!p.values.empty()) {
      nlohmann::json v = nlohmann::json::array();
      for (const auto& [name, value] : p.values) v.push_back({name, value});
      j["values"] = std::move(v);
    }
    if (p.gpu_index) j["gpu_index"] = *p.gpu_index;
    if (!p.serial.empty()) j["serial"] = p.serial;
    if (!p.pci_bus_id.empty()) j["pci_bus_id"] = p.pci_bus_id;
    // Invalid UTF-8 in a device value is replaced, never a reason to lose the spool.
    entries.push_back(JsonText(j));
  }
  // The newest entries that fit in kMaxSpoolBytes: a burst too large for the file loses its
  // oldest deliveries, never all of them.
  constexpr std::string_view kHead = "{\"pending\":[", kTail = "],\"version\":1}\n";
  size_t keep_from = entries.size();
  size_t bytes = kHead.size() + kTail.size();
  while (keep_from > 0 && bytes + entries[keep_from - 1].size() + 1 <= kMaxSpoolBytes) {
    bytes += entries[--keep_from].size() + 1;
  }
  std::string text;
  text.reserve(bytes);
  text += kHead;
  for (size_t i = keep_from; i < entries.size(); ++i) {
    if (i > keep_from) text += ',';
    text += entries[i];
  }
  text += kTail;

  ReplaceFileOptions replace;
  replace.sync_data = true;  // a spool half on disk after a crash would lose deliveries
  return ReplaceFileContents(AT_FDCWD, path, text, replace);
}

Result<std::vector<PendingDelivery>> TakeNotifySpool(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::vector<PendingDelivery>{};
    if (errno == ELOOP) return PermissionDenied(path + ": a symlink, not a spool (left alone)");
    return IoError(Errno("open " + path));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return PermissionDenied(path + ": not a regular file (left alone)");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = IoError(Errno("read " + path));
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxSpoolBytes) break;
  }
  ::close(fd);
  ::unlink(path.c_str());
  if (text.size() > kMaxSpoolBytes) return InvalidArgument(path + ": larger than 4 MiB (removed)");
  std::vector<PendingDelivery> out;
  try {
    nlohmann::json doc = nlohmann::json::parse(text);
    if (doc.value("version", 0) != 1) return ParseError(path + ": unknown version (removed)");
    for (const nlohmann::json& j : doc.at("pending")) {
      if (out.size() >= kMaxSpooled) break;
      PendingDelivery p;
      p.notifier = j.at("notifier").get<std::string>();
      p.kind = KindOf(j.at("kind").get<std::string>());
      p.what = j.value("what", "");
      p.queued_unix_ms = j.value("queued_unix_ms", int64_t{0});
      p.body = j.value("body", "");
      if (j.contains("values")) {
        for (const nlohmann::json& v : j.at("values")) {
          p.values.emplace_back(v.at(0).get<std::string>(), v.at(1).get<std::string>());
        }
      }
      if (j.contains("gpu_index")) p.gpu_index = j.at("gpu_index").get<int>();
      p.serial = j.value("serial", "");
      p.pci_bus_id = j.value("pci_bus_id", "");
      out.push_back(std::move(p));
    }
  } catch (const std::exception& e) {
    return ParseError(path + ": does not parse (removed)");
  }
  return out;
}

}  // namespace gpudoctor
