// The security-updates answer cached on disk, keyed on its inputs' identity (updates_cache.h).
//
// File format (text, one record a line, every string field percent-encoded: bytes outside
// 0x21..0x7e and '%' as %XX, upper-case hex):
//   gpudoctor-security-updates-cache 1
//   in <identity line>            one per line of UpdatesInputIdentity, in order
//   manager <s>
//   method <s>
//   checked 0|1
//   note <s>                      "-" for empty (every empty string is written as "-")
//   security_lists <n>
//   pending_count <n>
//   lists_date <n>|-
//   pending <name> <installed> <candidate> <suite> <date>|-     at most kMaxPendingListed
//   sum <16 hex digits>           FNV-1a 64 of every byte before this line
#include "probes/updates_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "core/replace_file.h"
#include "core/strings.h"
#include "probes/updates_scan.h"

namespace gpudoctor {
namespace {

constexpr std::string_view kHeader = "gpudoctor-security-updates-cache 1";
constexpr size_t kMaxField = 1024;        // decoded bytes of one string field
constexpr int64_t kMaxCount = 1'000'000;  // security_lists, pending_count

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string Hex16(uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<size_t>(i)] = kDigits[v & 15];
  return out;
}

std::string Encode(std::string_view s) {
  if (s.empty()) return "-";
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x21 && c <= 0x7e && c != '%' && !(s.size() == 1 && c == '-')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 15]);
    }
  }
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The inverse of Encode, strict: only Encode's own output decodes (so a value has one spelling),
// and the value must be what Sanitize lets through (as every field of a scan's answer is).
std::optional<std::string> Decode(std::string_view s) {
  if (s == "-") return std::string();
  if (s.empty()) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x21 || c > 0x7e) return std::nullopt;
    if (c != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int hi = HexDigit(s[i + 1]), lo = HexDigit(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  if (out.size() > kMaxField || Encode(out) != s || Sanitize(out, kMaxField) != out) {
    return std::nullopt;
  }
  return out;
}

// A decimal without sign or leading zeros, within [0, max].
std::optional<int64_t> Count(std::string_view s, int64_t max) {
  if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > max) return std::nullopt;
  return v;
}

// A Unix time in seconds: an optional '-' and a decimal as Count, or "-" for none.
std::optional<std::optional<int64_t>> Date(std::string_view s) {
  if (s == "-") return std::optional<int64_t>();
  bool negative = !s.empty() && s[0] == '-';
  auto v = Count(negative ? s.substr(1) : s, INT64_C(999'999'999'999'999'999));
  if (!v || (negative && *v == 0)) return std::nullopt;
  return std::optional<int64_t>(negative ? -*v : *v);
}

std::string DateText(const std::optional<int64_t>& d) { return d ? std::to_string(*d) : "-"; }

// Splits `line` at single spaces into exactly n fields after `tag`; false otherwise.
bool Fields(std::string_view line, std::string_view tag, size_t n,
            std::vector<std::string_view>* out) {
  if (line.size() <= tag.size() || line.substr(0, tag.size()) != tag || line[tag.size()] != ' ') {
    return false;
  }
  out->clear();
  std::string_view rest = line.substr(tag.size() + 1);
  while (true) {
    size_t sp = rest.find(' ');
    out->push_back(rest.substr(0, sp));
    if (out->back().empty()) return false;
    if (sp == std::string_view::npos) break;
    rest = rest.substr(sp + 1);
  }
  return out->size() == n;
}

class Lines {
 public:
  explicit Lines(std::string_view text) : rest_(text) {}
  // The next '\n'-terminated line (a last line without '\n' is malformed).
  bool Next(std::string_view* line) {
    size_t nl = rest_.find('\n');
    if (nl == std::string_view::npos) return false;
    *line = rest_.substr(0, nl);
    rest_ = rest_.substr(nl + 1);
    return true;
  }
  bool AtEnd() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// ---- the file ----

// The cache directory, opened with O_NOFOLLOW, when it is a real
// directory owned by the effective user that no one else may write; -1 otherwise. Created
// (0700) on the host's own root only.
int OpenCacheDir(const RootFs& fs) {
  const std::string dir = fs.RootPath(kUpdatesCacheDir);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && fs.rootfs() == RootFs().rootfs()) {
    if (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) {
      fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  }
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 022) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::optional<std::string> ReadCache(int dir) {
  int fd = ::openat(dir, kUpdatesCacheFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 077) == 0 && st.st_size > 0 &&
      static_cast<uint64_t>(st.st_size) <= kMaxUpdatesCacheBytes) {
    std::string text(static_cast<size_t>(st.st_size) + 1, '\0');  // +1: sees a file that grew
    size_t got = 0;
    while (got < text.size()) {
      ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    if (got == static_cast<size_t>(st.st_size)) {
      text.resize(got);
      out = std::move(text);
    }
  }
  ::close(fd);
  return out;
}

bool WriteCache(int dir, const std::string& text) {
  ReplaceFileOptions replace;
  replace.tmp_suffix = ".tmp." + std::to_string(::getpid());  // two processes may refresh it
  return ReplaceFileContents(dir, kUpdatesCacheFile, text, replace).ok();
}

}  // namespace

std::string SerializeUpdatesCache(std::string_view identity, const UpdateFacts& f) {
  std::string out(kHeader);
  out += "\n";
  Lines in(identity);
  std::string_view line;
  while (in.Next(&line)) out += "in " + std::string(line) + "\n";
  out += "manager " + Encode(f.manager) + "\n";
  out += "method " + Encode(f.method) + "\n";
  out += std::string("checked ") + (f.checked ? "1" : "0") + "\n";
  out += "note " + Encode(f.note) + "\n";
  out += "security_lists " + std::to_string(f.security_lists) + "\n";
  out += "pending_count " + std::to_string(f.pending_count) + "\n";
  out += "lists_date " + DateText(f.lists_date_unix_s) + "\n";
  for (const PendingUpdate& p : f.pending) {
    out += "pending " + Encode(p.name) + " " + Encode(p.installed_version) + " " +
           Encode(p.candidate_version) + " " + Encode(p.suite) + " " +
           DateText(p.list_date_unix_s) + "\n";
  }
  out += "sum " + Hex16(Fnv1a64(out)) + "\n";
  return out;
}

std::optional<UpdateFacts> ParseUpdatesCache(std::string_view text, std::string_view identity) {
  // The checksum first: the last line is "sum <16 hex>" over everything before it.
  constexpr size_t kSumLine = 4 + 16 + 1;
  if (text.size() < kSumLine || text.back() != '\n') return std::nullopt;
  std::string_view body = text.substr(0, text.size() - kSumLine);
  if (text.substr(body.size()) != "sum " + Hex16(Fnv1a64(body)) + "\n") return std::nullopt;

  Lines lines(body);
  std::string_view line;
  if (!lines.Next(&line) || line != kHeader) return std::nullopt;
  Lines want(identity);
  std::string_view id;
  size_t identity_lines = 0;
  while (want.Next(&id)) {
    if (!lines.Next(&line) || line.size() != id.size() + 3 || line.substr(0, 3) != "in " ||
        line.substr(3) != id) {
      return std::nullopt;
    }
    ++identity_lines;
  }
  if (identity_lines == 0 || !want.AtEnd()) return std::nullopt;  // no (or a malformed) identity

  UpdateFacts f;
  std::vector<std::string_view> v;
  auto string_field = [&](std::string_view tag, std::string* out) {
    if (!lines.Next(&line) || !Fields(line, tag, 1, &v)) return false;
    auto s = Decode(v[0]);
    if (!s) return false;
    *out = std::move(*s);
    return true;
  };
  auto count_field = [&](std::string_view tag, int* out) {
    if (!lines.Next(&line) || !Fields(line, tag, 1, &v)) return false;
    auto n = Count(v[0], kMaxCount);
    if (!n) return false;
    *out = static_cast<int>(*n);
    return true;
  };
  if (!string_field("manager", &f.manager) || !string_field("method", &f.method)) {
    return std::nullopt;
  }
  if (!lines.Next(&line) || (line != "checked 0" && line != "checked 1")) return std::nullopt;
  f.checked = line == "checked 1";
  if (!string_field("note", &f.note) || !count_field("security_lists", &f.security_lists) ||
      !count_field("pending_count", &f.pending_count)) {
    return std::nullopt;
  }
  if (!lines.Next(&line) || !Fields(line, "lists_date", 1, &v)) return std::nullopt;
  auto lists_date = Date(v[0]);
  if (!lists_date) return std::nullopt;
  f.lists_date_unix_s = *lists_date;
  while (lines.Next(&line)) {
    if (!Fields(line, "pending", 5, &v)) return std::nullopt;
    PendingUpdate p;
    auto name = Decode(v[0]), installed = Decode(v[1]), candidate = Decode(v[2]),
         suite = Decode(v[3]);
    auto date = Date(v[4]);
    if (!name || !installed || !candidate || !suite || !date || name->empty()) return std::nullopt;
    p.name = std::move(*name);
    p.installed_version = std::move(*installed);
    p.candidate_version = std::move(*candidate);
    p.suite = std::move(*suite);
    p.list_date_unix_s = *date;
    f.pending.push_back(std::move(p));
    if (f.pending.size() > kMaxPendingListed) return std::nullopt;
  }
  if (!lines.AtEnd()) return std::nullopt;
  // What a scan's answer always satisfies.
  if (static_cast<size_t>(f.pending_count) < f.pending.size() ||
      (f.pending.size() < kMaxPendingListed &&
       static_cast<size_t>(f.pending_count) != f.pending.size())) {
    return std::nullopt;
  }
  return f;
}

UpdateFacts ScanSecurityUpdatesCached(const RootFs& fs, TimePoint deadline, UpdatesCacheUse* use) {
  UpdatesCacheUse ignored;
  if (use == nullptr) use = &ignored;
  *use = UpdatesCacheUse::kOff;
  const std::string identity = UpdatesInputIdentity(fs);
  int dir = identity.empty() ? -1 : OpenCacheDir(fs);
  if (dir < 0) return ScanSecurityUpdates(fs, deadline);
  if (auto text = ReadCache(dir)) {
    if (auto cached = ParseUpdatesCache(*text, identity)) {
      ::close(dir);
      *use = UpdatesCacheUse::kHit;
      return std::move(*cached);
    }
  }
  UpdateFacts facts = ScanSecurityUpdates(fs, deadline);
  *use = UpdatesCacheUse::kMissed;
  // Only a complete answer, and only when no input changed while it was read (the identity
  // taken before the scan must still hold after it).
  if (facts.checked && facts.note.empty() && SteadyClock::now() < deadline &&
      UpdatesInputIdentity(fs) == identity &&
      WriteCache(dir, SerializeUpdatesCache(identity, facts))) {
    *use = UpdatesCacheUse::kStored;
  }
  ::close(dir);
  return facts;
}

}  // namespace gpudoctor
