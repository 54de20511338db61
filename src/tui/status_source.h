// Where `gpudoctor top` reads its status document (the `check --json` contract) from.
// - Local: runs the enabled probes and the rules once per call, with the same settings as
//   `check` (BuildSettings), each call bounded by settings.deadline_s. Safe to call from one
//   thread at a time.
// - Daemon: GET <base_url>/api/v1/status of a running `gpudoctor watch` (core/http_get): the
//   whole answer within timeout_s and at most kMaxStatusBytes; an optional bearer token. Errors:
//   io_error/timeout (connect, HTTP status other than 200, too slow, too large), parse_error
//   (body not JSON, or refused by CheckStatusDocument, naming the bad field).
// The daemon fetcher returns only documents that pass CheckStatusDocument (tui/status_check.h);
// the local one renders this binary's own report.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/settings.h"
#include "core/status.h"

namespace gpudoctor {

using StatusFetcher = std::function<Result<nlohmann::json>()>;

StatusFetcher LocalStatusFetcher(std::shared_ptr<const Settings> settings);
StatusFetcher DaemonStatusFetcher(std::string base_url, std::string token, double timeout_s);

}  // namespace gpudoctor
