#include "core/arg_walker.h"

#include <string>

#include "core/strings.h"

namespace gpudoctor {

Status WalkArgs(int argc, const char* const* argv, const ArgHandlers& handlers,
                std::string_view help_hint) {
  bool positional_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (positional_only || arg.empty() || arg[0] != '-' || arg == "-") {
      handlers.positional(arg);
      continue;
    }
    if (arg == "--") {
      positional_only = true;
      continue;
    }
    if (arg == "-h") arg = "--help";
    std::string_view name = arg;
    std::optional<std::string_view> inline_value;
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    std::optional<std::string_view> value_name = handlers.value_name_of(name);
    if (!value_name) {
      return InvalidArgument("unknown flag '" + Sanitize(name, 60) + "' (" +
                             std::string(help_hint) + ")");
    }
    std::optional<std::string_view> value;
    if (value_name->empty()) {
      if (inline_value) return InvalidArgument("flag " + std::string(name) + " takes no value");
    } else if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return InvalidArgument("flag " + std::string(name) + " needs a value (" +
                             std::string(*value_name) + ")");
    }
    if (Status s = handlers.flag(name, value); !s.ok()) {
      return InvalidArgument("flag " + std::string(name) + ": " + s.message());
    }
  }
  return Status::Ok();
}

}  // namespace gpudoctor
