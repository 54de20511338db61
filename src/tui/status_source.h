// Where `gpudoctor top` reads its status document (the `check --json` contract) from.
// - Local: runs the enabled probes and the rules once per call, with the same settings as
//   `check` (BuildSettings), each call bounded by settings.deadline_s. Safe to call from one
//   thread at a time.
// - Daemon: GET <base_url>/api/v1/status of a running `gpudoctor watch` through libcurl, with a
//   connect and total timeout; an optional bearer token. Errors: unsupported (built without
//   libcurl), io_error (connect, HTTP status other than 200), parse_error (body not JSON).
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
