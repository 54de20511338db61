#include "core/notify_target.h"

#include <unistd.h>

#include <cctype>

#include "core/root_fs.h"

namespace gpudoctor {

std::string HttpUrlProblem(std::string_view url) {
  if (url.size() > 2048) return "longer than 2048 bytes";
  for (char c : url) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return "has whitespace or control characters";
  }
  std::string_view rest;
  if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else if (url.rfind("https://", 0) == 0) {
    rest = url.substr(8);
  } else {
    return "must be an http:// or https:// URL";
  }
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  std::string_view host = authority, port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return "has an unterminated [IPv6] host";
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return "has characters after the [IPv6] host";
      port = after.substr(1);
      if (port.empty()) return "has an empty port";
    }
    if (host.size() <= 2) return "has no host";
  } else {
    if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      if (port.empty()) return "has an empty port";
    }
    if (host.empty()) return "has no host";
    for (char c : host) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) {
        return "has an invalid host";
      }
    }
  }
  if (!port.empty()) {
    if (port.size() > 5) return "has a port outside 1-65535";
    int p = 0;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return "has a port that is not a number";
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return "has a port outside 1-65535";
  }
  return "";
}

std::string AlertmanagerUrlProblem(std::string_view url) {
  if (std::string p = HttpUrlProblem(url); !p.empty()) return p;
  std::string_view rest = url.substr(url.find("://") + 3);
  size_t slash = rest.find('/');
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (path.find("/api/") != std::string_view::npos ||
      (path.size() >= 4 && path.substr(path.size() - 4) == "/api")) {
    return "names the API path; give the base URL (e.g. http://host:9093), gpudoctor appends "
           "/api/v2/alerts";
  }
  if (url.find_first_of("?#") != std::string_view::npos) return "must not have a query";
  return "";
}

std::string ExecProgramProblem(const std::string& path) {
  if (path.empty() || path[0] != '/') return "must be an absolute path (no shell, no PATH search)";
  auto info = RootFs::Stat(path);
  if (!info.ok()) return "cannot be used: " + info.status().message();
  if (info->is_dir) return "is a directory";
  if (!info->is_regular) return "is not a regular file";
  if (::access(path.c_str(), X_OK) != 0) return "is not executable";
  return "";
}

std::string ExecArgvProblem(const std::vector<std::string>& argv) {
  if (argv.empty()) return "is empty";
  if (std::string p = ExecProgramProblem(argv[0]); !p.empty())
    return "program " + argv[0] + " " + p;
  bool after_dashes = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--") after_dashes = true;
    if (after_dashes) continue;
    for (std::string_view p :
         {"{key}", "{uuid}", "{pci_bus_id}", "{serial}", "{summary}", "{hostname}"}) {
      if (argv[i].rfind(p, 0) == 0) {
        return "argument " + std::to_string(i) + " starts with " + std::string(p) +
               ", a value from the device that could read as an option: put it after \"--\" "
               "or read it from the environment (GPUDOCTOR_*)";
      }
    }
  }
  return "";
}

}  // namespace gpudoctor
