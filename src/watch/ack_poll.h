// AckPoll: when `watch` asks its history for the acknowledgements and silences that `gpudoctor
// ack` / `silence` (other processes) wrote. Every kEveryTicks ticks it looks at the marks file
// they rewrite after each commit (store/history_store.h OperatorMarksPath: one stat(2)) and asks
// when that file changed since the last look, or is there for the first time, and in any case
// every kFallbackTicks ticks (a writer that could not rewrite the file, a file removed). Before,
// the history was queried every kEveryTicks ticks whatever: a read transaction and a statement,
// ~175 µs of CPU on this VM, ~35 µs a tick on average.
// Not thread-safe: the daemon's loop owns it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace gpudoctor {

class AckPoll {
 public:
  static constexpr uint64_t kEveryTicks = 5;
  static constexpr uint64_t kFallbackTicks = 60;

  explicit AckPoll(std::string marks_path) : marks_path_(std::move(marks_path)) {}

  // Whether to ask the history on tick `tick` (ticks count from 1). The first due tick always
  // asks (the marks at start are not known to be merged).
  bool Due(uint64_t tick);

 private:
  struct Stamp {  // what stat(2) says of the marks file; the defaults when it is not there
    ino_t inode = 0;
    off_t size = 0;
    int64_t mtime_ns = -1;
    bool operator==(const Stamp&) const = default;
  };
  Stamp Look() const;

  std::string marks_path_;
  std::optional<Stamp> last_;  // at the last query
  uint64_t last_query_tick_ = 0;
};

}  // namespace gpudoctor
