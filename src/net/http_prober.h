// HTTP(S) service probes: a series of GET requests to one URL target, each on a
// fresh connection, timed by phase with libcurl (multi interface, no shell, no signals).
//
// Request k starts at t0 + k * interval (requests overlap when the service is slower than the
// interval, as the ping series do) and is bounded by `timeout` (CURLOPT_TIMEOUT_MS), so a series
// returns within about (count - 1) * interval + timeout; a request still running then is cut and
// reported as a timeout. The name is resolved once by the caller (ResolveTarget) and pinned with
// CURLOPT_RESOLVE, so curl never blocks in the resolver and the Host header / SNI stay the
// name. No redirect is followed (a 3xx is an answer); at most 64 KiB of a body is read, the rest
// is cut off (the status and time to first byte are known by then).
//
// Units: milliseconds, from the start of each request. Unsupported: tls_ms is absent for
// http://; connect_ms/tls_ms/ttfb_ms are absent when that phase was not reached.
// Thread-safe (curl_global_init is done once, under std::call_once); each call owns its handles.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "net/target.h"

namespace gpudoctor {

struct HttpProbeOptions {
  int count = 5;
  std::chrono::milliseconds interval{200};  // between request starts
  std::chrono::milliseconds timeout{3000};  // per request, connect to last byte read
  bool tls_verify = true;                   // https: verify the certificate chain and name
};

struct HttpRequestResult {
  std::optional<int> status;         // absent: no HTTP response at all
  std::optional<double> connect_ms;  // TCP handshake alone
  std::optional<double> tls_ms;      // TLS handshake alone (https)
  std::optional<double> ttfb_ms;     // request start to the first response byte
  std::optional<double> wait_ms;     // request sent to the first response byte (server time)
  std::string error;  // why there was no response (curl's words); empty when one came
  // "connect" (refused, unreachable), "timeout", "tls", "protocol" (closed, not HTTP),
  // "other"; empty when a response came (5xx is judged by the rules from `status`).
  std::string error_kind;
};

// `target` must be a URL target (Target::IsUrl); `addr` is where its host resolved. Results in
// request order; fewer than opts.count only when a handle could not be created.
std::vector<HttpRequestResult> HttpProbeSeries(const Target& target, const ResolvedAddress& addr,
                                               const HttpProbeOptions& opts);

// Longest a series can take with these options (without name resolution).
std::chrono::milliseconds HttpSeriesBudget(const HttpProbeOptions& opts);

}  // namespace gpudoctor
