// WalkArgs: the one argv walker behind every command line (global flags, `plan`). It splits
// positionals from flags ("--name", "--name=value", "--name value", "-h" as "--help", "--" ends
// flags, a lone "-" is a positional) and asks the caller's flag table what each flag takes.
// Errors name the flag: unknown (with `help_hint`), a value given to a switch, a missing value.
// Thread-safe (no state); the string_views point into argv.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

struct ArgHandlers {
  // Called for each positional argument, in order.
  std::function<void(std::string_view arg)> positional;
  // The value name a flag takes ("" for a switch); nullopt when the flag is unknown.
  std::function<std::optional<std::string_view>(std::string_view name)> value_name_of;
  // Called for each known flag with its value (nullopt for a switch). An error is returned
  // from WalkArgs prefixed with "flag NAME: ".
  std::function<Status(std::string_view name, std::optional<std::string_view> value)> flag;
};

// `help_hint` ends the unknown-flag message, e.g. "see gpudoctor --help".
Status WalkArgs(int argc, const char* const* argv, const ArgHandlers& handlers,
                std::string_view help_hint);

}  // namespace gpudoctor
