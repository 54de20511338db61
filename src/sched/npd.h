// node-problem-detector custom plugin mode (`gpudoctor check --npd [--npd-layer L]`): one
// condition per layer (one plugin rule per layer, each with --npd-layer). Contract: exit 0 OK,
// 1 problem (a finding in the layer whose action takes the node out: TakesNodeOutOfService),
// 2 unknown (gpudoctor could not run); exactly one line on stdout, at most kNpdMessageMax bytes:
// "ok", "ok (warn: id, id)" or "<id> <gpu> [<action>]: <summary> (+N more)". Findings whose
// action keeps the node in service (a busy CPU, a full disk, an application Xid) do not set the
// condition (a permanent NodeCondition for them would cordon-storm remedy systems); warn ones are
// named in the line.
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
