// Fleet input paths: every bus-id spelling names one slot, a mistyped serial or slot is "unknown"
// with the nearest names, report directories are read recursively (bounded), pdsh output is
// demultiplexed per host, and a truncated report in a stream never swallows the next one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/time_spec.h"
#include "fleet/analysis.h"
#include "fleet/ledger.h"
#include "fleet/onsets.h"
#include "fleet/report_reader.h"
#include "test_util.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::json;
constexpr int64_t kT0 = 1768003200;  // 2026-01-10T00:00:00Z
constexpr int64_t kNow = kT0 + 86400 * 10;

json Gpu(const std::string& serial, const std::string& bus) {
  return {{"index", 0},          {"uuid", "GPU-" + serial},         {"serial", serial},
          {"pci_bus_id", bus},   {"name", "NVIDIA H100 80GB HBM3"}, {"util_gpu_pct", 97},
          {"sm_clock_mhz", 1980}};
}

json Xid79(const json& gpu) {
  return {{"id", "gpu.xid"},     {"severity", "crit"},        {"layer", "hardware"},
          {"summary", "Xid 79"}, {"evidence", {{"xid", 79}}}, {"gpu", gpu}};
}

std::string Report(const std::string& node, int64_t t, const json& gpus,
                   const json& findings = json::array()) {
  return json{{"verdict", "ok"},
              {"host", node},
              {"time", FormatUtc(t)},
              {"findings", findings},
              {"gpus", gpus}}
      .dump(2);
}

TEST(FleetInputTest, CanonicalBusIdMergesEverySpelling) {
  for (const char* s : {"0000:3A:00.0", "00000000:3A:00.0", "0000:3a:00.0", "3a:00.0",
                        "00000000:3a:00.0", "0000:3a:00"}) {
    EXPECT_EQ(CanonicalBusId(s), "0000:3a:00.0") << s;
  }
  EXPECT_EQ(CanonicalBusId("b1"), "b1");  // no bus id: kept as given
  EXPECT_EQ(CanonicalBusId(""), "");
}

// Two cards fault in node07's slot 3a, each report spelling the bus id differently: one slot,
// judged "slot" whichever way the user types it.
TEST(FleetInputTest, SlotVerdictForEveryBusIdSpelling) {
  FleetData d;
  auto add = [&](int64_t t, const std::string& serial, const std::string& bus, bool fault) {
    json g = Gpu(serial, bus);
    json f = fault ? json::array({Xid79(g)}) : json::array();
    ASSERT_TRUE(AddReport(Report("node07", t, json::array({g}), f), "r", kNow, d).ok());
  };
  add(kT0, "A", "00000000:3A:00.0", true);
  add(kT0 + 86400, "A", "0000:3a:00.0", true);
  add(kT0 + 2 * 86400, "B", "0000:3A:00.0", true);
  add(kT0 + 3 * 86400, "B", "3a:00.0", true);
  auto ledger = BuildLedger(d);
  ASSERT_EQ(ledger.size(), 2u);  // A and B, one slot each: not four slots
  EXPECT_EQ(ledger[0].pci_bus_id, "0000:3a:00.0");
  auto faults = HardwareFaults(d, FindOnsets(d));
  for (const char* slot : {"node07:0000:3A:00.0", "node07:00000000:3A:00.0", "node07:0000:3a:00.0",
                           "node07:00000000:3a:00.0", "node07:3a:00.0"}) {
    Verdict v = JudgeSlot(slot, ledger, faults);
    EXPECT_EQ(v.verdict, "slot") << slot << ": " << v.reason;
    EXPECT_EQ(v.tenures.size(), 2u) << slot;
    EXPECT_EQ(v.faults.size(), 2u) << slot;  // one onset per card: present in both its reports
  }
}

TEST(FleetInputTest, UnknownSerialOrSlotNamesTheNearest) {
  std::vector<Tenure> ledger = {{"1324021001234", "n1", "0000:3a:00.0", 0, 10, 2},
                                {"1324021005678", "n2", "0000:3a:00.0", 0, 10, 2},
                                {"SN-OTHER", "n3", "0000:18:00.0", 0, 10, 2}};
  Verdict v = JudgeCard("1324021001243", ledger, {});
  EXPECT_EQ(v.verdict, "unknown");
  EXPECT_NE(v.reason.find("no such serial 1324021001243"), std::string::npos) << v.reason;
  ASSERT_EQ(v.nearest.size(), 3u);
  EXPECT_EQ(v.nearest[0], "1324021001234");  // two transposed digits: distance 2
  EXPECT_EQ(v.nearest[1], "1324021005678");
  json j = json::parse(RenderVerdictJson(v));
  EXPECT_EQ(j["verdict"], "unknown");
  EXPECT_EQ(j["nearest"][0], "1324021001234");
  // A serial that is there is judged, not "unknown".
  EXPECT_NE(JudgeCard("SN-OTHER", ledger, {}).verdict, "unknown");
  Verdict s = JudgeSlot("n4:0000:3a:00.0", ledger, {});
  EXPECT_EQ(s.verdict, "unknown");
  ASSERT_FALSE(s.nearest.empty());
  EXPECT_EQ(s.nearest[0], "n1:0000:3a:00.0");
  EXPECT_EQ(JudgeCard("X", {}, {}).verdict, "unknown");  // empty data: no nearest, no crash
}

TEST(FleetInputTest, EditDistanceAndNearestNames) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("SN-a", "sn-A"), 0u);  // case-insensitive
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(NearestNames("abd", {"xyz", "abc", "abd0", ""}, 2),
            (std::vector<std::string>{"abc", "abd0"}));
  // Hostile lengths stay bounded (first 256 characters compared).
  EXPECT_EQ(NearestNames(std::string(100000, 'a'), {std::string(100000, 'a')}).size(), 1u);
}

TEST(FleetInputTest, TruncatedReportDoesNotSwallowTheNext) {
  std::string a = Report("nodeA", kT0, json::array({Gpu("A", "0000:18:00.0")}));
  std::string b = Report("nodeB", kT0, json::array({Gpu("B", "0000:18:00.0")}));
  std::string c = Report("nodeC", kT0, json::array({Gpu("C", "0000:18:00.0")}));
  // Cut inside a nested object, and cut inside a string: both before a complete report.
  std::string cut_object = a.substr(0, a.find("\"sm_clock_mhz\""));
  std::string cut_string = a.substr(0, a.find("H100"));
  for (const std::string& cut : {cut_object, cut_string}) {
    std::string stream = cut + "\n" + b + "\n" + cut + "\n" + c + "\n";
    auto docs = SplitDocuments(stream);
    ASSERT_EQ(docs.size(), 4u) << stream;
    FleetData d;
    AddReportStream(stream, "stdin", kNow, d);
    ASSERT_EQ(d.reports.size(), 2u);
    EXPECT_EQ(d.reports[0].node, "nodeB");
    EXPECT_EQ(d.reports[1].node, "nodeC");
    ASSERT_EQ(d.problems.size(), 2u);
    EXPECT_EQ(d.problems[0].source, "stdin#1");
    EXPECT_EQ(d.problems[1].source, "stdin#3");
  }
  // A valid document whose nested object starts a line is not cut.
  std::string odd =
      "{\"host\": \"nodeD\", \"time\": \"" + FormatUtc(kT0) +
      "\", \"gpus\": [],\n\"findings\": [\n{\"id\": \"x\", \"severity\": \"info\"}]}\n";
  EXPECT_EQ(SplitDocuments(odd).size(), 1u);
  FleetData d;
  AddReportStream(odd + b, "stdin", kNow, d);
  EXPECT_EQ(d.reports.size(), 2u);
  EXPECT_TRUE(d.problems.empty());
}

std::string Prefixed(const std::string& host, const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    out += host + ": " + text.substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  return out;
}

TEST(FleetInputTest, PdshOutputIsSplitPerHost) {
  // pdsh prints "HOST: line", lines of different hosts interleaved.
  std::string a =
      Prefixed("node01", Report("node01", kT0, json::array({Gpu("A", "0000:18:00.0")})));
  std::string b =
      Prefixed("node02.cluster-x", Report("node02", kT0, json::array({Gpu("B", "0000:18:00.0")})));
  std::string cut = Prefixed("node03", Report("node03", kT0, json::array()).substr(0, 30));
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    for (size_t pos = 0; pos < text.size();) {
      size_t end = text.find('\n', pos) + 1;
      out.push_back(text.substr(pos, end - pos));
      pos = end;
    }
    return out;
  };
  auto la = lines(a), lb = lines(b);
  std::string stream;
  for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    if (i < la.size()) stream += la[i];
    if (i < lb.size()) stream += lb[i];
    if (i == 3) stream += cut;  // a host whose output was cut off mid-way
  }
  auto hosts = SplitPdshStreams(stream);
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].first, "node01");
  EXPECT_EQ(hosts[1].first, "node02.cluster-x");
  FleetData d;
  AddReportStream(stream, "stdin", kNow, d);
  ASSERT_EQ(d.reports.size(), 2u);
  EXPECT_EQ(d.reports[0].node, "node01");
  EXPECT_EQ(d.reports[1].node, "node02");
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].source, "stdin:node03#1");
  // Not pdsh output: nothing to demultiplex.
  EXPECT_TRUE(SplitPdshStreams(Report("node01", kT0, json::array())).empty());
  EXPECT_TRUE(SplitPdshStreams("").empty());
}

TEST(FleetInputTest, ReportDirectoriesAreReadRecursivelyAndBounded) {
  testing::TempDir dir;
  auto gpus = json::array({Gpu("A", "0000:18:00.0")});
  dir.Write("top.json", Report("n0", kT0, gpus));
  dir.Write("rack1/n1.json", Report("n1", kT0, gpus));
  dir.Write("rack1/day2/n1.json", Report("n1", kT0 + 86400, gpus));
  dir.Write("rack1/notes.txt", "not a report");
  std::string deep = "deep";
  for (int i = 0; i < 9; ++i) deep += "/d" + std::to_string(i);
  dir.Write(deep + "/n9.json", Report("n9", kT0, gpus));
  ASSERT_EQ(symlink((dir.path() + "/rack1").c_str(), (dir.path() + "/loop").c_str()), 0);
  FleetData d;
  ASSERT_TRUE(ReadReports(dir.path(), kNow, d).ok());
  ASSERT_EQ(d.reports.size(), 3u);
  std::set<std::string> nodes;
  for (const auto& r : d.reports) nodes.insert(r.node);
  EXPECT_EQ(nodes, (std::set<std::string>{"n0", "n1"}));
  std::string problems;
  for (const auto& p : d.problems) problems += p.source + ": " + p.message + "\n";
  EXPECT_NE(problems.find("/loop: symbolic link to a directory: not followed"), std::string::npos)
      << problems;
  EXPECT_NE(problems.find("levels deep: skipped"), std::string::npos) << problems;
  EXPECT_EQ(d.problems.size(), 2u) << problems;
}

}  // namespace
}  // namespace gpudoctor::fleet
