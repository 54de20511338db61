// `gpudoctor top` model: a pure function from one status document (the `check --json` contract,
// also served as GET /api/v1/status by `watch`) to the lines of the screen. No terminal, no I/O:
// the view draws the lines, the tests read them. Missing fields print as "-" (unsupported is never
// 0). Thread-safe (no shared state).
//
// GPU history (`t`): with --connect, a line under each GPU row shows its utilisation and
// temperature over the daemon's last 10 minutes as two sparklines ("      util ▁▂▅█  temp ▃▃▄
// 10m"), fetched from the daemon's GET /api/v1/history (tui/status_source.h). Run locally, `top`
// has no history and says nothing about it (no line, no hint: the local view keeps no samples);
// a daemon that serves none (`watch --no-db`) gets one dim note under the GPU header instead.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpudoctor {

// How a line (or a span of it) is drawn. The view maps these to colours; with NO_COLOR only
// kHeader is drawn (bold) and the severity stays readable in the text itself ("CRIT", "WARN").
enum class TopStyle { kNormal, kHeader, kDim, kOk, kWarn, kCrit };

struct TopLine {
  std::string text;  // already cut to the screen width
  TopStyle style = TopStyle::kNormal;
};

// The GPU table's order (`s` cycles): by index, or by the value, highest first (a GPU without
// the value last).
enum class TopSort { kIndex, kUtil, kMemory, kTemp, kPower };
TopSort NextTopSort(TopSort s);
const char* TopSortName(TopSort s);  // "index", "util", "memory", "temp", "power"

// One sample of a stored series (GET /api/v1/history of `watch`): unix seconds on the daemon's
// clock and the value; nullopt where the daemon stored no value (a missing sample: drawn as a
// gap, never as 0).
struct HistoryPoint {
  int64_t unix_s = 0;
  std::optional<double> value;
};

// One GPU's recent samples, oldest first.
struct GpuHistory {
  std::vector<HistoryPoint> util;  // gpudoctor_gpu_utilization_ratio: 0..1
  std::vector<HistoryPoint> temp;  // gpudoctor_gpu_temperature_celsius: degrees C
};

// What `top --connect` read from the daemon's history: every GPU's series and the window drawn.
struct TopHistory {
  std::map<int, GpuHistory> gpus;  // by GPU index; a GPU without stored series is absent
  int64_t from_unix_s = 0;         // the window [from, to] on the daemon's clock;
  int64_t to_unix_s = 0;           // to <= from: nothing to draw
};

// The window `top` asks the daemon for, and the widest sparkline (10 s a column over 10 min).
inline constexpr int64_t kHistoryWindowS = 600;
inline constexpr int kMaxSparkWidth = 60;
// Sparkline scales, fixed so that a line means the same on every GPU and every redraw:
// utilisation 0..1 (the metric's ratio), temperature 20..100 C (idle air-cooled cards sit near
// the bottom, slowdown limits of 85-95 C near the top; a window's own min..max would blow 1 C of
// jitter up to the full height).
inline constexpr double kSparkUtilLow = 0, kSparkUtilHigh = 1;
inline constexpr double kSparkTempLowC = 20, kSparkTempHighC = 100;

struct TopViewState {
  int width = 80;                // columns available; every line is cut to this
  bool findings_detail = false;  // `f`: evidence and every next step instead of the first step
  bool help = false;             // `?` / `h`: the keys, under the title
  bool processes = false;        // `p`: each GPU's processes (pid, user, name, GPU memory)
  TopSort sort = TopSort::kIndex;
  std::string source;  // "local" or the daemon URL, shown in the title
  std::string error;   // the last fetch error, shown under the title when not empty
  double interval_s = 1;
  bool show_history = true;  // `t`: the util/temp history line under each GPU (with --connect)
  // The daemon's recent GPU history; nullopt when there is none to draw (`top` without
  // --connect, or before the first history answer). The last one stays while a fetch fails.
  std::optional<TopHistory> history;
  std::string history_note;   // shown once, dim, under the GPU header (the daemon serves none)
  std::string history_error;  // the last history fetch error, on the error line with `error`
  // False: sparklines in ASCII ("_.-:=+*#") for a terminal whose locale is not UTF-8, where the
  // block characters would draw as byte escapes.
  bool unicode = true;
};

// The keys the model owns: f (findings detail), ? / h / H (help), s (sort), p (processes),
// t / T (GPU history). Applies `key` (a curses key code) to *state; true when it changed
// something (redraw). Quitting and scrolling are the loop's (q, TopView::ScrollStep).
bool ApplyTopKey(int key, TopViewState* state);

// A sparkline of `points` over the window [from_unix_s, to_unix_s]: exactly `width` columns, each
// one code point of one column (▁▂▃▄▅▆▇█, U+2581..U+2588; with unicode false "_.-:=+*#"). Column c
// covers the c-th of `width` equal slices of the window and draws the mean of the values in it on
// the fixed scale lo..hi in eight equal steps: lo and below is ▁, hi and above is █. A slice with
// no value is a space (a gap: a sample missing or stored without a value), except one that lies
// between two consecutive samples (spaced at most 1.5 x the series' median spacing, so none is
// missing in between): it repeats the earlier sample, so columns narrower than the sampling
// interval do not look holed. Points may come in any order; those outside the window only bridge
// slices. "" when width < 1 or to <= from.
std::string Sparkline(const std::vector<HistoryPoint>& points, int64_t from_unix_s,
                      int64_t to_unix_s, int width, double lo, double hi, bool unicode = true);

// The width of each of the two sparklines of a GPU's history line on a screen `screen_width`
// columns wide: the line ("      util " W "  temp " W "  10m") fits, at most kMaxSparkWidth; 0
// (no history line) when fewer than 4 columns would be left for each.
int SparklineWidth(int screen_width);

// The whole screen for one status document (may be null before the first fetch). The caller
// cuts the result to the terminal height; the findings come last so a short terminal keeps the
// GPU table.
std::vector<TopLine> BuildTopLines(const nlohmann::json& status, const TopViewState& state);

// Names of the clock event (throttle) reasons set in an NVML mask, e.g. "hw_thermal,sw_power";
// "-" when none beyond idle.
std::string ThrottleReasonNames(uint64_t mask);

}  // namespace gpudoctor
