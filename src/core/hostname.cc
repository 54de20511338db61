#include "core/hostname.h"

#include <unistd.h>

#include "core/strings.h"

namespace gpudoctor {

std::string LocalHostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return Sanitize(buf, 255);
}

}  // namespace gpudoctor
