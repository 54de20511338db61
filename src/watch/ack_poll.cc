#include "watch/ack_poll.h"

#include <sys/stat.h>

namespace gpudoctor {

AckPoll::Stamp AckPoll::Look() const {
  struct stat st {};
  if (::stat(marks_path_.c_str(), &st) != 0) return {};
  return {st.st_ino, st.st_size, st.st_mtim.tv_sec * int64_t{1000000000} + st.st_mtim.tv_nsec};
}

bool AckPoll::Due(uint64_t tick) {
  if (tick % kEveryTicks != 0) return false;
  Stamp now = Look();
  const bool changed = !last_ || now != *last_;
  if (!changed && tick - last_query_tick_ < kFallbackTicks) return false;
  last_ = now;
  last_query_tick_ = tick;
  return true;
}

}  // namespace gpudoctor
