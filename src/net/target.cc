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

namespace {

// host, "host:port" or "[v6]:port" (also a URL's authority) into t; `spec` names the entry in
// errors. A port makes the target TCP unless it is a URL.
Status ParseHostPort(std::string_view spec, std::string_view text, bool url, Target& t) {
  std::string_view host = text;
  std::optional<std::string_view> port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return Bad(spec, "missing ']' after IPv6 address");
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Bad(spec, "expected ':port' after ']'");
      port_text = rest.substr(1);
    }
    if (!IsIpv6Literal(std::string(host))) return Bad(spec, "malformed IPv6 address");
  } else {
    size_t colons = std::count(text.begin(), text.end(), ':');
    if (colons == 1) {
      size_t c = text.find(':');
      host = text.substr(0, c);
      port_text = text.substr(c + 1);
    } else if (colons > 1) {
      if (url) return Bad(spec, "write an IPv6 address in a URL in brackets: http://[addr]/");
      if (!IsIpv6Literal(std::string(text))) {
        return Bad(spec, "malformed IPv6 address (write [addr]:port for a port)");
      }
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
    if (!url) t.method = ProbeMethod::kTcp;
  }
  if (t.host.empty()) return Bad(spec, "empty host");
  if (IsIpv4Literal(t.host) || IsIpv6Literal(t.host)) {
    t.numeric = true;
  } else if (t.host.find(':') != std::string::npos) {
    return Bad(spec, "malformed IPv6 address");
  } else if (std::string why = HostNameProblem(t.host); !why.empty()) {
    return Bad(spec, why);
  }
  return Status::Ok();
}

// "scheme://" prefix, case-insensitive; npos when the entry is not a URL.
size_t SchemeEnd(std::string_view spec) {
  size_t sep = spec.find("://");
  if (sep == std::string_view::npos || sep == 0 || sep > 10) return std::string_view::npos;
  for (char c : spec.substr(0, sep)) {
    if (!std::isalpha(static_cast<unsigned char>(c))) return std::string_view::npos;
  }
  return sep;
}

constexpr size_t kMaxPathChars = 2048;

Result<Target> ParseUrl(std::string_view spec, size_t scheme_end) {
  Target t;
  t.spec = std::string(spec);
  std::string scheme(spec.substr(0, scheme_end));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme == "http") {
    t.method = ProbeMethod::kHttp;
  } else if (scheme == "https") {
    t.method = ProbeMethod::kHttps;
  } else {
    return Bad(spec, "unsupported scheme '" + Sanitize(scheme, 12) + "' (http or https)");
  }
  std::string_view rest = spec.substr(scheme_end + 3);
  size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view path =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) {
    return Bad(spec, "user:password@ in a URL is not supported");
  }
  if (authority.empty()) return Bad(spec, "empty host");
  if (Status st = ParseHostPort(spec, authority, /*url=*/true, t); !st.ok()) return st;
  if (!t.port) t.port = t.method == ProbeMethod::kHttps ? 443 : 80;
  if (path.find('#') != std::string_view::npos) {
    return Bad(spec, "a #fragment is never sent to the server: remove it");
  }
  if (path.size() > kMaxPathChars) return Bad(spec, "path longer than 2048 characters");
  for (char c : path) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return Bad(spec, "path has a space or a character that is not visible ASCII (%-encode it)");
    }
  }
  t.path = path.empty() ? "/" : path.front() == '?' ? "/" + std::string(path) : std::string(path);
  return t;
}

}  // namespace

std::string Target::Url() const {
  if (!IsUrl()) return "";
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return std::string(method == ProbeMethod::kHttps ? "https" : "http") + "://" + h + ":" +
         std::to_string(port.value_or(method == ProbeMethod::kHttps ? 443 : 80)) + path;
}

Result<Target> ParseTarget(std::string_view spec_in) {
  std::string_view spec = Trim(spec_in);
  if (spec.empty()) return Bad(spec_in, "empty entry");
  if (size_t scheme_end = SchemeEnd(spec); scheme_end != std::string_view::npos) {
    return ParseUrl(spec, scheme_end);
  }
  if (spec.find('/') != std::string_view::npos) {
    return Bad(spec, "'/' in a host (a URL needs http:// or https://)");
  }
  Target t;
  t.spec = std::string(spec);
  if (Status st = ParseHostPort(spec, spec, /*url=*/false, t); !st.ok()) return st;
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

std::string Target::DisplayName() const {
  size_t q = spec.find('?');
  if (!IsUrl() || q == std::string::npos) return spec;
  static constexpr std::string_view kSecretParts[] = {"token", "key",  "secret",  "sig",
                                                      "pass",  "auth", "session", "credential"};
  std::string out = spec.substr(0, q + 1);
  std::string_view query = std::string_view(spec).substr(q + 1);
  bool first = true;
  while (true) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    if (!first) out += '&';
    first = false;
    size_t eq = pair.find('=');
    std::string name(pair.substr(0, eq));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool secret = eq != std::string_view::npos &&
                  std::any_of(std::begin(kSecretParts), std::end(kSecretParts),
                              [&](std::string_view part) { return name.find(part) != name.npos; });
    if (secret) {
      out.append(pair.substr(0, eq + 1));
      out += "<redacted>";
    } else {
      out.append(pair);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

}  // namespace gpudoctor
