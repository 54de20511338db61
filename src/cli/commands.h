// Subcommands. Each returns the process exit code (see DESIGN.md: 0 ok, 1 warn, 2 crit, 3 could
// not run). Main() dispatches and leaves the process with std::_Exit after flushing, because
// abandoned probe workers may still be running.
#pragma once

namespace gpudoctor {

int Main(int argc, char** argv);

}  // namespace gpudoctor
