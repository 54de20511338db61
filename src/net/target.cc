#include "net/target.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/deadline.h"
#include "core/strings.h"

namespace gpudoctor {
namespace {

Status Bad(std::string_view spec, const std::string& why) {
  return InvalidArgument("target '" + Sanitize(spec, 200) + "': " + why);
}

bool IsIpv4Literal(const std::string& h) {
  in_addr a{};
  return inet_pton(AF_INET, h.c_str(), &a) == 1;
}
bool IsIpv6Literal(const std::string& h) {
  in6_addr a{};
  return inet_pton(AF_INET6, h.c_str(), &a) == 1;
}

// RFC 1123 host name; '_' tolerated (common in internal DNS). Returns an error text or "".
std::string HostNameProblem(std::string_view h) {
  if (h.empty()) return "empty host";
  if (h.back() == '.') h.remove_suffix(1);
  if (h.empty()) return "empty host";
  if (h.size() > 253) return "host name longer than 253 characters";
  bool all_numeric = true;
  for (std::string_view label : Split(h, ".", /*skip_empty=*/false)) {
    if (label.empty()) return "empty label in host name";
    if (label.size() > 63) return "host name label longer than 63 characters";
    if (label.front() == '-' || label.back() == '-')
      return "host name label starts or ends with '-'";
    for (char c : label) {
      auto u = static_cast<unsigned char>(c);
      if (!std::isalnum(u) && c != '-' && c != '_') {
        return std::string("invalid character '") + (std::isprint(u) ? std::string(1, c) : "?") +
               "' in host name";
      }
      if (!std::isdigit(u)) all_numeric = false;
    }
  }
  if (all_numeric) return "malformed IPv4 address";
  return "";
}

}  // namespace

Result<Target> ParseTarget(std::string_view spec_in) {
  std::string_view spec = Trim(spec_in);
  if (spec.empty()) return Bad(spec_in, "empty entry");
  Target t;
  t.spec = std::string(spec);
  std::string_view host = spec;
  std::optional<std::string_view> port_text;
  if (spec.front() == '[') {
    size_t close = spec.find(']');
    if (close == std::string_view::npos) return Bad(spec, "missing ']' after IPv6 address");
    host = spec.substr(1, close - 1);
    std::string_view rest = spec.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Bad(spec, "expected ':port' after ']'");
      port_text = rest.substr(1);
    }
    if (!IsIpv6Literal(std::string(host))) return Bad(spec, "malformed IPv6 address");
  } else {
    size_t colons = std::count(spec.begin(), spec.end(), ':');
    if (colons == 1) {
      size_t c = spec.find(':');
      host = spec.substr(0, c);
      port_text = spec.substr(c + 1);
    } else if (colons > 1 && !IsIpv6Literal(std::string(spec))) {
      return Bad(spec, "malformed IPv6 address (write [addr]:port for a port)");
    }
  }
  t.host = std::string(host);
  if (port_text) {
    if (port_text->empty()) return Bad(spec, "empty port");
    bool digits = std::all_of(port_text->begin(), port_text->end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) return Bad(spec, "port '" + Sanitize(*port_text, 20) + "' is not a number");
    auto port = port_text->size() <= 6 ? ParseInt64(*port_text) : std::nullopt;
    if (!port || *port < 1 || *port > 65535) {
      return Bad(spec, "port " + Sanitize(*port_text, 20) + " out of range 1..65535");
    }
    t.port = static_cast<uint16_t>(*port);
    t.method = ProbeMethod::kTcp;
  }
  if (t.host.empty()) return Bad(spec, "empty host");
  if (IsIpv4Literal(t.host) || IsIpv6Literal(t.host)) {
    t.numeric = true;
  } else if (t.host.find(':') != std::string::npos) {
    return Bad(spec, "malformed IPv6 address");
  } else if (std::string why = HostNameProblem(t.host); !why.empty()) {
    return Bad(spec, why);
  }
  return t;
}

Result<std::vector<Target>> ParseTargets(const std::vector<std::string>& specs) {
  std::vector<Target> out;
  for (const auto& s : specs) {
    auto t = ParseTarget(s);
    if (!t.ok()) return t.status();
    out.push_back(std::move(*t));
  }
  return out;
}

std::string AddressToString(const ResolvedAddress& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.family() == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&a.addr);
    inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
  } else if (a.family() == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&a.addr);
    inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof buf);
  }
  return buf;
}

Result<ResolvedAddress> ResolveTarget(const Target& target, std::chrono::milliseconds timeout) {
  std::string host = target.host;
  bool numeric = target.numeric;
  auto work = [host, numeric]() -> Result<ResolvedAddress> {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = numeric ? AI_NUMERICHOST : AI_ADDRCONFIG;
    addrinfo* res = nullptr;
    int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
    if (rc != 0) {
      std::string why = rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc);
      if (rc == EAI_NONAME || rc == EAI_NODATA || rc == EAI_FAIL) {
        return NotFound("cannot resolve '" + host + "': " + why);
      }
      return IoError("cannot resolve '" + host + "': " + why);
    }
    const addrinfo* pick = nullptr;
    for (const addrinfo* p = res; p != nullptr; p = p->ai_next) {
      if (p->ai_family == AF_INET) {
        pick = p;
        break;
      }
      if (pick == nullptr && p->ai_family == AF_INET6) pick = p;
    }
    if (pick == nullptr || pick->ai_addrlen > sizeof(sockaddr_storage)) {
      freeaddrinfo(res);
      return NotFound("cannot resolve '" + host + "': no IPv4 or IPv6 address");
    }
    ResolvedAddress out;
    std::memcpy(&out.addr, pick->ai_addr, pick->ai_addrlen);
    out.len = pick->ai_addrlen;
    freeaddrinfo(res);
    return out;
  };
  if (numeric) return work();
  auto done = RunWithDeadline(work, SteadyClock::now() + timeout);
  if (!done) {
    return TimeoutError("cannot resolve '" + host + "': no answer within " +
                        std::to_string(timeout.count()) + " ms");
  }
  return std::move(*done);
}

}  // namespace gpudoctor
