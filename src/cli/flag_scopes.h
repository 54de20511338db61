// Which commands take each flag: the parser refuses a flag of another command (exit 3 naming it
// and the commands it belongs to) and `gpudoctor help COMMAND` lists only the command's flags.
// Every flag of the flag table has an entry (a test checks). Pure; thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace gpudoctor {

// The commands of `flag`, space-separated ("watch top"), "*" for every command; nullopt when the
// flag has no entry.
std::optional<std::string_view> FlagCommands(std::string_view flag);
bool FlagAppliesTo(std::string_view flag, std::string_view command);

}  // namespace gpudoctor
