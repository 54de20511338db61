#include "net/recent_tcp_dump.h"

#include <atomic>
#include <mutex>

namespace gpudoctor {
namespace {

struct RecentTable {
  std::timed_mutex mu;
  std::weak_ptr<const TcpTable> table;
};

std::atomic<uint64_t> g_dumps_taken{0};

std::shared_ptr<const TcpTable> TakeDump() {
  g_dumps_taken.fetch_add(1);
  auto table = std::make_shared<TcpTable>();
  table->sockets = DumpTcpSockets();
  table->at = SteadyClock::now();
  return table;
}

}  // namespace

uint64_t RecentTcpDumpsTaken() { return g_dumps_taken.load(); }

std::shared_ptr<const TcpTable> RecentTcpDump(std::chrono::milliseconds max_age,
                                              std::optional<TimePoint> deadline,
                                              std::optional<TimePoint> newer_than) {
  static RecentTable recent;
  const TimePoint called = SteadyClock::now();
  std::unique_lock lock(recent.mu, std::defer_lock);
  if (deadline ? !lock.try_lock_until(*deadline) : (lock.lock(), false)) return TakeDump();
  if (auto table = recent.table.lock(); table != nullptr && table->at >= called - max_age &&
                                        (!newer_than || table->at > *newer_than)) {
    return table;
  }
  // Taken under the lock: a probe asking meanwhile waits for this dump instead of taking another.
  std::shared_ptr<const TcpTable> table = TakeDump();
  recent.table = table;
  return table;
}

}  // namespace gpudoctor
