#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
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

// From <linux/icmp.h>, which cannot be included beside <netinet/ip_icmp.h>: raw IPv4 ICMP
// sockets drop the types whose bit is set.
constexpr int kIcmpFilterOpt = 1;  // ICMP_FILTER
constexpr uint32_t kIcmpEchoReplyType = 0;
// Wanted receive buffer: about 8000 replies in flight (200 hosts x 40 probes) at ~1 KiB of
// kernel memory each.
constexpr int kWantedRcvBuf = 8 << 20;

double MsBetween(TimePoint a, TimePoint b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double MsBetween(const timespec& a, const timespec& b) {
  return static_cast<double>(b.tv_sec - a.tv_sec) * 1e3 +
         static_cast<double>(b.tv_nsec - a.tv_nsec) / 1e6;
}

struct IcmpSocket {
  int fd = -1;
  bool raw = false;
  int family = AF_UNSPEC;
  int error = 0;  // errno when no socket could be opened
};

void Tune(IcmpSocket& s) {
  int size = kWantedRcvBuf;
  if (setsockopt(s.fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0) {
    setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);  // capped at rmem_max
  }
  int on = 1;
  setsockopt(s.fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  if (!s.raw) return;
  if (s.family == AF_INET) {
    uint32_t filter = ~(1u << kIcmpEchoReplyType);
    setsockopt(s.fd, SOL_RAW, kIcmpFilterOpt, &filter, sizeof filter);
  } else {
    icmp6_filter filter;
    ICMP6_FILTER_SETBLOCKALL(&filter);
    ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
    setsockopt(s.fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter);
  }
}

IcmpSocket OpenIcmpSocket(int family) {
  int proto = family == AF_INET ? static_cast<int>(IPPROTO_ICMP) : static_cast<int>(IPPROTO_ICMPV6);
  IcmpSocket s;
  s.family = family;
  s.fd = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  if (s.fd < 0) {
    s.fd = ::socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
    s.raw = s.fd >= 0;
  }
  if (s.fd < 0) {
    s.error = errno;
    return s;
  }
  Tune(s);
  return s;
}

uint16_t NextIdentifier() {
  static std::atomic<uint32_t> counter{0};
  return static_cast<uint16_t>((::getpid() * 131u) ^ (counter.fetch_add(1) * 2654435761u));
}

bool SameAddress(const sockaddr_storage& from, const ResolvedAddress& want) {
  if (from.ss_family != want.family()) return false;
  if (from.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(from).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in&>(want.addr).sin_addr.s_addr;
  }
  return std::memcmp(&reinterpret_cast<const sockaddr_in6&>(from).sin6_addr,
                     &reinterpret_cast<const sockaddr_in6&>(want.addr).sin6_addr,
                     sizeof(in6_addr)) == 0;
}

struct Sent {
  TimePoint steady;
  timespec real{};  // CLOCK_REALTIME, the clock of SO_TIMESTAMPNS
};

struct Series {
  const ResolvedAddress* addr = nullptr;
  IcmpSocket* sock = nullptr;  // nullptr: no socket for this family
  std::vector<std::optional<Sent>> sent;
  std::vector<std::optional<double>> rtts;
  PingResult result;
  int in_flight = 0;  // sent and counted in `expected`, not answered yet
  int answered = 0;
  std::optional<TimePoint> first_sent;
  TimePoint last_deadline{};   // its last probe's send time + timeout
  bool may_cut_short = false;  // opts.give_up_silent, clean_after, quiet_after apply to it
  std::optional<TimePoint> first_answer_at;  // when its first in-time reply arrived

  // Given up for silence or stopped clean: nothing more is sent or waited for.
  bool Ended() const { return result.gave_up_silent || result.stopped_clean; }

  // Probe k, due at `due`, is passed over unsent: from probe quiet_after on, until a reply
  // arrived (at or before `due`).
  bool QuietAt(const PingOptions& opts, int k, TimePoint due) const {
    return may_cut_short && opts.quiet_after > 0 && k >= opts.quiet_after &&
           (!first_answer_at || *first_answer_at > due);
  }

  // When this series is to be given up for silence (`limit` after its first probe), while it may
  // be: allowed, not given up yet, started, nothing answered. nullopt otherwise.
  std::optional<TimePoint> GiveUpAt(std::chrono::milliseconds limit) const {
    if (limit.count() <= 0 || !may_cut_short || Ended() || answered > 0 || !first_sent) {
      return std::nullopt;
    }
    return *first_sent + limit;
  }
};

}  // namespace

std::vector<Result<PingResult>> IcmpPingMany(const std::vector<ResolvedAddress>& addrs,
                                             const PingOptions& opts,
                                             const std::vector<bool>& may_cut_short) {
  const size_t n = addrs.size();
  const int count = std::max(opts.count, 0);
  IcmpSocket v4, v6;
  bool want_v4 = false, want_v6 = false;
  for (const auto& a : addrs) {
    want_v4 |= a.family() == AF_INET;
    want_v6 |= a.family() == AF_INET6;
  }
  if (want_v4) v4 = OpenIcmpSocket(AF_INET);
  if (want_v6) v6 = OpenIcmpSocket(AF_INET6);

  std::random_device rd;
  const uint64_t nonce_base = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  const uint16_t ident = NextIdentifier();
  std::vector<Series> series(n);
  for (size_t i = 0; i < n; ++i) {
    Series& s = series[i];
    s.addr = &addrs[i];
    IcmpSocket* sock = addrs[i].family() == AF_INET    ? &v4
                       : addrs[i].family() == AF_INET6 ? &v6
                                                       : nullptr;
    if (sock != nullptr && sock->fd >= 0) s.sock = sock;
    s.sent.resize(count);
    s.rtts.resize(count);
    if (s.sock) s.result.method = s.sock->raw ? "icmp-raw" : "icmp-dgram";
    s.may_cut_short = may_cut_short.empty() || may_cut_short[i];
  }

  // Slot j: probe j / n of host j % n, due at t0 + k * interval + i * interval / n.
  const size_t slots = n * static_cast<size_t>(count);
  const TimePoint t0 = SteadyClock::now();
  const SteadyClock::duration interval = opts.interval;
  auto due = [&](size_t j) -> TimePoint {
    auto k = static_cast<int64_t>(j / n), i = static_cast<int64_t>(j % n);
    return t0 + k * interval + interval * i / static_cast<int64_t>(n);
  };
  size_t next = 0;
  size_t expected = 0, answered = 0;
  size_t kernel_answered = 0;  // replies timed by the kernel's receive stamp
  // A silent series past opts.give_up_silent: no more sends, no more waiting for it.
  auto give_up_silent = [&](TimePoint now) {
    for (Series& s : series) {
      std::optional<TimePoint> at = s.GiveUpAt(opts.give_up_silent);
      if (!at || now < *at) continue;
      s.result.gave_up_silent = true;
      expected -= s.in_flight;
      s.in_flight = 0;
    }
  };
  // When the series still listened to have all their probes answered or timed out.
  auto last_deadline = [&] {
    TimePoint last = t0;
    for (const Series& s : series) {
      if (!s.Ended()) last = std::max(last, s.last_deadline);
    }
    return last;
  };
  // The next moment a silent series may be given up (TimePoint::max(): none can be).
  auto next_give_up = [&] {
    TimePoint at = TimePoint::max();
    for (const Series& s : series) {
      if (auto t = s.GiveUpAt(opts.give_up_silent)) at = std::min(at, *t);
    }
    return at;
  };

  auto drain = [&](IcmpSocket& sock) {
    char buf[2048];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec)) + 64];
    while (true) {
      sockaddr_storage from{};
      iovec iov{buf, sizeof buf};
      msghdr msg{};
      msg.msg_name = &from;
      msg.msg_namelen = sizeof from;
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      ssize_t len = ::recvmsg(sock.fd, &msg, MSG_DONTWAIT);
      if (len < 0) break;
      TimePoint at = SteadyClock::now();
      std::optional<timespec> kernel_at;
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
          timespec ts;
          std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
          kernel_at = ts;
        }
      }
      // IPv4 raw sockets deliver the IP header too; ICMPv6 and datagram sockets do not.
      bool has_ip_header = sock.raw && sock.family == AF_INET;
      auto reply =
          ParseEchoReply(std::string_view(buf, len), sock.family == AF_INET6, has_ip_header);
      if (!reply) continue;
      uint64_t index = reply->nonce - nonce_base;
      if (index >= n) continue;  // another pinger's reply
      Series& s = series[index];
      if (s.sock != &sock || !SameAddress(from, *s.addr) || s.Ended()) continue;
      if (sock.raw && reply->ident != ident) continue;
      int seq = reply->seq;
      if (seq >= count || !s.sent[seq] || s.rtts[seq]) continue;  // unknown or duplicate
      double user_ms = MsBetween(s.sent[seq]->steady, at);
      double rtt = user_ms;
      bool kernel_rtt = false;
      if (kernel_at) {
        // The kernel stamped the reply before we read it, so its RTT is never longer than ours;
        // one that is (or is negative) means the wall clock stepped: keep ours.
        double k = MsBetween(s.sent[seq]->real, *kernel_at);
        if (k >= 0 && k <= user_ms + 0.01) {
          rtt = k;
          kernel_rtt = true;
        }
      }
      // Late (lost): the reply arrived after the timeout, by the kernel's stamp when there is
      // one (a reply read later than it arrived is judged by when it arrived).
      if (rtt > static_cast<double>(opts.timeout.count())) continue;
      if (kernel_rtt) {
        ++s.result.kernel_timestamps;
        ++kernel_answered;
      }
      s.rtts[seq] = rtt;
      const TimePoint arrived =
          s.sent[seq]->steady + std::chrono::duration_cast<SteadyClock::duration>(
                                    std::chrono::duration<double, std::milli>(rtt));
      if (!s.first_answer_at || arrived < *s.first_answer_at) s.first_answer_at = arrived;
      ++answered;
      ++s.answered;
      --s.in_flight;
    }
  };

  while (true) {
    TimePoint now = SteadyClock::now();
    give_up_silent(now);
    // An ended series' slots are passed over without waiting for them.
    while (next < slots && (due(next) <= now || series[next % n].Ended())) {
      const size_t index = next % n;
      const int k = static_cast<int>(next / n);
      ++next;
      Series& s = series[index];
      if (s.sock == nullptr || s.Ended()) continue;
      if (s.QuietAt(opts, k, due(next - 1))) continue;  // silent so far: listen, do not send
      if (s.may_cut_short && opts.clean_after > 0 && k >= opts.clean_after) {
        drain(*s.sock);  // replies may wait for the next send: read them before judging
        if (s.answered == s.result.sent) {
          s.result.stopped_clean = true;
          continue;
        }
      }
      EchoRequest req{s.addr->family() == AF_INET6, ident, static_cast<uint16_t>(k),
                      nonce_base + index};
      std::string packet = BuildEchoRequest(req);
      Sent at;
      clock_gettime(CLOCK_REALTIME, &at.real);
      at.steady = SteadyClock::now();
      ssize_t sent = ::sendto(s.sock->fd, packet.data(), packet.size(), 0,
                              reinterpret_cast<const sockaddr*>(&s.addr->addr), s.addr->len);
      ++s.result.sent;
      if (sent == static_cast<ssize_t>(packet.size())) {
        s.sent[k] = at;
        ++expected;
        ++s.in_flight;
      } else {
        s.result.last_error = std::string("sendto: ") + std::strerror(errno);
      }
      if (!s.first_sent) s.first_sent = at.steady;
      s.last_deadline = at.steady + opts.timeout;
      // Read replies between sends so that a long burst cannot fill the receive buffer.
      if (v4.fd >= 0) drain(v4);
      if (v6.fd >= 0) drain(v6);
      now = SteadyClock::now();
    }
    give_up_silent(now);
    // The next slot to wake for: one whose series may send (a quiet series' slots pass unsent
    // when due; its first reply, read by the ppoll below, lets its later slots send again).
    size_t wake_slot = next;
    while (wake_slot < slots) {
      const Series& w = series[wake_slot % n];
      const int k = static_cast<int>(wake_slot / n);
      if (!w.Ended() && w.sock != nullptr && !w.QuietAt(opts, k, due(wake_slot))) break;
      ++wake_slot;
    }
    // Done when nothing more will be sent (every slot left is a quiet series', which sends again
    // only after a reply) and nothing sent is still awaited.
    if (wake_slot >= slots && (answered == expected || now >= last_deadline())) break;
    TimePoint wake = std::min(wake_slot < slots ? due(wake_slot) : last_deadline(), next_give_up());
    auto wait = std::max(SteadyClock::duration::zero(), wake - now);
    int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    pollfd fds[2];
    nfds_t nfds = 0;
    if (v4.fd >= 0) fds[nfds++] = {v4.fd, POLLIN, 0};
    if (v6.fd >= 0) fds[nfds++] = {v6.fd, POLLIN, 0};
    if (nfds == 0) break;  // no socket for any family: nothing to send or wait for
    // While probes are still to be sent and every reply so far carried the kernel's receive
    // stamp (the RTT and the lateness come from the stamp, not from when the reply is read),
    // sleep until the next send and read the replies then (after every send, above), instead of
    // waking for each reply: half the wake-ups of a series (40 probes a check by default). The
    // first reply, and every reply once one lacked a usable stamp, are read as they come.
    if (next < slots && answered > 0 && kernel_answered == answered) {
      ::ppoll(nullptr, 0, &ts, nullptr);
      continue;
    }
    if (::ppoll(fds, nfds, &ts, nullptr) <= 0) continue;
    if (v4.fd >= 0) drain(v4);
    if (v6.fd >= 0) drain(v6);
  }
  if (v4.fd >= 0) ::close(v4.fd);
  if (v6.fd >= 0) ::close(v6.fd);

  std::vector<Result<PingResult>> out;
  out.reserve(n);
  for (auto& s : series) {
    if (s.addr->family() != AF_INET && s.addr->family() != AF_INET6) {
      out.push_back(InvalidArgument("unsupported address family"));
      continue;
    }
    if (s.sock == nullptr) {
      const IcmpSocket& failed = s.addr->family() == AF_INET ? v4 : v6;
      out.push_back(Unsupported(std::string("no ICMP socket (datagram or raw): ") +
                                std::strerror(failed.error)));
      continue;
    }
    for (const auto& r : s.rtts) {
      if (r) s.result.rtts_ms.push_back(*r);
    }
    out.push_back(std::move(s.result));
  }
  return out;
}

Result<PingResult> IcmpPing(const ResolvedAddress& addr, const PingOptions& opts) {
  return std::move(IcmpPingMany({addr}, opts).front());
}

}  // namespace gpudoctor
