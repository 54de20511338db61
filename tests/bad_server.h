// A hostile HTTP server on 127.0.0.1 for tests of readers of outside servers: it answers every
// connection with `head` (status line and headers) and then, per mode, a body that trickles one
// byte every `gap`, or that never ends (64 KiB chunks as fast as the client takes them), or a
// fixed body. Test-only code.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace gpudoctor::testing {

class BadServer {
 public:
  enum class Mode { kTrickle, kEndless, kFixed };

  BadServer(Mode mode, std::string body = "",
            std::chrono::milliseconds gap = std::chrono::milliseconds(100))
      : mode_(mode), body_(std::move(body)), gap_(gap) {
    fd_ = BindLoopback(16, &port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~BadServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    for (auto& t : clients_) t.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  size_t bytes_sent() const { return sent_; }

 private:
  void Serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      clients_.emplace_back([this, c] {
        Answer(c);
        ::close(c);
      });
    }
  }
  bool Send(int c, const char* p, size_t n) {
    while (n > 0) {
      ssize_t k = ::send(c, p, n, MSG_NOSIGNAL);
      if (k <= 0) return false;
      sent_ += static_cast<size_t>(k);
      p += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }
  void Answer(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      req.append(buf, static_cast<size_t>(n));
    }
    if (mode_ == Mode::kFixed) {
      std::string r = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                      std::to_string(body_.size()) + "\r\nConnection: close\r\n\r\n" + body_;
      Send(c, r.data(), r.size());
      return;
    }
    std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
    if (!Send(c, head.data(), head.size())) return;
    std::string chunk(mode_ == Mode::kEndless ? 65536 : 1, mode_ == Mode::kEndless ? ' ' : '{');
    while (!stop_) {
      if (!Send(c, chunk.data(), chunk.size())) return;
      if (mode_ == Mode::kTrickle) {
        chunk = " ";
        std::this_thread::sleep_for(gap_);
      }
    }
  }

  Mode mode_;
  std::string body_;
  std::chrono::milliseconds gap_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> sent_{0};
  std::thread thread_;
  std::vector<std::thread> clients_;
};

}  // namespace gpudoctor::testing
