#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"

namespace gpudoctor {

int Main(int argc, char** argv) {
  std::fprintf(stderr, "gpudoctor: no commands yet\n");
  return 3;
}

}  // namespace gpudoctor
