// Pending security updates: apt lists vs dpkg status, or dnf's cache (see updates_scan.h).
#include "probes/updates_scan.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/root_fs_compressed.h"
#include "core/root_fs_lines.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "parsers/debian_packages.h"

namespace gpudoctor {
namespace {

// A Packages list by name, plain or compressed: "..._Packages", "..._Packages.lz4" and so on.
bool IsPackagesList(std::string_view name) {
  const size_t suffix =
      CompressionOfName(name) == Compression::kNone ? 0 : name.size() - name.rfind('.');
  return EndsWith(name.substr(0, name.size() - suffix), "_Packages");
}

constexpr size_t kMaxLists = 64;
constexpr size_t kMaxPackagesBytes = 64u << 20;
constexpr size_t kMaxStatusBytes = 32u << 20;
constexpr const char* kListsDir = "/var/lib/apt/lists";

bool IsSecurity(const ReleaseInfo& r, std::string_view file) {
  return r.suite.find("security") != std::string::npos ||
         r.codename.find("security") != std::string::npos ||
         file.find("security") != std::string_view::npos;
}

// "host_path_dists_bookworm-security_InRelease" → "host_path_dists_bookworm-security_".
std::string ReleasePrefix(std::string_view name) {
  for (std::string_view suffix : {"InRelease", "Release"}) {
    if (EndsWith(name, suffix)) return std::string(name.substr(0, name.size() - suffix.size()));
  }
  return "";
}

void ScanDnf(const RootFs& fs, TimePoint deadline, UpdateFacts& facts) {
  std::string tool = RootFs::Exists(fs.RootPath("/usr/bin/dnf")) ? "dnf" : "yum";
  facts.manager = tool;
  facts.method = tool + " -C -q updateinfo list --security (cache only, no network)";
  if (fs.rootfs() != "/" && !fs.rootfs().empty()) {
    facts.note = tool + " is not run against another root (--path.rootfs)";
    return;
  }
  double left = std::chrono::duration<double>(deadline - SteadyClock::now()).count();
  if (left < 0.5) {
    facts.note = "no time left in the check for " + tool;
    return;
  }
  auto r = RunProcess({"/usr/bin/" + tool, "-C", "-q", "updateinfo", "list", "--security"},
                      std::min(left - 0.2, 20.0), 1 << 20);
  if (!r.ok()) {
    facts.note = tool + ": " + r.status().ToString();
    return;
  }
  if (r->exit_code != 0) {
    facts.note =
        tool + " exited with " + std::to_string(r->exit_code) + ": " + Sanitize(Trim(r->err), 200);
    return;
  }
  ParseDnfSecurityList(r->out, facts);
  facts.checked = true;
}

}  // namespace

void ParseDnfSecurityList(std::string_view text, UpdateFacts& facts) {
  std::set<std::string> seen;
  for (std::string_view line : SplitLines(text)) {
    std::vector<std::string_view> f = Split(line, " \t");
    if (f.size() != 3 || f[1].find("Sec") == std::string_view::npos) continue;
    std::string nevra = Sanitize(f[2], 200);
    if (!seen.insert(nevra).second) continue;
    ++facts.pending_count;
    if (facts.pending.size() >= kMaxPendingListed) continue;
    PendingUpdate u;
    // name-[epoch:]version-release.arch: the name ends at the dash before the version.
    std::string_view n = f[2];
    size_t rel = n.rfind('-');
    size_t ver = rel == std::string_view::npos ? rel : n.rfind('-', rel - 1);
    u.name = ver == std::string_view::npos ? nevra : Sanitize(n.substr(0, ver), 200);
    u.candidate_version = ver == std::string_view::npos ? "" : Sanitize(n.substr(ver + 1), 200);
    u.suite = Sanitize(f[0], 64);  // the advisory id
    facts.pending.push_back(std::move(u));
  }
  facts.security_lists = 1;
}

std::string UpdatesStateKey(const RootFs& fs) {
  auto lists = RootFs::Stat(fs.RootPath(kListsDir));
  auto status = RootFs::Stat(fs.RootPath("/var/lib/dpkg/status"));
  if (!lists.ok() || !status.ok()) return "";
  return std::to_string(lists->mtime_unix_ns) + "/" + std::to_string(status->mtime_unix_ns) + "/" +
         std::to_string(status->size_bytes);
}

std::string UpdatesInputIdentity(const RootFs& fs) {
  auto names = RootFs::ListDir(fs.RootPath(kListsDir));
  if (!names.ok()) return "";
  std::vector<std::string> inputs;
  for (const std::string& n : *names) {
    if (ReleasePrefix(n).empty() && !IsPackagesList(n)) continue;
    inputs.push_back(std::string(kListsDir) + "/" + n);
  }
  std::sort(inputs.begin(), inputs.end());
  inputs.push_back("/var/lib/dpkg/status");
  std::string out;
  for (const std::string& path : inputs) {
    for (char c : path) {
      if (c < 0x21 || c > 0x7e) return "";
    }
    struct stat st {};
    if (::stat(fs.RootPath(path).c_str(), &st) != 0) return "";
    out +=
        path.substr(1) + " " + std::to_string(st.st_size) + " " +
        std::to_string(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec) +
        " " +
        std::to_string(static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec) +
        " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_dev) + "\n";
  }
  return out;
}

UpdateFacts ScanSecurityUpdates(const RootFs& fs, TimePoint deadline) {
  UpdateFacts facts;
  auto names = RootFs::ListDir(fs.RootPath(kListsDir));
  if (!names.ok()) {
    if (RootFs::Exists(fs.RootPath("/usr/bin/dnf")) ||
        RootFs::Exists(fs.RootPath("/usr/bin/yum"))) {
      ScanDnf(fs, deadline, facts);
    } else {
      facts.note = "no package manager state found (" + std::string(kListsDir) + ", dnf, yum)";
    }
    return facts;
  }
  facts.manager = "apt";
  facts.method = std::string(kListsDir) + "/*security*_Packages[.lz4|.gz] vs /var/lib/dpkg/status";
  std::map<std::string, ReleaseInfo> security;  // list prefix → its Release
  for (const std::string& n : *names) {
    std::string prefix = ReleasePrefix(n);
    if (prefix.empty() || security.size() >= kMaxLists) continue;
    auto text = RootFs::ReadFile(fs.RootPath(std::string(kListsDir) + "/" + n), 1 << 20);
    if (!text.ok()) continue;
    ReleaseInfo r = ParseRelease(*text);
    if (!IsSecurity(r, n)) continue;
    if (r.suite.empty()) r.suite = r.codename;
    // A suite with both InRelease and Release: keep the one with a date.
    auto [it, fresh] = security.emplace(prefix, r);
    if (!fresh && !it->second.date_unix_s) it->second = r;
  }
  facts.security_lists = static_cast<int>(security.size());
  if (security.empty()) {
    facts.note = "no security suite in the apt lists (none configured, or `apt update` never ran)";
    return facts;
  }
  // Both files are streamed (64 KiB at a time): `watch` runs this every slow round, and holding a
  // 1 MiB index and its parsed vector whole raised its peak RSS by 2 MiB (docs/cost.md).
  std::map<std::string, std::string> installed;  // "name:arch" and "name" → version
  auto add_installed = [&](DebPackage* p) {
    if (p == nullptr) return;
    installed[p->name + ":" + p->arch] = p->version;
    installed.emplace(p->name, p->version);
  };
  // The installed versions are only compared with a security suite's Packages list that can be
  // decoded (plain, .lz4 or .gz); with none (only .xz lists) the status file is still opened and
  // its first lines read, so an unreadable one is reported as before, but not parsed (0.8 MiB,
  // most of this scan's CPU).
  bool any_list = false;
  for (const auto& entry : security) {
    for (const std::string& n : *names) {
      any_list = any_list || (StartsWith(n, entry.first) && IsPackagesList(n) &&
                              CompressionOfName(n) != Compression::kXz);
    }
  }
  DebPackageStream status_stream(/*installed_only=*/true);
  Status status = ForEachFileLine(fs.RootPath("/var/lib/dpkg/status"), kMaxStatusBytes,
                                  [&](std::string_view line) {
                                    add_installed(status_stream.Line(line));
                                    return any_list;
                                  });
  if (!status.ok()) {
    facts.note = "dpkg status unreadable: " + status.ToString();
    return facts;
  }
  add_installed(status_stream.Finish());
  std::map<std::string, PendingUpdate> pending;  // by package name: the newest candidate
  int lists_read = 0;
  std::vector<std::string> unread;  // "name (code: why)"
  for (const auto& entry : security) {
    // Named, not a structured binding: the lambda below uses rel (clang 14 rejects capturing one).
    const auto& prefix = entry.first;
    const auto& rel = entry.second;
    if (SteadyClock::now() >= deadline) {
      facts.note = "the check's deadline passed while reading the apt lists";
      return facts;
    }
    if (rel.date_unix_s) {
      facts.lists_date_unix_s = std::max(facts.lists_date_unix_s.value_or(0), *rel.date_unix_s);
    }
    for (const std::string& n : *names) {
      if (!StartsWith(n, prefix)) continue;
      // apt keeps a list plain or compressed (Acquire::GzipIndexes, CompressionTypes): read
      // _Packages, _Packages.lz4 and _Packages.gz; an .xz list is named as not read.
      if (!IsPackagesList(n)) continue;
      const Compression compression = CompressionOfName(n);
      auto consider = [&](DebPackage* p) {
        if (p == nullptr) return;
        auto it =
            installed.find(p->arch == "all" || p->arch.empty() ? p->name : p->name + ":" + p->arch);
        if (it == installed.end() || CompareDebianVersions(it->second, p->version) >= 0) return;
        auto have = pending.find(p->name);
        if (have != pending.end() &&
            CompareDebianVersions(have->second.candidate_version, p->version) >= 0) {
          return;
        }
        PendingUpdate u{p->name, it->second, p->version, rel.suite, rel.date_unix_s};
        pending[p->name] = std::move(u);
      };
      // A list that cannot be read (or decoded) is named in the note; one that fails part-way
      // after whole stanzas keeps what they gave (nothing is buffered). Lists are decompressed
      // as they are read: 64 KiB of file and of output at a time.
      DebPackageStream list(/*installed_only=*/false);
      Status read =
          ForEachDecompressedFileLine(fs.RootPath(std::string(kListsDir) + "/" + n), compression,
                                      kMaxPackagesBytes, [&](std::string_view line) {
                                        consider(list.Line(line));
                                        return true;
                                      });
      if (!read.ok()) {
        unread.push_back(n + " (" + std::string(StatusCodeName(read.code())) + ": " +
                         Sanitize(read.message(), 200) + ")");
        continue;
      }
      ++lists_read;
      consider(list.Finish());
    }
  }
  if (!unread.empty()) {
    facts.note = "security lists not read:";
    for (const std::string& u : unread) facts.note += " " + u + ";";
    facts.note.pop_back();
  }
  if (lists_read == 0) {
    // Security suites without a readable Packages list: nothing was compared, so the answer is
    // "not checked", never "nothing pending".
    if (unread.empty())
      facts.note = "no Packages list of a security suite in " + std::string(kListsDir);
    return facts;
  }
  facts.checked = true;
  facts.pending_count = static_cast<int>(pending.size());
  for (auto& [name, u] : pending) facts.pending.push_back(std::move(u));
  std::stable_sort(facts.pending.begin(), facts.pending.end(),
                   [](const PendingUpdate& a, const PendingUpdate& b) {
                     return a.list_date_unix_s.value_or(INT64_MAX) <
                            b.list_date_unix_s.value_or(INT64_MAX);
                   });
  if (facts.pending.size() > kMaxPendingListed) facts.pending.resize(kMaxPendingListed);
  return facts;
}

}  // namespace gpudoctor
