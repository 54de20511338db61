// `gpudoctor top`: a live terminal view. Standalone it runs the probes and rules itself every
// --interval (the same settings as `check`); with --connect it reads a watch daemon's
// /api/v1/status, and every 5 s its GPU history for the sparklines (tui/status_source.h:
// HistoryPoller). The fetches run on detached workers so keys and resizes are answered while a
// sample is taken; a sample that overruns its deadline is abandoned like any probe.
#include <algorithm>
#include <chrono>
#include <memory>

#include "cli/commands.h"
#include "core/deadline.h"
#include "serve/http_server.h"
#include "tui/status_source.h"
#include "tui/top_model.h"
#include "tui/top_view.h"

namespace gpudoctor {

int TopCommand(const CliOptions& o) {
  if (!o.positional.empty())
    return CouldNotRun("top takes no arguments: '" + o.positional[0] + "'");
  auto settings = BuildSettings(o);
  if (!settings.ok()) return CouldNotRun(settings.status().message());
  std::shared_ptr<const Settings> shared = *settings;
  double interval_s = shared->watch_interval_s > 0 ? shared->watch_interval_s : 1;

  TopViewState state;
  state.interval_s = interval_s;
  StatusFetcher fetch;
  std::unique_ptr<HistoryPoller> history;  // --connect only: the GPU sparklines
  double fetch_budget_s = shared->deadline_s + 1;
  std::string connect_url = o.Value("--connect").value_or("");
  if (!connect_url.empty()) {
    auto token = ConnectToken(o, *shared);
    if (!token.ok()) return CouldNotRun(token.status().message());
    double timeout_s = std::max(1.0, std::min(5.0, interval_s * 2));
    fetch = DaemonStatusFetcher(connect_url, *token, timeout_s);
    fetch_budget_s = timeout_s + 1;
    history = std::make_unique<HistoryPoller>(DaemonHistoryFetcher(connect_url, *token, timeout_s),
                                              std::max(5.0, interval_s), timeout_s + 1);
    state.source = connect_url;
  } else {
    fetch = LocalStatusFetcher(shared);
    state.source = "local";
  }

  auto view = TopView::Open();
  if (!view.ok()) return CouldNotRun(view.status().message());
  TopView& v = **view;
  state.unicode = v.Utf8();

  using Clock = std::chrono::steady_clock;
  nlohmann::json status;  // null until the first sample
  std::shared_ptr<PendingResult<Result<nlohmann::json>>> pending;
  Clock::time_point started{}, next_fetch = Clock::now();
  bool dirty = true;
  int scroll = 0;  // lines scrolled past the title
  auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s));
  auto budget =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(fetch_budget_s));
  for (;;) {
    Clock::time_point now = Clock::now();
    if (pending == nullptr && now >= next_fetch) {
      started = now;
      next_fetch = now + interval;
      pending = StartDetached(fetch);
      if (pending == nullptr) state.error = "no thread could be started for the sample";
    }
    if (pending != nullptr && pending->Done()) {
      Result<nlohmann::json> r = pending->Take();
      pending.reset();
      if (r.ok()) {
        status = std::move(*r);
        state.error.clear();
      } else {
        state.error = r.status().message();
      }
      dirty = true;
    } else if (pending != nullptr && now - started > budget) {
      CountAbandonedWorker();
      pending.reset();  // abandoned: its result is dropped
      state.error = "the sample did not finish within " + std::to_string(fetch_budget_s) + " s";
      dirty = true;
    }
    if (history != nullptr && history->Poll(&state, now)) dirty = true;
    if (dirty) {
      state.width = v.Width();
      v.Draw(BuildTopLines(status, state), &scroll);
      dirty = false;
    }
    int key = v.ReadKey(100);
    if (key == 'q' || key == 'Q') break;
    if (ApplyTopKey(key, &state)) dirty = true;  // f, ?/h, s, p, t
    if (key == TopView::kResizeKey || key == 12 /* ^L */) dirty = true;
    int step = TopView::ScrollStep(key, v.Height());
    if (step != 0) {
      scroll += step;
      dirty = true;
    }
  }
  (*view).reset();
  return 0;
}

}  // namespace gpudoctor
