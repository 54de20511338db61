#include "tui/top_model.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/json_text.h"
#include "core/terminal_text.h"

namespace gpudoctor {
namespace {

using json = nlohmann::json;

constexpr const char* kLayers[] = {"network", "hardware", "software", "resources"};

int SeverityRank(const std::string& s) {
  if (s == "crit") return 3;
  if (s == "warn") return 2;
  if (s == "info") return 1;
  return 0;
}

TopStyle StyleForRank(int rank) {
  if (rank >= 3) return TopStyle::kCrit;
  if (rank == 2) return TopStyle::kWarn;
  return TopStyle::kOk;
}

const char* RankWord(int rank) {
  if (rank >= 3) return "CRIT";
  if (rank == 2) return "WARN";
  return "ok";
}

// The number at `key`, or nothing (absent, null or not a number).
std::optional<double> Num(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string Str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// "12" or "-" (rounded integer).
std::string Int(std::optional<double> v, double scale = 1) {
  return v ? Fmt("%.0f", *v / scale) : "-";
}

// Bytes as a short human value: 812M, 67G, 1.9T.
std::string Bytes(std::optional<double> v) {
  if (!v) return "-";
  double b = *v;
  const char* units[] = {"B", "K", "M", "G", "T", "P"};
  int u = 0;
  while (b >= 1024 && u < 5) {
    b /= 1024;
    ++u;
  }
  return Fmt(b < 10 && u > 0 ? "%.1f" : "%.0f", b) + units[u];
}

// Cuts at `width` bytes, never inside a UTF-8 sequence.
std::string Cut(std::string s, int width) {
  if (width < 1) width = 1;
  if (static_cast<int>(s.size()) > width) {
    size_t n = static_cast<size_t>(width);
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    s.resize(n);
  }
  return s;
}

// Cuts at `width` code points: for lines whose every character is one column wide (the history
// line's block characters are three bytes each, which Cut would count as three columns).
std::string CutColumns(std::string s, int width) {
  if (width < 1) width = 1;
  int points = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (++points > width) {
      s.resize(i);
      break;
    }
  }
  return s;
}

// Every line goes through TerminalSafe: host names, NIC names, finding text and errors come from
// the status document, which may be a remote server's.
void Add(std::vector<TopLine>& lines, const TopViewState& st, std::string text,
         TopStyle style = TopStyle::kNormal) {
  lines.push_back({Cut(TerminalSafe(text, std::string::npos), st.width), style});
}

// Splits `text` into lines of at most `width` columns after `indent`, at spaces when possible.
void AddWrapped(std::vector<TopLine>& lines, const TopViewState& st, const std::string& indent,
                const std::string& text, TopStyle style) {
  int avail = std::max(10, st.width - static_cast<int>(indent.size()));
  size_t pos = 0;
  while (pos < text.size()) {
    size_t len = std::min(text.size() - pos, static_cast<size_t>(avail));
    if (pos + len < text.size()) {
      size_t space = text.rfind(' ', pos + len);
      if (space != std::string::npos && space > pos) len = space - pos;
    }
    Add(lines, st, (pos == 0 ? indent : std::string(indent.size(), ' ')) + text.substr(pos, len),
        style);
    pos += len;
    while (pos < text.size() && text[pos] == ' ') ++pos;
  }
}

std::string EvidenceText(const json& evidence) {
  std::string out;
  if (!evidence.is_object()) return out;
  for (auto it = evidence.begin(); it != evidence.end(); ++it) {
    if (!out.empty()) out += "  ";
    out += it.key() + "=" + (it->is_string() ? it->get<std::string>() : JsonText(*it));
  }
  return out;
}

std::optional<int> FindingGpu(const json& f) {
  auto g = f.find("gpu");
  if (g == f.end() || !g->is_object()) return std::nullopt;
  auto i = g->find("index");
  if (i == g->end() || !i->is_number_integer()) return std::nullopt;
  int64_t v = i->get<int64_t>();
  if (v < 0 || v >= 1000000) return std::nullopt;
  return static_cast<int>(v);
}

const json& Field(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string GpuState(const json& gpu, const std::vector<const json*>& findings, int* rank) {
  *rank = 0;
  std::string worst_id;
  for (const json* f : findings) {
    int r = SeverityRank(Str(*f, "severity"));
    if (r > *rank) {
      *rank = r;
      worst_id = Str(*f, "id");
    }
  }
  std::string state = *rank >= 2 ? std::string(RankWord(*rank)) + " " + worst_id : "ok";
  if (findings.size() > 1 && *rank >= 2) state += " +" + std::to_string(findings.size() - 1);
  std::optional<double> reasons = Num(Field(gpu, "counters_first"), "clock_event_reasons");
  if (auto r2 = Num(Field(gpu, "counters_second"), "clock_event_reasons")) reasons = r2;
  if (reasons && *reasons >= 0 && *reasons < 9e15) {
    std::string names = ThrottleReasonNames(static_cast<uint64_t>(*reasons));
    if (names != "-") state += " [" + names + "]";
  }
  if (Field(gpu, "remap_failed") == true) state += " remap-failed";
  if (Field(gpu, "remap_pending") == true) state += " remap-pending";
  return state;
}

void AddHost(std::vector<TopLine>& lines, const TopViewState& st, const json& res) {
  const json& cpu = Field(res, "cpu");
  const json& mem = Field(res, "memory");
  const json& psi = Field(res, "pressure");
  std::string cpu_line = "CPU  busy " + Int(Num(cpu, "busy_pct")) + "%  iowait " +
                         Int(Num(cpu, "iowait_pct")) + "%  load " +
                         (Num(cpu, "load1") ? Fmt("%.2f", *Num(cpu, "load1")) : "-") + " (" +
                         Int(Num(cpu, "logical_cores")) + " cores)";
  auto psi_avg = [&](const char* what) {
    return Num(Field(Field(psi, what), "some"), "avg10_pct");
  };
  if (psi.is_object()) {
    cpu_line += "  PSI some cpu " + (psi_avg("cpu") ? Fmt("%.1f", *psi_avg("cpu")) : "-") +
                "% mem " + (psi_avg("memory") ? Fmt("%.1f", *psi_avg("memory")) : "-") + "% io " +
                (psi_avg("io") ? Fmt("%.1f", *psi_avg("io")) : "-") + "%";
  }
  Add(lines, st, cpu_line);
  auto total = Num(mem, "total_bytes");
  auto avail = Num(mem, "available_bytes");
  std::optional<double> used;
  if (total && avail) used = *total - *avail;
  auto swap_total = Num(mem, "swap_total_bytes");
  auto swap_free = Num(mem, "swap_free_bytes");
  std::optional<double> swap_used;
  if (swap_total && swap_free) swap_used = *swap_total - *swap_free;
  Add(lines, st,
      "MEM  " + Bytes(used) + " used of " + Bytes(total) + "  swap " + Bytes(swap_used) + " of " +
          Bytes(swap_total) + "  swap-in " + Int(Num(mem, "swap_in_pages_per_s")) +
          " pg/s  OOM kills " + Int(Num(mem, "oom_kill_count")));
}

void AddNetwork(std::vector<TopLine>& lines, const TopViewState& st, const json& net) {
  std::string nic_line;
  for (const json& nic : Field(net, "nics")) {
    if (Field(nic, "physical") != true) continue;
    std::string speed = Num(nic, "speed_mbps") ? Int(Num(nic, "speed_mbps"), 1000) + "G" : "-";
    std::string item = Str(nic, "name") + " " +
                       (Str(nic, "operstate").empty() ? "?" : Str(nic, "operstate")) + " " + speed +
                       " rx " + Bytes(Num(nic, "rx_bytes_per_s")) + "/s tx " +
                       Bytes(Num(nic, "tx_bytes_per_s")) + "/s";
    if (!nic_line.empty() && static_cast<int>(nic_line.size() + item.size()) + 7 > st.width) {
      Add(lines, st, "NIC  " + nic_line);
      nic_line.clear();
    }
    nic_line += (nic_line.empty() ? "" : "  ") + item;
  }
  if (!nic_line.empty()) Add(lines, st, "NIC  " + nic_line);
  for (const json& t : Field(net, "reachability")) {
    if (auto failed = Num(t, "http_failed_pct")) {  // URL target
      auto ttfb = Num(t, "http_ttfb_ms");
      auto status = Num(t, "http_status");
      Add(lines, st,
          "NET  " + Str(t, "name") + " (" + Str(t, "group") + ") status " + Int(status) +
              "  first byte " + (ttfb ? Fmt("%.1f", *ttfb) : std::string("-")) + " ms  failed " +
              Int(failed) + "%" + (Str(t, "http_error").empty() ? "" : "  " + Str(t, "http_error")),
          *failed > 0 ? TopStyle::kWarn : TopStyle::kNormal);
      continue;
    }
    auto loss = Num(t, "loss_pct");
    TopStyle style = loss && *loss > 0 ? TopStyle::kWarn : TopStyle::kNormal;
    Add(lines, st,
        "NET  " + Str(t, "name") + " (" + Str(t, "group") + ") rtt " +
            (Num(t, "rtt_median_ms") ? Fmt("%.2f", *Num(t, "rtt_median_ms")) : "-") + " ms  loss " +
            Int(loss) + "%" + (Str(t, "error").empty() ? "" : "  " + Str(t, "error")),
        style);
  }
}

// "3d04h", "2h05m", "4m10s", "12s".
std::string Age(double s) {
  if (!(s >= 0)) return "-";
  auto n = static_cast<long long>(s);
  char buf[32];
  if (n >= 86400) {
    std::snprintf(buf, sizeof buf, "%lldd%02lldh", n / 86400, n % 86400 / 3600);
  } else if (n >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", n / 3600, n % 3600 / 60);
  } else if (n >= 60) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", n / 60, n % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%llds", n);
  }
  return buf;
}

// The lifecycle's open episodes (a watch daemon's status only): what is open, for how long,
// whether someone acknowledged it and what to do, including what this tick no longer sees (an
// Xid that needs a reset stays open after the log went quiet).
void AddOpenFindings(std::vector<TopLine>& lines, const TopViewState& st, const json& open) {
  if (!open.is_array()) return;
  Add(lines, st, "OPEN " + std::to_string(open.size()) + "  (episodes: age, ack, action)",
      TopStyle::kHeader);
  if (open.empty()) Add(lines, st, "none open", TopStyle::kOk);
  for (const json& e : open) {
    const json& f = Field(e, "finding");
    int r = SeverityRank(Str(f, "severity"));
    std::string sev = r >= 3 ? "CRIT" : r == 2 ? "WARN" : "info";
    std::string where;
    if (auto g = FindingGpu(f)) where = " GPU" + std::to_string(*g);
    if (!Str(f, "subject").empty()) where += " " + Str(f, "subject");
    auto age = Num(e, "open_s");
    const json& acked = Field(e, "acked");
    std::string ack = acked.is_boolean() && acked.get<bool>() ? "  acked" : "";
    std::string action = Str(f, "action").empty() ? "" : "  [" + Str(f, "action") + "]";
    TopStyle style = ack.empty() && r >= 2 ? StyleForRank(r) : TopStyle::kDim;
    Add(lines, st,
        sev + " " + Str(f, "id") + where + "  open " + (age ? Age(*age) : "-") + ack + action +
            "  " + Str(f, "summary"),
        style);
  }
}

}  // namespace

std::string ThrottleReasonNames(uint64_t mask) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {0x2, "app_clocks"},  {0x4, "sw_power"},    {0x8, "hw_slowdown"},  {0x10, "sync_boost"},
      {0x20, "sw_thermal"}, {0x40, "hw_thermal"}, {0x80, "power_brake"}, {0x100, "display"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((mask & bit) == 0) continue;
    if (!out.empty()) out += ",";
    out += name;
  }
  return out.empty() ? "-" : out;
}

TopSort NextTopSort(TopSort s) {
  switch (s) {
    case TopSort::kIndex:
      return TopSort::kUtil;
    case TopSort::kUtil:
      return TopSort::kMemory;
    case TopSort::kMemory:
      return TopSort::kTemp;
    case TopSort::kTemp:
      return TopSort::kPower;
    case TopSort::kPower:
      return TopSort::kIndex;
  }
  return TopSort::kIndex;
}

const char* TopSortName(TopSort s) {
  switch (s) {
    case TopSort::kIndex:
      return "index";
    case TopSort::kUtil:
      return "util";
    case TopSort::kMemory:
      return "memory";
    case TopSort::kTemp:
      return "temp";
    case TopSort::kPower:
      return "power";
  }
  return "index";
}

namespace {

// The value a GPU row is sorted by (nullopt sorts last).
std::optional<double> SortValue(const json& g, TopSort s) {
  switch (s) {
    case TopSort::kIndex:
      return std::nullopt;
    case TopSort::kUtil:
      return Num(g, "util_gpu_pct");
    case TopSort::kMemory:
      return Num(g, "memory_used_bytes");
    case TopSort::kTemp:
      return Num(g, "temp_c");
    case TopSort::kPower:
      return Num(g, "power_mw");
  }
  return std::nullopt;
}

// One GPU's processes, most GPU memory first (at most 8; the rest counted).
void AddProcesses(std::vector<TopLine>& lines, const TopViewState& st, const json& g) {
  const json& procs = Field(g, "processes");
  if (!procs.is_array()) {
    Add(lines, st, "      processes: not reported by this driver", TopStyle::kDim);
    return;
  }
  std::vector<const json*> sorted;
  for (const json& p : procs) {
    if (p.is_object()) sorted.push_back(&p);
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const json* a, const json* b) {
    return Num(*a, "used_bytes").value_or(-1) > Num(*b, "used_bytes").value_or(-1);
  });
  if (sorted.empty()) Add(lines, st, "      no processes", TopStyle::kDim);
  constexpr size_t kMaxShown = 8;
  for (size_t i = 0; i < sorted.size() && i < kMaxShown; ++i) {
    const json& p = *sorted[i];
    char buf[160];
    std::snprintf(buf, sizeof buf, "      pid %-8s %-12s %-16s %s", Int(Num(p, "pid")).c_str(),
                  (Str(p, "user").empty() ? "-" : Str(p, "user")).c_str(),
                  (Str(p, "comm").empty() ? "-" : Str(p, "comm")).c_str(),
                  Bytes(Num(p, "used_bytes")).c_str());
    Add(lines, st, buf, TopStyle::kDim);
  }
  if (sorted.size() > kMaxShown) {
    Add(lines, st, "      +" + std::to_string(sorted.size() - kMaxShown) + " more", TopStyle::kDim);
  }
}

// "10m", "90s": the history window's length.
std::string WindowText(int64_t s) {
  return s % 60 == 0 ? std::to_string(s / 60) + "m" : std::to_string(s) + "s";
}

// True when `points` has a sample (with or without a value) inside [from, to].
bool AnyInWindow(const std::vector<HistoryPoint>& points, int64_t from, int64_t to) {
  return std::any_of(points.begin(), points.end(),
                     [&](const HistoryPoint& p) { return p.unix_s >= from && p.unix_s <= to; });
}

// The history line under GPU `index`: "      util ▁▂▅█  temp ▃▃▄  10m"; nothing when the daemon
// has no sample of this GPU in the window or the screen is too narrow.
void AddHistory(std::vector<TopLine>& lines, const TopViewState& st, int index) {
  if (!st.show_history || !st.history) return;
  const TopHistory& h = *st.history;
  if (h.to_unix_s <= h.from_unix_s) return;
  auto it = h.gpus.find(index);
  if (it == h.gpus.end()) return;
  const GpuHistory& g = it->second;
  if (!AnyInWindow(g.util, h.from_unix_s, h.to_unix_s) &&
      !AnyInWindow(g.temp, h.from_unix_s, h.to_unix_s)) {
    return;
  }
  int w = SparklineWidth(st.width);
  if (w < 1) return;
  std::string text =
      "      util " +
      Sparkline(g.util, h.from_unix_s, h.to_unix_s, w, kSparkUtilLow, kSparkUtilHigh, st.unicode) +
      "  temp " +
      Sparkline(g.temp, h.from_unix_s, h.to_unix_s, w, kSparkTempLowC, kSparkTempHighC,
                st.unicode) +
      "  " + WindowText(h.to_unix_s - h.from_unix_s);
  lines.push_back({CutColumns(TerminalSafe(text, std::string::npos), st.width), TopStyle::kDim});
}

}  // namespace

bool ApplyTopKey(int key, TopViewState* st) {
  switch (key) {
    case 'f':
    case 'F':
      st->findings_detail = !st->findings_detail;
      return true;
    case '?':
    case 'h':
    case 'H':
      st->help = !st->help;
      return true;
    case 's':
    case 'S':
      st->sort = NextTopSort(st->sort);
      return true;
    case 'p':
    case 'P':
      st->processes = !st->processes;
      return true;
    case 't':
    case 'T':
      st->show_history = !st->show_history;
      return true;
    default:
      return false;
  }
}

int SparklineWidth(int screen_width) {
  // "      util " (11) + W + "  temp " (7) + W + "  10m" (5).
  int w = std::min(kMaxSparkWidth, (screen_width - 23) / 2);
  return w >= 4 ? w : 0;
}

std::string Sparkline(const std::vector<HistoryPoint>& points, int64_t from_unix_s,
                      int64_t to_unix_s, int width, double lo, double hi, bool unicode) {
  if (width < 1 || to_unix_s <= from_unix_s) return "";
  static const char* const kBlocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                        "\u2585", "\u2586", "\u2587", "\u2588"};
  static const char* const kAscii[] = {"_", ".", "-", ":", "=", "+", "*", "#"};
  auto glyph = [&](double v) -> const char* {
    int level = 0;
    if (hi > lo) {
      double f = (std::clamp(v, lo, hi) - lo) / (hi - lo);
      level = std::clamp(static_cast<int>(f * 8), 0, 7);
    }
    return unicode ? kBlocks[level] : kAscii[level];
  };
  std::vector<HistoryPoint> p = points;
  std::stable_sort(p.begin(), p.end(), [](const HistoryPoint& a, const HistoryPoint& b) {
    return a.unix_s < b.unix_s;
  });
  // The usual spacing of the samples (median of the positive gaps): 0 when it cannot be told.
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < p.size(); ++i) {
    if (p[i].unix_s > p[i - 1].unix_s) gaps.push_back(p[i].unix_s - p[i - 1].unix_s);
  }
  double step = 0;
  if (!gaps.empty()) {
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    step = static_cast<double>(gaps[gaps.size() / 2]);
  }
  // Each point's column: -1 before the window, `width` after it; sorted like the points.
  double span = static_cast<double>(to_unix_s - from_unix_s) / width;
  std::vector<int> col(p.size());
  std::vector<double> sum(static_cast<size_t>(width), 0);
  std::vector<int> n(static_cast<size_t>(width), 0);
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].unix_s < from_unix_s) {
      col[i] = -1;
    } else if (p[i].unix_s > to_unix_s) {
      col[i] = width;
    } else {
      col[i] = std::min(width - 1, static_cast<int>((p[i].unix_s - from_unix_s) / span));
      const std::optional<double>& v = p[i].value;
      if (v && std::isfinite(*v)) {
        sum[col[i]] += *v;
        ++n[col[i]];
      }
    }
  }
  std::string out;
  for (int c = 0; c < width; ++c) {
    // The first point at or after this column; the one before it is the latest earlier sample.
    size_t at = static_cast<size_t>(std::lower_bound(col.begin(), col.end(), c) - col.begin());
    bool has_point = at < col.size() && col[at] == c;
    double mean = n[c] > 0 ? sum[c] / n[c] : 0;
    if (n[c] > 0 && std::isfinite(mean)) {
      out += glyph(mean);
      continue;
    }
    if (!has_point && at > 0 && step > 0) {
      const HistoryPoint& prev = p[at - 1];
      int64_t next_s = at < p.size() ? p[at].unix_s : to_unix_s;
      if (prev.value && std::isfinite(*prev.value) &&
          static_cast<double>(next_s - prev.unix_s) <= 1.5 * step) {
        out += glyph(*prev.value);
        continue;
      }
    }
    out += ' ';
  }
  return out;
}

std::vector<TopLine> BuildTopLines(const json& status, const TopViewState& st) {
  std::vector<TopLine> lines;
  const json& findings = Field(status, "findings");
  int worst = 0;
  std::map<std::string, int> layer_rank;
  for (const json& f : findings) {
    int r = SeverityRank(Str(f, "severity"));
    worst = std::max(worst, r);
    layer_rank[Str(f, "layer")] = std::max(layer_rank[Str(f, "layer")], r);
  }
  std::string title = "gpudoctor top  " +
                      (Str(status, "host").empty() ? "?" : Str(status, "host")) + "  " + st.source +
                      "  every " + Fmt("%g", st.interval_s) + "s  " + Str(status, "time");
  // The document's verdict counts too: a status whose findings were cut still says crit.
  worst = std::max(worst, SeverityRank(Str(status, "verdict")));
  if (status.is_object()) title += "  verdict " + std::string(RankWord(worst));
  Add(lines, st, title, TopStyle::kHeader);
  if (!st.error.empty() || !st.history_error.empty()) {
    std::string error = st.error;
    if (!st.history_error.empty()) {
      error += (error.empty() ? "" : "; ") + std::string("history: ") + st.history_error;
    }
    Add(lines, st, "error: " + error, TopStyle::kCrit);
  }
  if (st.help) {
    for (const char* k :
         {"keys: q quit   ? or h this help   f findings detail   s sort GPUs (index, util, "
          "memory, temp, power)",
          "      p processes per GPU   j/k or arrows scroll   space/PgDn, PgUp page   g top   "
          "^L redraw",
          "      t GPU history (util 0-100%, temp 20-100 C, last 10 min; with --connect)"}) {
      Add(lines, st, k, TopStyle::kDim);
    }
  }
  if (!status.is_object()) {
    Add(lines, st, "waiting for the first sample...", TopStyle::kDim);
    return lines;
  }
  // Layers, worst first (troubleshooting order among equals).
  std::vector<std::pair<int, const char*>> layers;
  for (int i = 0; i < 4; ++i) layers.push_back({layer_rank[kLayers[i]], kLayers[i]});
  std::stable_sort(layers.begin(), layers.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string layer_line;
  for (const auto& [rank, name] : layers) {
    layer_line += std::string(name) + " " + RankWord(rank) + "   ";
  }
  Add(lines, st, layer_line, StyleForRank(worst));

  AddHost(lines, st, Field(status, "resources"));
  AddNetwork(lines, st, Field(status, "network"));

  const json& gpus = Field(status, "gpus");
  std::map<int, std::vector<const json*>> by_gpu;
  for (const json& f : findings) {
    if (auto g = FindingGpu(f)) by_gpu[*g].push_back(&f);
  }
  if (!gpus.is_array() || gpus.empty()) {
    Add(lines, st, "GPU  none seen (" + Str(Field(status, "nvml"), "state") + ")", TopStyle::kDim);
  } else {
    Add(lines, st,
        "GPU UTIL MEM(G) TEMP(C) POWER(W)   SM(MHz)  PCIE      STATE   (sort: " +
            std::string(TopSortName(st.sort)) + ", s)",
        TopStyle::kHeader);
    if (st.show_history && !st.history_note.empty()) {
      Add(lines, st, "      history: " + st.history_note, TopStyle::kDim);
    }
    std::vector<const json*> rows;
    for (const json& g : gpus) rows.push_back(&g);
    if (st.sort != TopSort::kIndex) {
      std::stable_sort(rows.begin(), rows.end(), [&](const json* a, const json* b) {
        auto va = SortValue(*a, st.sort), vb = SortValue(*b, st.sort);
        if (va.has_value() != vb.has_value()) return va.has_value();
        return va && *va > *vb;
      });
    }
    for (const json* row_json : rows) {
      const json& g = *row_json;
      auto raw_index = Num(g, "index");
      int index =
          raw_index && *raw_index >= 0 && *raw_index < 1e6 ? static_cast<int>(*raw_index) : -1;
      int rank = 0;
      std::string state = GpuState(g, by_gpu[index], &rank);
      // PCIe as gen x width, with the maximum only when the link runs below it.
      std::string pcie = Int(Num(g, "pcie_gen")) + "x" + Int(Num(g, "pcie_width"));
      std::string pcie_max = Int(Num(g, "pcie_max_gen")) + "x" + Int(Num(g, "pcie_max_width"));
      if (pcie_max != "-x-" && pcie_max != pcie) pcie += "/" + pcie_max;
      char buf[200];
      std::snprintf(
          buf, sizeof buf, "%3d %3s%% %3s/%-3s %3s/%-3s %4s/%-4s %4s/%-4s %-9s", index,
          Int(Num(g, "util_gpu_pct")).c_str(), Int(Num(g, "memory_used_bytes"), 1 << 30).c_str(),
          Int(Num(g, "memory_total_bytes"), 1 << 30).c_str(), Int(Num(g, "temp_c")).c_str(),
          Int(Num(g, "temp_slowdown_c")).c_str(), Int(Num(g, "power_mw"), 1000).c_str(),
          Int(Num(g, "power_limit_mw"), 1000).c_str(), Int(Num(g, "sm_clock_mhz")).c_str(),
          Int(Num(g, "max_sm_clock_mhz")).c_str(), pcie.c_str());
      std::string row = buf;
      Add(lines, st, row + " " + state, rank >= 2 ? StyleForRank(rank) : TopStyle::kNormal);
      AddHistory(lines, st, index);
      if (st.processes) AddProcesses(lines, st, g);
    }
  }

  int open = 0;
  for (const json& f : findings) open += SeverityRank(Str(f, "severity")) >= 1 ? 1 : 0;
  Add(lines, st,
      "FINDINGS " + std::to_string(open) + (st.findings_detail ? "  (f: short)" : "  (f: detail)") +
          "  ?: keys  q: quit",
      TopStyle::kHeader);
  if (open == 0) Add(lines, st, "none: every layer looks healthy", TopStyle::kOk);
  for (const json& f : findings) {
    int r = SeverityRank(Str(f, "severity"));
    std::string sev = r >= 3 ? "CRIT" : r == 2 ? "WARN" : "info";
    TopStyle style = r >= 2 ? StyleForRank(r) : TopStyle::kNormal;
    Add(lines, st, sev + " " + Str(f, "id") + "  " + Str(f, "summary"), style);
    const json& steps = Field(f, "next_steps");
    if (st.findings_detail) {
      std::string ev = EvidenceText(Field(f, "evidence"));
      if (!ev.empty()) AddWrapped(lines, st, "     ", "evidence: " + ev, TopStyle::kDim);
      for (const json& s : steps) {
        if (s.is_string())
          AddWrapped(lines, st, "     - ", s.get<std::string>(), TopStyle::kNormal);
      }
    } else if (steps.is_array() && !steps.empty() && steps[0].is_string()) {
      Add(lines, st, "     -> " + steps[0].get<std::string>(), TopStyle::kDim);
    }
  }
  AddOpenFindings(lines, st, Field(status, "open_findings"));
  return lines;
}

}  // namespace gpudoctor
