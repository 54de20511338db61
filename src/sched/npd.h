// node-problem-detector custom plugin mode (`gpudoctor check --npd [--npd-layer L]`): one
// condition per layer (one plugin rule per layer, each with --npd-layer). Contract: exit 0 OK,
// 1 problem (a crit finding in the layer), 2 unknown (gpudoctor could not run); exactly one
// line on stdout, at most kNpdMessageMax bytes: "ok", "ok (warn: id, id)" or
// "<id> <gpu>: <summary> (+N more)". Warn findings do not set the condition (a permanent
// NodeCondition for a warning would cordon-storm remedy systems); they are named in the line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "findings/finding.h"

namespace gpudoctor {

inline constexpr size_t kNpdMessageMax = 200;

struct NpdOutcome {
  int exit_code = 0;
  std::string message;  // without newline
};

NpdOutcome NpdResult(const std::vector<Finding>& findings, std::optional<Layer> layer,
                     const std::string& tool_error);

}  // namespace gpudoctor
