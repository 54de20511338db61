// Test-only network environments for the network-layer tests:
//  - RunInFreshNetns: runs a function on a thread that has its own, new network namespace
//    (unshare(CLONE_NEWNET)), with loopback up. Sockets and threads created there stay inside.
//  - TunResponder: a TUN device "gdtun0" with 192.0.2.1/24 on our side, inside that namespace;
//    its thread answers ICMP echo requests and TCP SYNs (SYN-ACK, or RST for closed ports) for
//    192.0.2.x after a chosen delay (optionally alternating, for jitter) and with a chosen,
//    deterministic loss. The kernel here has no netem, so this is how latency, jitter and loss
//    are injected. Only 192.0.2.0/24 (RFC 5737).
// Header-only; needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and /dev/net/tun, else callers skip.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/worker_pool.h"
#include "net/icmp_packet.h"

namespace gpudoctor::testing {

inline bool SetIfUp(int sock, const char* name, std::string* why) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  if (ioctl(sock, SIOCGIFFLAGS, &ifr) != 0) {
    *why = std::string("SIOCGIFFLAGS ") + name + ": " + std::strerror(errno);
    return false;
  }
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(sock, SIOCSIFFLAGS, &ifr) != 0) {
    *why = std::string("SIOCSIFFLAGS ") + name + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

// Runs fn on a new thread in a new network namespace. False (with *why) when the machine does
// not allow it; fn is then not run. The deadline runner's workers (core/worker_pool.h) have the
// namespace of the thread that started them, so the pool is renewed before fn (fn's work must
// not run on a worker of the namespace outside) and after it (later work must not run in this
// one, which an idle worker would keep alive).
inline bool RunInFreshNetns(const std::function<void()>& fn, std::string* why) {
  bool ok = false;
  std::thread t([&] {
    if (unshare(CLONE_NEWNET) != 0) {
      *why = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
      return;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0 || !SetIfUp(s, "lo", why)) {
      if (s >= 0) close(s);
      return;
    }
    close(s);
    ok = true;
    RenewWorkerPool();
    fn();
    RenewWorkerPool();
  });
  t.join();
  return ok;
}

struct HostBehaviour {
  std::chrono::milliseconds delay{0};
  int loss_pct = 0;     // deterministic: the k-th request is dropped when the loss "ticks"
  bool silent = false;  // never answers
  std::vector<int> closed_ports;  // TCP SYN to these gets RST
  // Every other answer is delayed by this much more (delay, delay + alternate, ...): jitter.
  std::chrono::milliseconds alternate{0};
};

class TunResponder {
 public:
  // Must be called on a thread inside the namespace (see RunInFreshNetns).
  bool Start(std::string* why) {
    fd_ = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) {
      *why = std::string("open /dev/net/tun: ") + std::strerror(errno);
      return false;
    }
    ifreq ifr{};
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    std::strncpy(ifr.ifr_name, "gdtun0", IFNAMSIZ - 1);
    if (ioctl(fd_, TUNSETIFF, &ifr) != 0) {
      *why = std::string("TUNSETIFF: ") + std::strerror(errno);
      return false;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    auto set_addr = [&](unsigned long req, const char* a) {
      ifreq r{};
      std::strncpy(r.ifr_name, "gdtun0", IFNAMSIZ - 1);
      auto* sin = reinterpret_cast<sockaddr_in*>(&r.ifr_addr);
      sin->sin_family = AF_INET;
      inet_pton(AF_INET, a, &sin->sin_addr);
      return ioctl(s, req, &r) == 0;
    };
    if (!set_addr(SIOCSIFADDR, "192.0.2.1") || !set_addr(SIOCSIFNETMASK, "255.255.255.0")) {
      *why = std::string("setting 192.0.2.1/24: ") + std::strerror(errno);
      close(s);
      return false;
    }
    bool up = SetIfUp(s, "gdtun0", why);
    close(s);
    if (!up) return false;
    thread_ = std::thread([this] { Loop(); });
    return true;
  }

  void SetHost(int last_octet, HostBehaviour b) {
    std::lock_guard<std::mutex> l(mu_);
    hosts_[last_octet] = std::move(b);
  }
  int requests_seen() const { return requests_.load(); }

  ~TunResponder() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }

 private:
  static uint16_t Be16(const unsigned char* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
  static void Put16(unsigned char* p, uint16_t v) {
    p[0] = static_cast<unsigned char>(v >> 8);
    p[1] = static_cast<unsigned char>(v);
  }
  static uint16_t Sum(std::string_view d) { return InternetChecksum(d); }

  void FixIpChecksum(std::string& pkt, size_t ihl) {
    auto* p = reinterpret_cast<unsigned char*>(pkt.data());
    Put16(p + 10, 0);
    Put16(p + 10, Sum(std::string_view(pkt.data(), ihl)));
  }

  // Builds the answer (in place) or returns false to stay silent.
  bool Answer(std::string& pkt, int* octet) {
    if (pkt.size() < 20) return false;
    auto* p = reinterpret_cast<unsigned char*>(pkt.data());
    if ((p[0] >> 4) != 4) return false;
    size_t ihl = (p[0] & 0x0f) * 4u;
    if (pkt.size() < ihl + 8) return false;
    if (p[16] != 192 || p[17] != 0 || p[18] != 2 || p[19] == 1) return false;
    *octet = p[19];
    unsigned char src[4], dst[4];
    std::memcpy(src, p + 12, 4);
    std::memcpy(dst, p + 16, 4);
    std::memcpy(p + 12, dst, 4);
    std::memcpy(p + 16, src, 4);
    p[8] = 64;
    unsigned char* l4 = p + ihl;
    size_t l4_len = pkt.size() - ihl;
    if (p[9] == IPPROTO_ICMP) {
      if (l4[0] != 8) return false;
      l4[0] = 0;
      Put16(l4 + 2, 0);
      Put16(l4 + 2, Sum(std::string_view(reinterpret_cast<char*>(l4), l4_len)));
      FixIpChecksum(pkt, ihl);
      return true;
    }
    if (p[9] == IPPROTO_TCP && l4_len >= 20) {
      uint8_t flags = l4[13];
      if ((flags & 0x02) == 0 || (flags & 0x10) != 0) return false;  // only a bare SYN
      uint16_t sport = Be16(l4), dport = Be16(l4 + 2);
      uint32_t seq = static_cast<uint32_t>(l4[4]) << 24 | l4[5] << 16 | l4[6] << 8 | l4[7];
      bool closed = false;
      {
        std::lock_guard<std::mutex> l(mu_);
        for (int cp : hosts_[*octet].closed_ports) closed |= cp == dport;
      }
      std::string tcp(20, '\0');
      auto* t = reinterpret_cast<unsigned char*>(tcp.data());
      Put16(t, dport);
      Put16(t + 2, sport);
      uint32_t isn = closed ? 0 : 0x1000;
      uint32_t ack = seq + 1;
      for (int i = 0; i < 4; ++i) {
        t[4 + i] = static_cast<unsigned char>(isn >> (24 - 8 * i));
        t[8 + i] = static_cast<unsigned char>(ack >> (24 - 8 * i));
      }
      t[12] = 5 << 4;
      t[13] = closed ? 0x14 : 0x12;  // RST|ACK or SYN|ACK
      Put16(t + 14, closed ? 0 : 65535);
      std::string pseudo(reinterpret_cast<char*>(p + 12), 8);
      pseudo += std::string("\0", 1);
      pseudo += static_cast<char>(IPPROTO_TCP);
      pseudo += static_cast<char>(0);
      pseudo += static_cast<char>(20);
      Put16(t + 16, Sum(pseudo + tcp));
      pkt.resize(ihl);
      pkt += tcp;
      p = reinterpret_cast<unsigned char*>(pkt.data());
      Put16(p + 2, static_cast<uint16_t>(pkt.size()));
      FixIpChecksum(pkt, ihl);
      return true;
    }
    return false;
  }

  void Loop() {
    std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>> queue;
    std::map<int, int> seen_per_host;
    while (!stop_) {
      auto now = std::chrono::steady_clock::now();
      for (auto it = queue.begin(); it != queue.end();) {
        if (it->first <= now) {
          (void)!write(fd_, it->second.data(), it->second.size());
          it = queue.erase(it);
        } else {
          ++it;
        }
      }
      pollfd pfd{fd_, POLLIN, 0};
      if (poll(&pfd, 1, 1) <= 0) continue;
      char buf[4096];
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) continue;
      std::string pkt(buf, n);
      int octet = 0;
      if (!Answer(pkt, &octet)) continue;
      ++requests_;
      HostBehaviour b;
      {
        std::lock_guard<std::mutex> l(mu_);
        b = hosts_[octet];
      }
      if (b.silent) continue;
      int i = seen_per_host[octet]++;
      if ((i + 1) * b.loss_pct / 100 > i * b.loss_pct / 100) continue;  // dropped
      auto delay = b.delay + (i % 2 == 1 ? b.alternate : std::chrono::milliseconds(0));
      queue.emplace_back(std::chrono::steady_clock::now() + delay, std::move(pkt));
    }
  }

  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
  std::mutex mu_;
  std::map<int, HostBehaviour> hosts_;
};

// Runs body inside a fresh namespace with a TUN responder, or marks the calling test skipped
// with the reason (call it as the test body's last statement).
inline void WithTun(const std::function<void(TunResponder&)>& body) {
  std::string why;
  bool started = false;
  bool ran = RunInFreshNetns(
      [&] {
        TunResponder tun;
        if (!tun.Start(&why)) return;
        started = true;
        body(tun);
      },
      &why);
  if (!ran || !started) GTEST_SKIP() << "needs network namespaces and /dev/net/tun: " << why;
}

}  // namespace gpudoctor::testing
