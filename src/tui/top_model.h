// `gpudoctor top` model: a pure function from one status document (the `check --json` contract,
// also served as GET /api/v1/status by `watch`) to the lines of the screen. No terminal, no I/O:
// the view draws the lines, the tests read them. Missing fields print as "-" (unsupported is never
// 0). Thread-safe (no shared state).
#pragma once

#include <nlohmann/json.hpp>
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

struct TopViewState {
  int width = 80;                // columns available; every line is cut to this
  bool findings_detail = false;  // `f`: evidence and every next step instead of the first step
  bool help = false;             // `?` / `h`: the keys, under the title
  bool processes = false;        // `p`: each GPU's processes (pid, user, name, GPU memory)
  TopSort sort = TopSort::kIndex;
  std::string source;  // "local" or the daemon URL, shown in the title
  std::string error;   // the last fetch error, shown under the title when not empty
  double interval_s = 1;
};

// The whole screen for one status document (may be null before the first fetch). The caller
// cuts the result to the terminal height; the findings come last so a short terminal keeps the
// GPU table.
std::vector<TopLine> BuildTopLines(const nlohmann::json& status, const TopViewState& state);

// Names of the clock event (throttle) reasons set in an NVML mask, e.g. "hw_thermal,sw_power";
// "-" when none beyond idle.
std::string ThrottleReasonNames(uint64_t mask);

}  // namespace gpudoctor
