#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <random>

#include "core/deadline.h"
#include "net/icmp_packet.h"
#include "net/pinger.h"

namespace gpudoctor {
namespace {

double MsBetween(TimePoint a, TimePoint b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct IcmpSocket {
  int fd = -1;
  bool raw = false;
};

IcmpSocket OpenIcmpSocket(int family) {
  int proto = family == AF_INET ? static_cast<int>(IPPROTO_ICMP) : static_cast<int>(IPPROTO_ICMPV6);
  int fd = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  if (fd >= 0) return {fd, false};
  fd = ::socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  if (fd >= 0) return {fd, true};
  return {};
}

uint16_t NextIdentifier() {
  static std::atomic<uint32_t> counter{0};
  return static_cast<uint16_t>((::getpid() * 131u) ^ (counter.fetch_add(1) * 2654435761u));
}

}  // namespace

Result<PingResult> IcmpPing(const ResolvedAddress& addr, const PingOptions& opts) {
  const int family = addr.family();
  if (family != AF_INET && family != AF_INET6) return InvalidArgument("unsupported address family");
  IcmpSocket sock = OpenIcmpSocket(family);
  if (sock.fd < 0) {
    return Unsupported(std::string("no ICMP socket (datagram or raw): ") + std::strerror(errno));
  }
  PingResult result;
  result.method = sock.raw ? "icmp-raw" : "icmp-dgram";
  const uint16_t ident = NextIdentifier();
  std::random_device rd;
  const uint64_t nonce = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  const int count = std::max(opts.count, 0);
  std::vector<std::optional<TimePoint>> sent_at(count);
  std::vector<std::optional<double>> rtts(count);
  int answered = 0;
  const TimePoint t0 = SteadyClock::now();
  int next = 0;
  TimePoint last_deadline = t0;

  while (true) {
    TimePoint now = SteadyClock::now();
    if (next < count && now >= t0 + next * opts.interval) {
      EchoRequest req{family == AF_INET6, ident, static_cast<uint16_t>(next), nonce};
      std::string packet = BuildEchoRequest(req);
      ssize_t n = ::sendto(sock.fd, packet.data(), packet.size(), 0,
                           reinterpret_cast<const sockaddr*>(&addr.addr), addr.len);
      TimePoint at = SteadyClock::now();
      ++result.sent;
      if (n == static_cast<ssize_t>(packet.size())) {
        sent_at[next] = at;
      } else {
        result.last_error = std::string("sendto: ") + std::strerror(errno);
      }
      last_deadline = at + opts.timeout;
      ++next;
      continue;
    }
    if (next >= count && (answered == count || now >= last_deadline)) break;
    TimePoint wake = next < count ? t0 + next * opts.interval : last_deadline;
    int wait_ms = static_cast<int>(
        std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(wake - now).count()));
    pollfd pfd{sock.fd, POLLIN, 0};
    if (::poll(&pfd, 1, wait_ms) <= 0) continue;
    char buf[2048];
    while (true) {
      sockaddr_storage from{};
      socklen_t from_len = sizeof from;
      ssize_t n =
          ::recvfrom(sock.fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 0) break;
      TimePoint at = SteadyClock::now();
      ResolvedAddress src;
      src.addr = from;
      src.len = from_len;
      if (AddressToString(src) != AddressToString(addr)) continue;
      // IPv4 raw sockets deliver the IP header too; ICMPv6 and datagram sockets do not.
      bool has_ip_header = sock.raw && family == AF_INET;
      auto reply = ParseEchoReply(std::string_view(buf, n), family == AF_INET6, has_ip_header);
      if (!reply || reply->nonce != nonce) continue;
      if (sock.raw && reply->ident != ident) continue;
      int seq = reply->seq;
      if (seq >= count || !sent_at[seq] || rtts[seq]) continue;
      if (at - *sent_at[seq] > opts.timeout) continue;  // too late: counted as lost
      rtts[seq] = MsBetween(*sent_at[seq], at);
      ++answered;
    }
  }
  ::close(sock.fd);
  for (const auto& r : rtts) {
    if (r) result.rtts_ms.push_back(*r);
  }
  return result;
}

}  // namespace gpudoctor
