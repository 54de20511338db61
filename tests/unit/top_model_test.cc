// gpudoctor top's model: screen lines from a status document, without a terminal.
#include "tui/top_model.h"

#include <gtest/gtest.h>

#include "cli/cli_options.h"
#include "serve/status_json.h"
#include "test_util.h"
#include "tui/status_check.h"
#include "tui/status_source.h"
#include "watch_tick_util.h"

namespace gpudoctor {
namespace {

using json = nlohmann::json;

json Golden(const std::string& name) {
  return json::parse(
      testing::ReadFileOrDie(std::string(GPUDOCTOR_SOURCE_DIR) + "/tests/e2e/golden/" + name));
}

std::string Joined(const std::vector<TopLine>& lines) {
  std::string out;
  for (const auto& l : lines) out += l.text + "\n";
  return out;
}

const TopLine* LineStarting(const std::vector<TopLine>& lines, const std::string& prefix) {
  for (const auto& l : lines) {
    if (l.text.rfind(prefix, 0) == 0) return &l;
  }
  return nullptr;
}

TEST(TopModelTest, ThermalNodeShowsEveryGpuAndMarksTheHotOne) {
  TopViewState st;
  st.width = 120;
  st.source = "local";
  auto lines = BuildTopLines(Golden("check_gpu_thermal.json"), st);
  std::string all = Joined(lines);
  for (int i = 0; i < 8; ++i) {
    EXPECT_NE(LineStarting(lines, "  " + std::to_string(i) + " "), nullptr) << i << "\n" << all;
  }
  const TopLine* hot = LineStarting(lines, "  3 ");
  ASSERT_NE(hot, nullptr);
  EXPECT_NE(hot->text.find(" 88/87 "), std::string::npos) << hot->text;  // temp vs slowdown
  EXPECT_NE(hot->text.find("CRIT gpu.thermal"), std::string::npos) << hot->text;
  EXPECT_NE(hot->text.find("hw_thermal"), std::string::npos) << hot->text;
  EXPECT_EQ(hot->style, TopStyle::kCrit);
  const TopLine* cool = LineStarting(lines, "  0 ");
  ASSERT_NE(cool, nullptr);
  EXPECT_NE(cool->text.find(" 655/700 "), std::string::npos) << cool->text;  // power W vs limit
  EXPECT_NE(cool->text.find("1980/1980"), std::string::npos) << cool->text;
  EXPECT_NE(cool->text.find(" 5x16 "), std::string::npos) << cool->text;
  // The verdict per layer, worst first; the first next step under the finding.
  const TopLine* layers = LineStarting(lines, "hardware CRIT");
  ASSERT_NE(layers, nullptr) << all;
  EXPECT_NE(
      all.find("CRIT gpu.thermal  GPU 3: hardware thermal slowdown active\n     -> Check cooling"),
      std::string::npos)
      << all;
}

// Issue 17 §4: the lifecycle's open episodes, not only what the last tick saw: an Xid that needs
// a reset is listed with its age and action after the tick stopped seeing it; an acknowledged
// one says so and is drawn dim.
TEST(TopModelTest, OpenEpisodesShowAgeAckAndAction) {
  int64_t now_ms = 1764000060000 + 7500 * 1000;  // 2h05m after the episodes opened
  auto tick = testing::MakeTick(now_ms);
  tick->report.findings.clear();  // this tick sees nothing
  tick->findings[0].last.id = "gpu.xid";
  tick->findings[0].last.action = Action::kDrainReset;
  tick->findings[1].acked = true;
  tick->findings[1].acked_ms = now_ms - 1000;
  json status = json::parse(RenderStatusJson(*tick));
  ASSERT_TRUE(CheckStatusDocument(status).ok()) << CheckStatusDocument(status).ToString();
  TopViewState st;
  st.width = 160;
  auto lines = BuildTopLines(status, st);
  std::string all = Joined(lines);
  EXPECT_NE(all.find("none: every layer looks healthy"), std::string::npos) << all;
  const TopLine* header = LineStarting(lines, "OPEN 2");
  ASSERT_NE(header, nullptr) << all;
  const TopLine* xid = LineStarting(lines, "CRIT gpu.xid GPU1  open 2h05m  [drain_reset]");
  ASSERT_NE(xid, nullptr) << all;
  EXPECT_EQ(xid->style, TopStyle::kCrit);
  const TopLine* acked = LineStarting(lines, "WARN host.disk.full");
  ASSERT_NE(acked, nullptr) << all;
  EXPECT_NE(acked->text.find("  acked"), std::string::npos) << acked->text;
  EXPECT_EQ(acked->style, TopStyle::kDim);
  // A check's document has no episodes: no OPEN section.
  status.erase("open_findings");
  EXPECT_EQ(LineStarting(BuildTopLines(status, st), "OPEN"), nullptr);
  // A server's episode list is checked like its findings.
  json bad = json::parse(RenderStatusJson(*tick));
  bad["open_findings"][0]["open_s"] = "forever";
  Status s = CheckStatusDocument(bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("open_findings[0].open_s"), std::string::npos) << s.ToString();
  bad = json::parse(RenderStatusJson(*tick));
  bad["open_findings"][1]["finding"]["severity"] = "fatal";
  EXPECT_FALSE(CheckStatusDocument(bad).ok());
}

TEST(TopModelTest, EveryLineFitsANarrowTerminal) {
  TopViewState st;
  st.width = 80;
  st.findings_detail = true;
  auto lines = BuildTopLines(Golden("check_gpu_ecc_dbe.json"), st);
  ASSERT_GT(lines.size(), 10u);
  for (const auto& l : lines) EXPECT_LE(l.text.size(), 80u) << l.text;
  // Detail mode wraps every next step instead of cutting the first.
  std::string all = Joined(lines);
  EXPECT_NE(all.find("evidence: "), std::string::npos) << all;
}

TEST(TopModelTest, DetailToggleShowsEvidenceAndAllSteps) {
  json status = Golden("check_gpu_thermal.json");
  TopViewState st;
  st.width = 200;
  std::string brief = Joined(BuildTopLines(status, st));
  st.findings_detail = true;
  std::string detail = Joined(BuildTopLines(status, st));
  EXPECT_EQ(brief.find("evidence:"), std::string::npos);
  EXPECT_NE(detail.find("evidence: "), std::string::npos) << detail;
  EXPECT_NE(detail.find("serial=1654922000013"), std::string::npos) << detail;
  EXPECT_NE(detail.find("hot aisle containment"), std::string::npos) << detail;  // third step
  EXPECT_EQ(brief.find("hot aisle containment"), std::string::npos);
}

TEST(TopModelTest, MissingValuesAreDashesNotZeros) {
  json status = {{"verdict", "ok"},
                 {"host", "n1"},
                 {"findings", json::array()},
                 {"gpus", json::array({{{"index", 0}, {"util_gpu_pct", 5}}})}};
  TopViewState st;
  auto lines = BuildTopLines(status, st);
  const TopLine* row = LineStarting(lines, "  0 ");
  ASSERT_NE(row, nullptr) << Joined(lines);
  EXPECT_NE(row->text.find("  5% "), std::string::npos) << row->text;
  EXPECT_NE(row->text.find("  -/-  "), std::string::npos) << row->text;
  EXPECT_EQ(row->text.find(" 0/"), std::string::npos) << row->text;
  EXPECT_NE(Joined(lines).find("none: every layer looks healthy"), std::string::npos);
}

TEST(TopModelTest, NoGpusAndNoSampleYet) {
  TopViewState st;
  st.error = "http://127.0.0.1:9835/api/v1/status: Couldn't connect to server";
  auto waiting = BuildTopLines(json(), st);
  std::string w = Joined(waiting);
  EXPECT_NE(w.find("waiting for the first sample"), std::string::npos) << w;
  EXPECT_NE(w.find("error: http://127.0.0.1:9835"), std::string::npos) << w;
  json none = {
      {"findings", json::array()}, {"gpus", json::array()}, {"nvml", {{"state", "absent"}}}};
  EXPECT_NE(Joined(BuildTopLines(none, TopViewState())).find("GPU  none seen (absent)"),
            std::string::npos);
}

// Issue 8 item 9: a URL target shows its status, time to first byte and failed share, not an
// RTT and loss it does not have.
TEST(TopModelTest, UrlTargetShowsStatusAndFirstByte) {
  TopViewState st;
  st.width = 160;
  json status = {{"network",
                  {{"reachability",
                    {{{"name", "https://api:8443/healthz"},
                      {"group", "target"},
                      {"http_status", 503},
                      {"http_ttfb_ms", 12.5},
                      {"http_failed_pct", 100.0},
                      {"http_error", "HTTP 503"}},
                     {{"name", "10.0.0.1"},
                      {"group", "target"},
                      {"rtt_median_ms", 0.5},
                      {"loss_pct", 0.0}}}}}}};
  auto lines = BuildTopLines(status, st);
  const TopLine* url = LineStarting(lines, "NET  https://api:8443/healthz");
  ASSERT_NE(url, nullptr) << Joined(lines);
  EXPECT_EQ(url->text,
            "NET  https://api:8443/healthz (target) status 503  first byte 12.5 ms  failed 100%  "
            "HTTP 503");
  EXPECT_EQ(url->style, TopStyle::kWarn);
  const TopLine* ping = LineStarting(lines, "NET  10.0.0.1");
  ASSERT_NE(ping, nullptr);
  EXPECT_NE(ping->text.find("rtt 0.50 ms"), std::string::npos) << ping->text;
}

// The block characters, lowest to highest (U+2581..U+2588).
constexpr const char* kB1 = "\u2581";
constexpr const char* kB5 = "\u2585";
constexpr const char* kB8 = "\u2588";

std::string Repeat(const char* s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Columns of a history line: every character in it is one column wide (one code point).
size_t Columns(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// Samples every `step` s from `from` to `to` inclusive, all `value`.
std::vector<HistoryPoint> Every(int64_t from, int64_t to, int64_t step, double value) {
  std::vector<HistoryPoint> out;
  for (int64_t t = from; t <= to; t += step) out.push_back({t, value});
  return out;
}

TEST(TopSparklineTest, FixedScalesMapTheEndsToTheLowestAndHighestBlock) {
  // Utilisation 0..1: 0 is the lowest block (not a gap), 1 the highest, 0.5 the fifth of eight.
  std::vector<HistoryPoint> util = {{0, 0.0}, {10, 0.5}, {20, 1.0}};
  EXPECT_EQ(Sparkline(util, 0, 30, 3, kSparkUtilLow, kSparkUtilHigh), std::string(kB1) + kB5 + kB8);
  // Out of range values are clamped, never wrapped or dropped.
  EXPECT_EQ(Sparkline({{0, -3.0}, {10, 7.0}}, 0, 20, 2, 0, 1), std::string(kB1) + kB8);
  // Eight equal steps: just under an eighth is still the lowest block, just over the next.
  EXPECT_EQ(Sparkline({{0, 0.124}, {10, 0.126}, {20, 0.874}, {30, 0.876}}, 0, 40, 4, 0, 1),
            "\u2581\u2582\u2587\u2588");
  // Temperature on 20..100 C: 20 and below lowest, 60 the middle, 100 and above highest.
  std::vector<HistoryPoint> temp = {{0, 20.0}, {10, 60.0}, {20, 100.0}, {30, 15.0}, {40, 130.0}};
  EXPECT_EQ(Sparkline(temp, 0, 50, 5, kSparkTempLowC, kSparkTempHighC),
            std::string(kB1) + kB5 + kB8 + kB1 + kB8);
  // A column draws the mean of its samples; the order of the points does not matter.
  EXPECT_EQ(Sparkline({{5, 1.0}, {1, 0.0}}, 0, 10, 1, 0, 1), kB5);
  // ASCII for terminals whose locale is not UTF-8.
  EXPECT_EQ(Sparkline(util, 0, 30, 3, 0, 1, /*unicode=*/false), "_=#");
}

TEST(TopSparklineTest, MissingSamplesAreGaps) {
  // Samples every 10 s; the ones at 30 and 40 are missing and the one at 60 has no value.
  std::vector<HistoryPoint> pts = {{0, 1.0},  {10, 1.0},          {20, 1.0},
                                   {50, 1.0}, {60, std::nullopt}, {70, 1.0}};
  EXPECT_EQ(Sparkline(pts, 0, 80, 8, 0, 1), Repeat(kB8, 3) + "  " + kB8 + " " + kB8);
  // Nothing before the first sample or long after the last one.
  EXPECT_EQ(Sparkline(Every(30, 50, 10, 0.0), 0, 60, 6, 0, 1), "   " + Repeat(kB1, 3));
  EXPECT_EQ(Sparkline(Every(0, 10, 10, 0.0), 0, 60, 6, 0, 1), Repeat(kB1, 2) + "    ");
  EXPECT_EQ(Sparkline({}, 0, 60, 6, 0, 1), "      ");
  // Columns narrower than the sampling interval: a column between two consecutive samples
  // repeats the earlier one instead of looking like a missing sample.
  std::vector<HistoryPoint> ramp;
  for (int i = 0; i <= 10; ++i) ramp.push_back({i * 10, i / 10.0});
  std::string fine = Sparkline(ramp, 0, 100, 20, 0, 1);
  EXPECT_EQ(Columns(fine), 20u);
  EXPECT_EQ(fine.find(' '), std::string::npos) << fine;
  EXPECT_EQ(fine.substr(0, 6), Repeat(kB1, 2)) << fine;
}

TEST(TopSparklineTest, WidthIsExactAndFitsTheScreen) {
  auto pts = Every(0, 600, 5, 0.5);
  for (int w : {1, 7, 28, 60}) EXPECT_EQ(Columns(Sparkline(pts, 0, 600, w, 0, 1)), size_t(w)) << w;
  EXPECT_EQ(Sparkline(pts, 0, 600, 0, 0, 1), "");
  EXPECT_EQ(Sparkline(pts, 600, 600, 10, 0, 1), "");  // an empty window
  // Two sparklines and their labels fit the screen; at most kMaxSparkWidth; none when too narrow.
  EXPECT_EQ(SparklineWidth(80), 28);
  EXPECT_EQ(SparklineWidth(1000), kMaxSparkWidth);
  EXPECT_EQ(SparklineWidth(30), 0);
  for (int width = 31; width <= 300; ++width) {
    int w = SparklineWidth(width);
    EXPECT_LE(11 + w + 7 + w + 5, width) << width;
  }
}

// Issue: a short utilisation/temperature history per GPU from the watch top connects to.
TEST(TopModelTest, HistoryLineUnderEachGpuWithHistoryOnly) {
  json status = {{"verdict", "ok"},
                 {"host", "n1"},
                 {"findings", json::array()},
                 {"gpus", json::array({{{"index", 0}, {"util_gpu_pct", 50}},
                                       {{"index", 1}, {"util_gpu_pct", 5}}})}};
  TopViewState st;
  st.width = 80;
  auto history_lines = [](const std::vector<TopLine>& lines) {
    std::vector<std::string> out;
    for (const auto& l : lines) {
      if (l.text.rfind("      util ", 0) == 0) out.push_back(l.text);
    }
    return out;
  };
  // `top` without --connect: no history, and nothing said about it.
  std::string local = Joined(BuildTopLines(status, st));
  EXPECT_TRUE(history_lines(BuildTopLines(status, st)).empty()) << local;
  EXPECT_EQ(local.find("history"), std::string::npos) << local;

  // GPU 0 ramps from idle to busy at a steady 60 C; GPU 1 has no stored series.
  TopHistory h;
  h.to_unix_s = 1700000600;
  h.from_unix_s = h.to_unix_s - kHistoryWindowS;
  for (int64_t t = h.from_unix_s; t <= h.to_unix_s; t += 10) {
    h.gpus[0].util.push_back({t, static_cast<double>(t - h.from_unix_s) / kHistoryWindowS});
    h.gpus[0].temp.push_back({t, 60.0});
  }
  st.history = h;
  auto lines = BuildTopLines(status, st);
  std::string all = Joined(lines);
  auto hist = history_lines(lines);
  ASSERT_EQ(hist.size(), 1u) << all;
  // Right under GPU 0's row.
  size_t row0 = 0;
  while (row0 < lines.size() && lines[row0].text.rfind("  0 ", 0) != 0) ++row0;
  ASSERT_LT(row0 + 1, lines.size()) << all;
  EXPECT_EQ(lines[row0 + 1].text, hist[0]);
  EXPECT_EQ(lines[row0 + 1].style, TopStyle::kDim);
  int w = SparklineWidth(80);
  std::string util = Sparkline(h.gpus[0].util, h.from_unix_s, h.to_unix_s, w, 0, 1);
  EXPECT_EQ(hist[0], "      util " + util + "  temp " + Repeat(kB5, w) + "  10m");
  EXPECT_EQ(util.substr(0, 3), kB1) << util;             // idle first
  EXPECT_EQ(util.substr(util.size() - 3), kB8) << util;  // busy last
  EXPECT_LE(Columns(hist[0]), 80u) << hist[0];
  // GPU 1's row is followed by no history line.
  size_t row1 = 0;
  while (row1 < lines.size() && lines[row1].text.rfind("  1 ", 0) != 0) ++row1;
  ASSERT_LT(row1, lines.size()) << all;
  EXPECT_TRUE(row1 + 1 == lines.size() || lines[row1 + 1].text.rfind("      util", 0) != 0);

  // Narrower screens get shorter sparklines; a very narrow one none.
  st.width = 40;
  hist = history_lines(BuildTopLines(status, st));
  ASSERT_EQ(hist.size(), 1u);
  EXPECT_LE(Columns(hist[0]), 40u) << hist[0];
  st.width = 30;
  EXPECT_TRUE(history_lines(BuildTopLines(status, st)).empty());
  st.width = 80;

  // `t` hides and shows it again.
  EXPECT_TRUE(ApplyTopKey('t', &st));
  EXPECT_FALSE(st.show_history);
  EXPECT_TRUE(history_lines(BuildTopLines(status, st)).empty());
  EXPECT_TRUE(ApplyTopKey('T', &st));
  EXPECT_EQ(history_lines(BuildTopLines(status, st)).size(), 1u);
  EXPECT_FALSE(ApplyTopKey('x', &st));
  st.help = true;
  EXPECT_NE(Joined(BuildTopLines(status, st)).find("t GPU history"), std::string::npos);
  st.help = false;

  // A daemon without history: one dim note, not one per GPU; fetch errors on the error line.
  st.history.reset();
  st.history_note = "the daemon serves no history";
  all = Joined(BuildTopLines(status, st));
  size_t note = all.find("history: the daemon serves no history");
  ASSERT_NE(note, std::string::npos) << all;
  EXPECT_EQ(all.find("history: the daemon", note + 1), std::string::npos) << all;
  st.history_note.clear();
  st.history_error = "http://n1:9835/api/v1/history?metric=x: HTTP 500";
  lines = BuildTopLines(status, st);
  const TopLine* err = LineStarting(lines, "error: history: http://n1");
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->style, TopStyle::kCrit);
  st.error = "status down";
  EXPECT_NE(LineStarting(BuildTopLines(status, st), "error: status down; history: http://n1"),
            nullptr);
}

TEST(TopModelTest, ThrottleReasonNames) {
  EXPECT_EQ(ThrottleReasonNames(0), "-");
  EXPECT_EQ(ThrottleReasonNames(0x1), "-");  // idle is not a slowdown
  EXPECT_EQ(ThrottleReasonNames(0x44), "sw_power,hw_thermal");
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

Result<CliOptions> ParseTop(std::vector<const char*> args) {
  args.insert(args.begin(), "gpudoctor");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(TopFlagsTest, ConnectTakesAnHttpUrl) {
  auto ok = ParseTop({"top", "--connect", "http://127.0.0.1:9835", "--interval", "2"});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->Value("--connect").value_or(""), "http://127.0.0.1:9835");
  auto bad = ParseTop({"top", "--connect", "127.0.0.1:9835"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--connect"), std::string::npos) << bad.status().message();
}

TEST(TopFlagsTest, DaemonFetchReportsAnUnreachableDaemon) {
  // Port 9 on loopback (discard) is closed in the test environment: a quick io_error, no hang.
  auto fetch = DaemonStatusFetcher("http://127.0.0.1:9/", "", 2);
  auto r = fetch();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("http://127.0.0.1:9/api/v1/status"), std::string::npos)
      << r.status().message();
}

// The GPU table sorts by a value (highest first), shows each GPU's processes and the keys.
TEST(TopModelTest, SortsGpusShowsProcessesAndHelp) {
  json status = Golden("check_gpu_thermal.json");
  // Processes of GPU 3, as the nvml probe reports them (the golden fixture names none).
  status["gpus"][3]["processes"] = json::array(
      {{{"pid", 4101}, {"used_bytes", 1LL << 30}, {"comm", "python3"}, {"user", "alice"}},
       {{"pid", 4102}, {"used_bytes", 70LL << 30}, {"comm", "vllm"}, {"user", "svc"}}});
  TopViewState st;
  st.width = 140;
  auto rows = [&](const std::vector<TopLine>& lines) {
    std::vector<int> order;
    bool in_table = false;
    for (const auto& l : lines) {
      if (l.text.rfind("GPU UTIL", 0) == 0) {
        in_table = true;
        continue;
      }
      if (in_table && l.text.size() > 4 && l.text[0] == ' ' && l.text[3] == ' ' &&
          l.text.rfind("      ", 0) != 0) {
        order.push_back(std::stoi(l.text.substr(0, 3)));
      } else if (in_table && l.text.rfind("      ", 0) != 0) {
        break;
      }
    }
    return order;
  };
  auto by_index = rows(BuildTopLines(status, st));
  ASSERT_EQ(by_index.size(), 8u);
  EXPECT_EQ(by_index.front(), 0);
  st.sort = TopSort::kTemp;
  auto lines = BuildTopLines(status, st);
  auto by_temp = rows(lines);
  ASSERT_EQ(by_temp.size(), 8u);
  EXPECT_EQ(by_temp.front(), 3) << Joined(lines);  // the hot GPU first
  EXPECT_NE(Joined(lines).find("(sort: temp, s)"), std::string::npos);
  EXPECT_EQ(NextTopSort(TopSort::kPower), TopSort::kIndex);

  st.processes = true;
  std::string with_procs = Joined(BuildTopLines(status, st));
  size_t vllm = with_procs.find("pid 4102     svc          vllm");
  size_t python = with_procs.find("pid 4101     alice        python3");
  ASSERT_NE(vllm, std::string::npos) << with_procs;
  ASSERT_NE(python, std::string::npos) << with_procs;
  EXPECT_LT(vllm, python);  // most GPU memory first
  EXPECT_NE(with_procs.find("70G"), std::string::npos);

  EXPECT_EQ(Joined(BuildTopLines(status, st)).find("keys: q quit"), std::string::npos);
  st.help = true;
  EXPECT_NE(Joined(BuildTopLines(status, st)).find("keys: q quit"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor
