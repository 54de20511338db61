// This machine's host name, sanitised for reports and labels: the environment variable
// GPUDOCTOR_HOSTNAME when set and not empty (a Kubernetes pod passes the node's name from
// spec.nodeName; containers and test fleets on one machine name themselves), else
// gethostname(); "unknown" when the call fails. Thread-safe.
#pragma once

#include <string>

namespace gpudoctor {

std::string LocalHostname();

}  // namespace gpudoctor
