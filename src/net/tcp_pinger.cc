#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>

#include "core/deadline.h"
#include "net/pinger.h"

namespace gpudoctor {
namespace {

double MsBetween(TimePoint a, TimePoint b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Attempt {
  int fd = -1;
  int index = 0;
  TimePoint start;
};

void CloseWithReset(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd);
}

}  // namespace

PingResult TcpPing(const ResolvedAddress& addr_in, uint16_t port, const PingOptions& opts) {
  PingResult result;
  result.method = "tcp";
  ResolvedAddress addr = addr_in;
  if (addr.family() == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&addr.addr)->sin_port = htons(port);
  } else if (addr.family() == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&addr.addr)->sin6_port = htons(port);
  } else {
    result.last_error = "unsupported address family";
    return result;
  }
  const int count = std::max(opts.count, 0);
  std::vector<std::optional<double>> rtts(count);
  std::vector<Attempt> pending;
  const TimePoint t0 = SteadyClock::now();
  int next = 0;
  int finished = 0;  // attempts that got an answer: SYN-ACK, RST or an error
  int answered = 0;  // attempts answered in time with a SYN-ACK or an RST
  std::optional<TimePoint> first_sent;

  auto finish = [&](const Attempt& a, int err, TimePoint now) {
    ++finished;
    if (err == 0 || err == ECONNREFUSED) {
      rtts[a.index] = MsBetween(a.start, now);
      ++answered;
      if (err == ECONNREFUSED) result.port_closed = true;
    } else {
      result.last_error = std::strerror(err);
    }
    CloseWithReset(a.fd);
  };

  // Silent since the first attempt for opts.give_up_silent: no more attempts, no more waiting.
  auto give_up_at = [&]() -> TimePoint {
    if (opts.give_up_silent.count() <= 0 || finished > 0 || !first_sent) return TimePoint::max();
    return *first_sent + opts.give_up_silent;
  };
  while (next < count || !pending.empty()) {
    TimePoint now = SteadyClock::now();
    if (now >= give_up_at()) {
      for (const auto& a : pending) CloseWithReset(a.fd);
      pending.clear();
      result.gave_up_silent = true;
      break;
    }
    if (next < count && now >= t0 + next * opts.interval) {
      // A clean series (every attempt so far answered in time) ends at opts.clean_after.
      if (opts.clean_after > 0 && next >= opts.clean_after && pending.empty() &&
          answered == result.sent) {
        result.stopped_clean = true;
        break;
      }
      // Silent so far from opts.quiet_after on: this slot passes unsent (listen, do not send).
      if (opts.quiet_after > 0 && next >= opts.quiet_after && finished == 0) {
        ++next;
        continue;
      }
      Attempt a{-1, next++, now};
      a.fd = ::socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (a.fd < 0) {
        result.last_error = std::string("socket: ") + std::strerror(errno);
        continue;
      }
      ++result.sent;
      a.start = SteadyClock::now();
      if (!first_sent) first_sent = a.start;
      int rc = ::connect(a.fd, reinterpret_cast<const sockaddr*>(&addr.addr), addr.len);
      if (rc == 0) {
        finish(a, 0, SteadyClock::now());
      } else if (errno == EINPROGRESS) {
        pending.push_back(a);
      } else {
        finish(a, errno, SteadyClock::now());
      }
      continue;
    }
    // Wait until the next send, the earliest attempt deadline, or a socket becoming ready.
    TimePoint wake = TimePoint::max();
    if (next < count) wake = t0 + next * opts.interval;
    for (const auto& a : pending) wake = std::min(wake, a.start + opts.timeout);
    wake = std::min(wake, give_up_at());
    int wait_ms = static_cast<int>(
        std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(wake - now).count()));
    std::vector<pollfd> fds;
    for (const auto& a : pending) fds.push_back({a.fd, POLLOUT, 0});
    int n = fds.empty() ? (std::this_thread::sleep_for(wake - now), 0)
                        : ::poll(fds.data(), fds.size(), wait_ms);
    now = SteadyClock::now();
    std::vector<Attempt> still;
    for (size_t i = 0; i < pending.size(); ++i) {
      const Attempt& a = pending[i];
      if (n > 0 && fds[i].revents != 0) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(a.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        finish(a, err, now);
      } else if (now >= a.start + opts.timeout) {
        CloseWithReset(a.fd);  // no answer within the timeout: lost
      } else {
        still.push_back(a);
      }
    }
    pending.swap(still);
  }
  for (const auto& r : rtts) {
    if (r) result.rtts_ms.push_back(*r);
  }
  return result;
}

}  // namespace gpudoctor
