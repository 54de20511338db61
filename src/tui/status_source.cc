#include "tui/status_source.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "check/run_check.h"
#include "core/http_get.h"
#include "report/report.h"
#include "tui/status_check.h"

namespace gpudoctor {
namespace {

SteadyClock::duration Seconds(double s) {
  return std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(s));
}

std::string TrimBase(std::string base_url) {
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  return base_url;
}

// One GET of a watch daemon's API path: the bearer token when there is one, the whole exchange
// before `deadline`, at most kMaxStatusBytes. A 401 is an io_error saying what to do about the
// token; other HTTP statuses are the caller's.
Result<HttpGetAnswer> DaemonGet(const std::string& url, const std::string& token,
                                TimePoint deadline, double connect_timeout_s) {
  HttpGetRequest req;
  req.url = url;
  req.deadline = deadline;
  req.max_body_bytes = kMaxStatusBytes;
  req.connect_timeout_s = connect_timeout_s;
  if (!token.empty()) req.headers.push_back("Authorization: Bearer " + token);
  auto res = HttpGet(req);
  if (!res.ok()) return res.status();
  if (res->status == 401) {
    return IoError(url + ": HTTP 401: " +
                   (token.empty() ? "the daemon needs a token (--token-file or $GPUDOCTOR_TOKEN)"
                                  : "the daemon refused the token"));
  }
  return res;
}

// The "error" text of a daemon's JSON error answer ({"error": "..."}), or "".
std::string ErrorText(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return "";
  auto it = j.find("error");
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>().substr(0, 200);
}

}  // namespace

StatusFetcher LocalStatusFetcher(std::shared_ptr<const Settings> settings) {
  return [settings]() -> Result<nlohmann::json> {
    auto j = nlohmann::json::parse(RenderJson(RunCheck(settings)), nullptr, false);
    if (j.is_discarded()) return Internal("the report did not render as JSON");
    return j;
  };
}

StatusFetcher DaemonStatusFetcher(std::string base_url, std::string token, double timeout_s) {
  std::string url = TrimBase(std::move(base_url)) + "/api/v1/status";
  return [url, token, timeout_s]() -> Result<nlohmann::json> {
    auto res = DaemonGet(url, token, SteadyClock::now() + Seconds(timeout_s), timeout_s);
    if (!res.ok()) return res.status();
    if (res->status != 200) return IoError(url + ": HTTP " + std::to_string(res->status));
    auto j = nlohmann::json::parse(res->body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return ParseError(url + ": the body is not a JSON object");
    }
    if (Status s = CheckStatusDocument(j); !s.ok()) {
      return ParseError(url + ": status refused: " + s.message());
    }
    return j;
  };
}

HistoryFetcher DaemonHistoryFetcher(std::string base_url, std::string token, double timeout_s) {
  std::string base = TrimBase(std::move(base_url)) + "/api/v1/history";
  return [base, token, timeout_s]() -> Result<TopHistory> {
    TimePoint deadline = SteadyClock::now() + Seconds(timeout_s);
    TopHistory h;
    for (bool util : {true, false}) {
      const char* metric = util ? kHistoryUtilMetric : kHistoryTempMetric;
      // Named in errors without the query's noise; sent with it.
      std::string name = base + "?metric=" + metric;
      // 120 points of 10 min: 5 s apart, two a column of the widest sparkline.
      std::string url =
          name + "&since=" + std::to_string(kHistoryWindowS / 60) + "m&max_points=120";
      auto res = DaemonGet(url, token, deadline, timeout_s);
      if (!res.ok()) return res.status();
      std::string why = ErrorText(res->body);
      // No history to be had (not a fault of this fetch): 503 is a daemon without a store
      // ("no history store"; with --no-db: "history store: PATH: no history database here"),
      // 404 one older than the history API.
      if (res->status == 404) return Unsupported("this daemon has no history API (older version)");
      if (res->status == 503) {
        return Unsupported("the daemon serves no history" + (why.empty() ? "" : " (" + why + ")"));
      }
      if (res->status != 200) {
        return IoError(name + ": HTTP " + std::to_string(res->status) +
                       (why.empty() ? "" : ": " + why));
      }
      auto j = nlohmann::json::parse(res->body, nullptr, false);
      if (j.is_discarded()) return ParseError(name + ": the body is not JSON");
      auto series = ParseHistoryDocument(j, metric);
      if (!series.ok()) return ParseError(name + ": history refused: " + series.status().message());
      for (auto& [gpu, points] : *series) {
        for (const HistoryPoint& p : points) h.to_unix_s = std::max(h.to_unix_s, p.unix_s);
        GpuHistory& g = h.gpus[gpu];
        (util ? g.util : g.temp) = std::move(points);
      }
    }
    if (h.to_unix_s > 0) h.from_unix_s = h.to_unix_s - kHistoryWindowS;
    return h;
  };
}

HistoryPoller::HistoryPoller(HistoryFetcher fetch, double period_s, double budget_s)
    : fetch_(std::move(fetch)), period_(Seconds(period_s)), budget_(Seconds(budget_s)) {}

bool HistoryPoller::Poll(TopViewState* state, TimePoint now) {
  if (pending_ != nullptr && pending_->Done()) {
    Result<TopHistory> r = pending_->Take();
    pending_.reset();
    if (r.ok()) {
      state->history = std::move(*r);
      state->history_error.clear();
      state->history_note.clear();
    } else if (r.status().code() == StatusCode::kUnsupported) {
      state->history.reset();
      state->history_error.clear();
      state->history_note = r.status().message();
    } else {
      state->history_error = r.status().message();
    }
    return true;
  }
  if (pending_ != nullptr && now - started_ > budget_) {
    CountAbandonedWorker();
    pending_.reset();  // abandoned: its result is dropped
    char buf[64];
    std::snprintf(buf, sizeof buf, "not read within %g s",
                  std::chrono::duration<double>(budget_).count());
    state->history_error = buf;
    return true;
  }
  if (pending_ == nullptr && state->show_history && fetch_ && now >= next_) {
    started_ = now;
    next_ = now + period_;
    pending_ = StartDetached(fetch_);
    if (pending_ == nullptr) {
      state->history_error = "no thread could be started for the history";
      return true;
    }
  }
  return false;
}

}  // namespace gpudoctor
