// http_load: open-loop HTTP load on loopback for bench/http_bench.py (Python alone cannot pace
// 1,000 requests/s on a small machine). Threads share the rate; each keeps one keep-alive
// connection (reopened when the server closes it) and walks the paths in turn.
//
//   http_load PORT RATE SECONDS PATH[,PATH...] [THREADS=4]
// Prints: "requests N errors E seconds S rate R p50_ms P p99_ms Q max_ms M" and the first error.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: http_load PORT RATE SECONDS PATH[,PATH...] [THREADS]\n");
    return 2;
  }
  int port = std::atoi(argv[1]);
  double rate = std::atof(argv[2]);
  double seconds = std::atof(argv[3]);
  std::vector<std::string> paths;
  for (std::string s = argv[4]; !s.empty();) {
    size_t comma = s.find(',');
    paths.push_back(s.substr(0, comma));
    s = comma == std::string::npos ? "" : s.substr(comma + 1);
  }
  int threads = argc > 5 ? std::atoi(argv[5]) : 4;
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto end = start + std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
  auto period = std::chrono::microseconds(static_cast<int64_t>(threads * 1e6 / rate));
  std::atomic<long> requests{0}, errors{0};
  std::mutex mu;
  std::string first_error;
  std::vector<double> latencies_ms;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      httplib::Client c("127.0.0.1", port);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);  // as Go clients (Prometheus) do
      c.set_connection_timeout(5, 0);
      c.set_read_timeout(5, 0);
      std::vector<double> mine;
      auto next = start + period * t / threads;
      for (size_t k = t;; ++k) {
        auto now = Clock::now();
        if (now >= end) break;
        if (next > now) std::this_thread::sleep_for(next - now);
        next += period;
        const std::string& path = paths[k % paths.size()];
        auto t0 = Clock::now();
        auto r = c.Get(path.c_str());
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        requests.fetch_add(1);
        if (!r || r->status != 200) {
          errors.fetch_add(1);
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.empty()) {
            first_error = path + ": " +
                          (r ? "status " + std::to_string(r->status)
                             : "error " + httplib::to_string(r.error()));
          }
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
    });
  }
  for (auto& th : pool) th.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  auto pct = [&](double p) {
    return latencies_ms.empty()
               ? 0.0
               : latencies_ms[std::min(latencies_ms.size() - 1,
                                       static_cast<size_t>(p * latencies_ms.size()))];
  };
  std::printf(
      "requests %ld errors %ld seconds %.1f rate %.0f p50_ms %.2f p99_ms %.2f max_ms %.2f\n",
      requests.load(), errors.load(), elapsed, requests.load() / elapsed, pct(0.5), pct(0.99),
      latencies_ms.empty() ? 0.0 : latencies_ms.back());
  if (!first_error.empty()) std::printf("first_error %s\n", first_error.c_str());
  return errors.load() == 0 ? 0 : 1;
}
