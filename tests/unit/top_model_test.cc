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
