// Test helper for the kill -9 durability test: opens the history store at argv[1] and appends
// synthetic ticks (one per fake second from argv[2]) as fast as it can, forever. After each tick
// is committed it writes the tick's time to argv[3] (progress file) so the test knows what was
// durable when it killed us. Test-only code.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "store/history_store.h"
#include "store/synthetic_tick.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: store_tick_writer DB START_UNIX_S PROGRESS_FILE\n");
    return 2;
  }
  auto store = gpudoctor::HistoryStore::Open(argv[1], {});
  if (!store.ok()) {
    std::fprintf(stderr, "store_tick_writer: %s\n", store.status().ToString().c_str());
    return 1;
  }
  int64_t t = std::strtoll(argv[2], nullptr, 10);
  for (;; ++t) {
    (*store)->Append(gpudoctor::testing::SyntheticTick(t));
    (*store)->Flush();
    if (!(*store)->write_error().empty()) {
      std::fprintf(stderr, "store_tick_writer: %s\n", (*store)->write_error().c_str());
      return 1;
    }
    std::string s = std::to_string(t) + "\n";
    // Atomically replaced, so a kill never leaves it empty.
    std::string tmp = std::string(argv[3]) + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, s.data(), s.size());
      ::close(fd);
      ::rename(tmp.c_str(), argv[3]);
    }
  }
}
