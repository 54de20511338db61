// A streaming reader of one Prometheus /api/v1/query_range answer ("resultType":"matrix"):
// hands each series to a callback as it ends, without building a document of the whole answer
// (a fleet-scale answer is hundreds of MB of JSON; a DOM of it would take several times that).
// Per series: its labels (string values only) and its points [time, "value"]; a point whose time
// is not a number or whose value is not a string parsing as a finite number is given with
// valid = false. Errors: ParseError for invalid JSON, an answer whose status is not "success"
// (with Prometheus' "error" text), or one without data.result. Pure; thread-compatible.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace gpudoctor::fleet {

using PromLabels = std::vector<std::pair<std::string, std::string>>;

struct PromPoint {
  double time_s = 0;
  double value = 0;
  bool valid = false;
};

// The value of the first of `keys` present, else "".
std::string PromLabel(const PromLabels& labels, std::initializer_list<const char*> keys);

// `what` names the query in errors.
Status ReadPromMatrix(
    std::string_view what, const std::string& body,
    const std::function<void(const PromLabels&, const std::vector<PromPoint>&)>& on_series);

}  // namespace gpudoctor::fleet
