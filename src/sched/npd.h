// node-problem-detector custom plugin mode (`gpudoctor check --npd [--npd-layer L]`): one
// condition per layer (one plugin rule per layer, each with --npd-layer). Contract: exit 0 OK,
// 1 problem (a finding in the layer whose action takes the node out: TakesNodeOutOfService),
// 2 unknown (gpudoctor could not run); exactly one line on stdout, at most kNpdMessageMax bytes:
// "ok", "ok (warn: id, id)" or "<id> <gpu> [<action>]: <summary> (+N more)". Findings whose
// action keeps the node in service (a busy CPU, a full disk, an application Xid) do not set the
// condition (a permanent NodeCondition for them would cordon-storm remedy systems); warn ones are
// named in the line.
//
// NPD drops a plugin's stdout on exit 0 (the condition then carries the config's default message),
// so "ok (warn: ...)" never reaches a node. The warnings get their own condition per layer
// (deploy/k8s): `check --npd --npd-warnings` exits 1 while the layer has a warn or crit finding
// that keeps the node in service, with the line naming it (NpdWarnings); 0 "no warnings" else.
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

// The warnings condition: findings in `layer` (all layers when nullopt) of severity warn or crit
// whose action keeps the node in service (those that take it out are NpdResult's). Exit 1 with
// "<id> <gpu> [<action>]: <summary> (+N more: id, id)" for the first (at most kNpdMessageMax
// bytes), 0 with "no warnings"; tool_error gives exit 2 as NpdResult.
NpdOutcome NpdWarnings(const std::vector<Finding>& findings, std::optional<Layer> layer,
                       const std::string& tool_error);

}  // namespace gpudoctor
