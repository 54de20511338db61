#include "core/path_glob.h"

#include <fnmatch.h>

#include "core/strings.h"

namespace gpudoctor {
namespace {

bool HasMeta(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

std::string JoinHost(const std::string& dir, std::string_view name) {
  return dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
}

}  // namespace

Result<GlobResult> GlobUnderRoot(const RootFs& fs, std::string_view pattern, size_t max_entries,
                                 TimePoint deadline) {
  if (pattern.empty() || pattern.front() != '/') {
    return InvalidArgument("pattern must be an absolute path: " + Sanitize(pattern, 200));
  }
  std::vector<std::string_view> parts = Split(pattern, "/");
  for (std::string_view p : parts) {
    if (p == "..") return InvalidArgument("pattern must not contain '..': " + Sanitize(pattern));
  }
  GlobResult out;
  Status first_error = Status::Ok();
  std::vector<std::string> dirs = {"/"};
  bool all_components = true;  // dirs holds candidates for the whole pattern
  for (size_t i = 0; i < parts.size() && !dirs.empty(); ++i) {
    std::string_view part = parts[i];
    std::vector<std::string> next;
    for (const std::string& dir : dirs) {
      if (!HasMeta(part)) {
        next.push_back(JoinHost(dir, part));
        continue;
      }
      auto names = RootFs::ListDir(fs.RootPath(dir));
      if (!names.ok()) {
        if (names.status().code() != StatusCode::kNotFound && first_error.ok()) {
          first_error = names.status();
        }
        continue;
      }
      std::string pat(part);
      for (const std::string& name : *names) {
        if (++out.examined > max_entries || SteadyClock::now() >= deadline) {
          out.truncated = true;
          break;
        }
        if (::fnmatch(pat.c_str(), name.c_str(), FNM_PERIOD) == 0) {
          next.push_back(JoinHost(dir, name));
        }
      }
      if (out.truncated) break;
    }
    dirs = std::move(next);
    if (out.truncated) {
      // Cut in the last component: what it listed so far are real matches, keep them. Cut
      // earlier: dirs are directories on the way, not matches.
      all_components = i + 1 == parts.size();
      break;
    }
  }
  if (all_components) {
    for (const std::string& path : dirs) {
      if (SteadyClock::now() >= deadline) {
        out.truncated = true;
        break;
      }
      auto info = RootFs::Stat(fs.RootPath(path));
      if (!info.ok() || !(info->is_regular || info->is_dir)) continue;
      out.matches.push_back({path, *info});
    }
  }
  if (out.matches.empty() && !first_error.ok()) return first_error;
  return out;
}

}  // namespace gpudoctor
