#include "core/hostname.h"

#include <unistd.h>

#include <cstdlib>

#include "core/strings.h"

namespace gpudoctor {

std::string LocalHostname() {
  // getenv is safe here: gpudoctor never calls setenv after start-up.
  if (const char* env = std::getenv("GPUDOCTOR_HOSTNAME"); env != nullptr && *env != '\0') {
    return Sanitize(env, 255);
  }
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return Sanitize(buf, 255);
}

}  // namespace gpudoctor
