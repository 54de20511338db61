#include "watch/ack_poll.h"

#include <sys/stat.h>

namespace gpudoctor {

bool AckPoll::Stamp::operator==(const Stamp& o) const {
  return exists == o.exists && inode == o.inode && size == o.size &&
         mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
}

AckPoll::Stamp AckPoll::Look() const {
  Stamp s;
  struct stat st {};
  if (::stat(marks_path_.c_str(), &st) != 0) return s;
  s.exists = true;
  s.inode = st.st_ino;
  s.size = st.st_size;
  s.mtime = st.st_mtim;
  return s;
}

bool AckPoll::Due(uint64_t tick) {
  if (tick % kEveryTicks != 0) return false;
  Stamp now = Look();
  const bool changed = !last_ || !(now == *last_);
  if (!changed && tick - last_query_tick_ < kFallbackTicks) return false;
  last_ = now;
  last_query_tick_ = tick;
  return true;
}

}  // namespace gpudoctor
