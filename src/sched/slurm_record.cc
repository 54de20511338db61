#include "sched/slurm_record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/replace_file.h"
#include "core/root_fs.h"
#include "core/strings.h"

namespace gpudoctor {
namespace {

constexpr std::string_view kHeader = "gpudoctor-slurm-drain 1";

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

}  // namespace

std::string SlurmDrainRecordPath(const std::string& state_dir, const std::string& node) {
  std::string safe = node;
  for (char& c : safe) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (safe.empty() || safe == "." || safe == "..") safe = "_" + safe;
  std::string dir = state_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return (dir == "/" ? "" : dir) + "/slurm-drain-" + safe + ".txt";
}

std::string FormatSlurmDrainRecord(const SlurmDrainRecord& r) {
  return std::string(kHeader) + "\nnode=" + OneLine(r.node) + "\nreason=" + OneLine(r.reason) +
         "\ndrained_at=" + std::to_string(r.drained_at_unix_s) + "\n";
}

Result<SlurmDrainRecord> ParseSlurmDrainRecord(std::string_view text) {
  if (text.size() > kMaxSlurmRecordBytes) {
    return ParseError("larger than " + std::to_string(kMaxSlurmRecordBytes) + " bytes");
  }
  SlurmDrainRecord r;
  bool have_node = false, have_reason = false, have_at = false;
  int line_no = 0;
  size_t from = 0;
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    if (nl == std::string_view::npos) {
      return ParseError("line " + std::to_string(line_no + 1) +
                        ": no newline at the end (a truncated write)");
    }
    std::string_view line = text.substr(from, nl - from);
    from = nl + 1;
    ++line_no;
    if (line_no == 1) {
      if (line != kHeader) {
        return ParseError("line 1: expected '" + std::string(kHeader) + "', got '" +
                          Sanitize(line, 60) + "'");
      }
      continue;
    }
    size_t eq = line.find('=');
    std::string_view key = line.substr(0, eq == std::string_view::npos ? line.size() : eq);
    std::string_view value = eq == std::string_view::npos ? "" : line.substr(eq + 1);
    auto once = [&](bool& seen) -> Status {
      if (eq == std::string_view::npos) {
        return ParseError("line " + std::to_string(line_no) + ": expected KEY=VALUE");
      }
      if (seen) {
        return ParseError("line " + std::to_string(line_no) + ": '" + std::string(key) +
                          "' given twice");
      }
      seen = true;
      return Status::Ok();
    };
    if (key == "node") {
      if (Status s = once(have_node); !s.ok()) return s;
      r.node = std::string(value);
    } else if (key == "reason") {
      if (Status s = once(have_reason); !s.ok()) return s;
      r.reason = std::string(value);
    } else if (key == "drained_at") {
      if (Status s = once(have_at); !s.ok()) return s;
      auto n = ParseInt64(value);
      if (!n || *n < 0) {
        return ParseError("line " + std::to_string(line_no) +
                          ": drained_at is not unix seconds: '" + Sanitize(value, 40) + "'");
      }
      r.drained_at_unix_s = *n;
    } else {
      return ParseError("line " + std::to_string(line_no) + ": unknown field '" +
                        Sanitize(key, 40) + "'");
    }
  }
  if (line_no == 0) return ParseError("empty");
  if (!have_node || r.node.empty()) return ParseError("no node= line");
  if (!have_reason || r.reason.empty()) return ParseError("no reason= line");
  if (!have_at) return ParseError("no drained_at= line");
  return r;
}

Status WriteSlurmDrainRecord(const std::string& state_dir, const SlurmDrainRecord& record) {
  if (::mkdir(state_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return StatusFromErrno(errno, "create state directory " + state_dir);
  }
  std::string path = SlurmDrainRecordPath(state_dir, record.node);
  ReplaceFileOptions replace;
  replace.mode = 0644;
  replace.sync_data = true;
  replace.sync_directory = true;  // the record must outlive a crash right after the drain
  return ReplaceFileContents(AT_FDCWD, path, FormatSlurmDrainRecord(record), replace);
}

Result<SlurmDrainRecord> ReadSlurmDrainRecord(const std::string& state_dir,
                                              const std::string& node) {
  std::string path = SlurmDrainRecordPath(state_dir, node);
  auto text = RootFs::ReadFile(path, kMaxSlurmRecordBytes + 1);
  if (!text.ok()) return text.status();
  auto r = ParseSlurmDrainRecord(*text);
  if (!r.ok()) return ParseError(path + ": " + r.status().message());
  return r;
}

Status RemoveSlurmDrainRecord(const std::string& state_dir, const std::string& node) {
  std::string path = SlurmDrainRecordPath(state_dir, node);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return StatusFromErrno(errno, "remove " + path);
  return Status::Ok();
}

}  // namespace gpudoctor
