// Fleet analysis on generated data: report parsing, stragglers (persistence, hardware vs
// workload), onsets, lemons, failure statistics and card vs slot verdicts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/time_spec.h"
#include "fleet/analysis.h"
#include "fleet/ledger.h"
#include "fleet/onsets.h"
#include "fleet/prometheus_input.h"
#include "fleet/report_reader.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::json;
constexpr int64_t kT0 = 1768003200;  // 2026-01-10T00:00:00Z
constexpr int64_t kNow = kT0 + 86400 * 10;

json Gpu(int i, const std::string& node, double clock, double util, int reasons = 0) {
  return {{"index", i},
          {"uuid", "GPU-" + node + "-" + std::to_string(i)},
          {"serial", "SN-" + node + "-" + std::to_string(i)},
          {"pci_bus_id", "0000:0" + std::to_string(i) + ":00.0"},
          {"name", "NVIDIA H100 80GB HBM3"},
          {"util_gpu_pct", util},
          {"sm_clock_mhz", clock},
          {"max_sm_clock_mhz", 1980},
          {"power_mw", 650000},
          {"power_limit_mw", 700000},
          {"temp_c", 60},
          {"counters_first", {{"clock_event_reasons", reasons}, {"ecc_sbe_volatile", 0}}}};
}

json Report(const std::string& node, int64_t t, json gpus, json findings = json::array()) {
  return {{"verdict", "ok"},         {"host", node}, {"time", FormatUtc(t)}, {"findings", findings},
          {"probes", json::array()}, {"gpus", gpus}};
}

// nodes x 4 GPUs x windows; `tweak(node, window, gpus)` edits one report.
FleetData Fleet(int nodes, int windows,
                const std::function<void(int, int, json&, json&)>& tweak = nullptr) {
  FleetData d;
  for (int w = 0; w < windows; ++w) {
    for (int n = 0; n < nodes; ++n) {
      std::string node = "n" + std::to_string(n);
      json gpus = json::array(), findings = json::array();
      for (int i = 0; i < 4; ++i) gpus.push_back(Gpu(i, node, 1980 - i, 97));
      if (tweak) tweak(n, w, gpus, findings);
      Status s = AddReport(Report(node, kT0 + w * 300 + 5, gpus, findings).dump(),
                           node + "-" + std::to_string(w), kNow, d);
      EXPECT_TRUE(s.ok()) << s.message();
    }
  }
  return d;
}

TEST(FleetReaderTest, ParsesAReportAndKeepsMissingValuesAbsent) {
  FleetData d;
  json g = Gpu(0, "a", 1980, 90);
  g.erase("temp_c");
  ASSERT_TRUE(AddReport(Report("a", kT0, json::array({g})).dump(), "f", kNow, d).ok());
  ASSERT_EQ(d.samples.size(), 1u);
  EXPECT_FLOAT_EQ(*d.samples[0].sm_clock_mhz, 1980);
  EXPECT_FLOAT_EQ(*d.samples[0].power_w, 650);
  EXPECT_FALSE(d.samples[0].temp_c.has_value());
  EXPECT_EQ(d.cards[0].serial, "SN-a-0");
  EXPECT_FLOAT_EQ(*d.cards[0].power_limit_w, 700);
}

TEST(FleetReaderTest, BadInputIsReportedNotFatal) {
  FleetData d;
  std::string good = Report("a", kT0, json::array({Gpu(0, "a", 1980, 90)})).dump();
  EXPECT_FALSE(AddReport(good.substr(0, good.size() / 2), "cut", kNow, d).ok());
  EXPECT_FALSE(AddReport("[1,2]", "arr", kNow, d).ok());
  EXPECT_FALSE(AddReport(R"({"host":"x","time":"yesterday","findings":[]})", "t", kNow, d).ok());
  EXPECT_TRUE(AddReport(good, "first", kNow, d).ok());
  EXPECT_TRUE(AddReport(good, "second", kNow, d).ok());  // duplicate: skipped, reported
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].source, "second");
  EXPECT_NE(d.problems[0].message.find("duplicate"), std::string::npos);
  EXPECT_EQ(d.reports.size(), 1u);
  // Clock in the future: kept, flagged.
  EXPECT_TRUE(AddReport(Report("b", kNow + 7200, json::array()).dump(), "skew", kNow, d).ok());
  EXPECT_NE(d.problems.back().message.find("clock skew"), std::string::npos);
}

TEST(FleetReaderTest, SplitsAStreamAndNamesTheBadDocument) {
  FleetData d;
  std::string a = Report("a", kT0, json::array()).dump();
  std::string b = Report("b", kT0, json::array()).dump(2);
  AddReportStream(a + "\n" + b + "\n{\"host\": \"c\", \"ti", "stdin", kNow, d);
  EXPECT_EQ(d.reports.size(), 2u);
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].source, "stdin#3");
  EXPECT_EQ(SplitDocuments(R"({"a":"}{"} {"b":[{}]})").size(), 2u);
}

TEST(FleetStragglerTest, PersistentLowClockUnderLoadIsHardware) {
  FleetData d = Fleet(4, 6, [](int n, int w, json& gpus, json&) {
    if (n == 2 && w >= 1) {
      gpus[3]["sm_clock_mhz"] = 1400;
      gpus[3]["counters_first"]["clock_event_reasons"] = 0x8;
    }
  });
  auto s = FindStragglers(d, OutlierOptions{});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(d.cards[s[0].card].serial, "SN-n2-3");
  EXPECT_EQ(s[0].kind, "hardware");
  EXPECT_EQ(s[0].windows_outlier, 5);
  EXPECT_TRUE(s[0].throttle_seen);
  ASSERT_FALSE(s[0].metrics.empty());
  EXPECT_EQ(s[0].metrics[0].metric, "sm_clock_mhz");
  EXPECT_NEAR(s[0].metrics[0].gpu_median, 1400, 1);
}

TEST(FleetStragglerTest, LowUtilisationWithHealthyClocksIsWorkload) {
  FleetData d = Fleet(4, 4, [](int n, int, json& gpus, json&) {
    if (n == 1) gpus[0]["util_gpu_pct"] = 15;
  });
  auto s = FindStragglers(d, OutlierOptions{});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, "workload");
  EXPECT_NE(s[0].advice.find("will not fix"), std::string::npos);
}

TEST(FleetStragglerTest, AMomentaryBlipIsNotAStraggler) {
  FleetData d = Fleet(4, 6, [](int n, int w, json& gpus, json&) {
    if (n == 0 && (w == 2 || w == 4)) gpus[1]["sm_clock_mhz"] = 1100;
  });
  EXPECT_TRUE(FindStragglers(d, OutlierOptions{}).empty());
  OutlierOptions eager;
  eager.persist_windows = 2;
  EXPECT_TRUE(FindStragglers(d, eager).empty());  // 2 of 6 windows: under half
}

TEST(FleetStragglerTest, IdenticalPeersAndIdlePeersFlagNothing) {
  FleetData d = Fleet(3, 5);
  EXPECT_TRUE(FindStragglers(d, OutlierOptions{}).empty());
  FleetData idle = Fleet(3, 5, [](int n, int, json& gpus, json&) {
    for (auto& g : gpus) g["util_gpu_pct"] = 0;
    if (n == 0) gpus[0]["sm_clock_mhz"] = 345;  // idle clocks are not judged
  });
  EXPECT_TRUE(FindStragglers(idle, OutlierOptions{}).empty());
}

TEST(FleetStragglerTest, RisingErrorsAgainstQuietPeers) {
  FleetData d = Fleet(4, 6, [](int n, int w, json& gpus, json&) {
    if (n == 3) gpus[2]["counters_first"]["ecc_sbe_volatile"] = 100 * w;
  });
  auto s = FindStragglers(d, OutlierOptions{});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, "hardware");
  EXPECT_EQ(s[0].metrics[0].metric, "errors");
}

json Crit(const std::string& id, const json& gpu) {
  return {
      {"id", id},
      {"layer", "hardware"},
      {"severity", "crit"},
      {"summary", id},
      {"gpu", {{"index", gpu["index"]}, {"pci_bus_id", gpu["pci_bus_id"]}, {"uuid", gpu["uuid"]}}}};
}

TEST(FleetStatsTest, OnsetsLemonsAndProjectionArithmetic) {
  // n0 GPU1: ECC DBE in windows 0, 2, 4 (three onsets); n1: Xid held over windows 1-3 (one).
  FleetData d = Fleet(4, 6, [](int n, int w, json& gpus, json& f) {
    if (n == 0 && w % 2 == 0) f.push_back(Crit("gpu.ecc.dbe", gpus[1]));
    if (n == 1 && w >= 1 && w <= 3) f.push_back(Crit("gpu.xid", gpus[0]));
  });
  auto onsets = FindOnsets(d);
  ASSERT_EQ(onsets.size(), 4u);
  // Three onsets 10 minutes apart are one incident: no lemon with the default 1 h gap.
  EXPECT_TRUE(FindLemons(d, onsets, 3).empty());
  auto lemons = FindLemons(d, onsets, 3, /*incident_gap_s=*/60);
  ASSERT_EQ(lemons.size(), 2u);  // node n0 and card SN-n0-1 (serial filled from gpus facts)
  EXPECT_EQ(lemons[0].incidents, 3);
  EXPECT_EQ(lemons[0].onsets, 3);
  EXPECT_TRUE((lemons[0].name == "n0" && lemons[1].name == "SN-n0-1") ||
              (lemons[1].name == "n0" && lemons[0].name == "SN-n0-1"));
  auto st = ComputeFailureStats(d, onsets, 300);
  // 4 nodes x 4 GPUs x (1500 s + 300 s) = 28800 GPU-s = 1/3 GPU-day.
  EXPECT_NEAR(st.gpu_days, 1.0 / 3, 1e-9);
  EXPECT_EQ(st.failures, 4);
  const CategoryStats* mem = nullptr;
  for (const auto& c : st.categories) {
    if (c.category == "gpu_memory") mem = &c;
  }
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->failures, 3);
  EXPECT_NEAR(mem->per_day_at[0], 3 / (1.0 / 3) * 1000, 1e-6);
  EXPECT_NEAR(mem->mtbf_gpu_hours, 8.0 / 3, 1e-9);
  EXPECT_NE(mem->arithmetic.find("3 failures / 0.33 GPU-days"), std::string::npos);
  EXPECT_FALSE(st.note.empty());
}

TEST(FleetStatsTest, CategoriesFollowTheLlamaTable) {
  auto cat = [](const char* id) {
    FindingEvent e;
    e.id = id;
    return std::string(CategoryOf(e));
  };
  EXPECT_EQ(cat("gpu.ecc.dbe"), "gpu_memory");
  EXPECT_EQ(cat("gpu.remap.failed"), "gpu_memory");
  EXPECT_EQ(cat("gpu.xid"), "gpu");
  EXPECT_EQ(cat("gpu.nvlink.down"), "nvlink_pcie");
  EXPECT_EQ(cat("pcie.aer"), "nvlink_pcie");
  EXPECT_EQ(cat("net.ib.port"), "network");
  EXPECT_EQ(cat("host.oom"), "host");
  EXPECT_EQ(cat("driver.mismatch"), "software");
  // From the catalogue's traits, not from the id's prefix: a full GPU memory is the workload's.
  EXPECT_EQ(cat("gpu.memory.full"), "software");
  EXPECT_EQ(cat("gpu.util.sawtooth"), "software");
  EXPECT_EQ(cat("hardware.mce"), "host");
  EXPECT_EQ(cat("gpu.ecc.sbe_rate"), "gpu_memory");
  // An id a newer node reports that this build does not know: its layer's class.
  FindingEvent unknown;
  unknown.id = "gpu.future_thing";
  unknown.layer = Layer::kNetwork;
  EXPECT_STREQ(CategoryOf(unknown), "network");
  unknown.layer = Layer::kHardware;
  EXPECT_STREQ(CategoryOf(unknown), "gpu");
}

TEST(FleetHealthTableTest, WorstFirstAndMissingGpus) {
  FleetData d = Fleet(3, 3, [](int n, int w, json& gpus, json& f) {
    if (n == 2 && w == 2) f.push_back(Crit("gpu.xid", gpus[2]));
    if (n == 1 && w == 2) gpus.erase(3);  // GPU 3 gone from the latest report
  });
  FleetAnalysis a = Analyze(d, FleetOptions{});
  ASSERT_EQ(a.table.size(), 3u);
  EXPECT_EQ(a.table[0].node, "n2");
  EXPECT_EQ(a.table[0].worst, "crit");
  EXPECT_EQ(a.table[0].gpu_rows[0].worst_id, "gpu.xid");
  EXPECT_EQ(a.table[1].node, "n1");
  ASSERT_EQ(a.table[1].missing_cards.size(), 1u);
  EXPECT_EQ(d.cards[a.table[1].missing_cards[0]].serial, "SN-n1-3");
  EXPECT_EQ(FleetExitCode(a), 2);
  json j = json::parse(RenderFleetJson(d, a));
  EXPECT_EQ(j["nodes"][0]["node"], "n2");
  EXPECT_EQ(j["nodes"][1]["missing_gpus"][0]["serial"], "SN-n1-3");
}

// `fleet --json` writes the nodes one at a time between the halves of the rest of the document:
// the pieces must be exactly the document that dumping it as one tree gives (indentation, commas,
// an empty node list), and the string form must equal the pieces.
TEST(FleetHealthTableTest, JsonWrittenInPiecesIsTheWholeTreesDump) {
  for (int nodes : {0, 1, 3}) {
    FleetData d = Fleet(nodes, 2, [](int, int, json&, json&) {});
    FleetAnalysis a = Analyze(d, FleetOptions{});
    std::string pieces;
    int calls = 0;
    WriteFleetJson(d, a, [&](std::string_view p) {
      pieces.append(p);
      ++calls;
    });
    EXPECT_EQ(pieces, RenderFleetJson(d, a));
    nlohmann::ordered_json tree = nlohmann::ordered_json::parse(pieces);
    EXPECT_EQ(pieces, tree.dump(2) + "\n") << nodes << " nodes";
    ASSERT_EQ(tree["nodes"].size(), static_cast<size_t>(nodes));
    EXPECT_GE(calls, 3 + nodes) << "the nodes are handed over one at a time";
  }
}

TEST(FleetReaderTest, ImplausibleTimesAndValuesAreRejectedAndListed) {
  FleetData d;
  json g = Gpu(0, "a", 1980, 90);
  g["sm_clock_mhz"] = 1e300;
  g["power_mw"] = -1e9;
  ASSERT_TRUE(AddReport(Report("a", kT0, json::array({g})).dump(), "range", kNow, d).ok());
  ASSERT_EQ(d.samples.size(), 1u);
  EXPECT_FALSE(d.samples[0].sm_clock_mhz.has_value());
  EXPECT_FALSE(d.samples[0].power_w.has_value());
  EXPECT_FLOAT_EQ(*d.samples[0].temp_c, 60);
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_NE(d.problems[0].message.find("sm_clock_mhz 1e+300"), std::string::npos)
      << d.problems[0].message;
  // Unset RTC (1971) and a day ahead: skipped, listed.
  ASSERT_TRUE(AddReport(Report("b", 40000000, json::array({g})).dump(), "rtc", kNow, d).ok());
  ASSERT_TRUE(
      AddReport(Report("b", kNow + 3 * 86400, json::array()).dump(), "ahead", kNow, d).ok());
  EXPECT_EQ(d.reports.size(), 1u);
  ASSERT_EQ(d.problems.size(), 3u);
  EXPECT_EQ(d.problems[1].source, "rtc");
  EXPECT_NE(d.problems[1].message.find("before 2020"), std::string::npos);
  EXPECT_EQ(d.problems[2].source, "ahead");
  // A finding repeated in one report is one finding.
  json gpu = Gpu(1, "c", 1980, 90);
  json f = {{"id", "gpu.ecc.dbe"},
            {"severity", "crit"},
            {"layer", "hardware"},
            {"gpu", {{"pci_bus_id", gpu["pci_bus_id"]}}}};
  ASSERT_TRUE(
      AddReport(Report("c", kT0, json::array({gpu}), json::array({f, f, f})).dump(), "rep", kNow, d)
          .ok());
  EXPECT_EQ(d.findings.size(), 1u);
  EXPECT_NE(d.problems.back().message.find("repeated 3 times"), std::string::npos);
}

TEST(FleetReaderTest, ReportsFarFromTheOthersAreDropped) {
  FleetData d = Fleet(3, 3);
  size_t reports = d.reports.size(), samples = d.samples.size();
  DropTimeOutliers(d);  // nothing to drop: everything stays as it was
  ASSERT_EQ(d.reports.size(), reports);
  EXPECT_EQ(d.reports[0].node, "n0");
  EXPECT_EQ(d.samples.size(), samples);
  ASSERT_TRUE(AddReport(Report("n0", 1690000000, json::array({Gpu(0, "n0", 1980, 90)})).dump(),
                        "old", kNow, d)
                  .ok());
  DropTimeOutliers(d);
  EXPECT_EQ(d.reports.size(), reports);
  EXPECT_EQ(d.samples.size(), samples);
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].source, "old");
  EXPECT_NE(d.problems[0].message.find("days away"), std::string::npos);
}

TEST(FleetStragglerTest, PowerCapAndConfiguredLimitAreNotHardware) {
  FleetData d = Fleet(6, 5, [](int n, int, json& gpus, json&) {
    if (n == 1) {  // a power-heavy job at the power cap: hotter, lower clocks, SW power cap only
      for (auto& g : gpus) {
        g["power_mw"] = 700000;
        g["sm_clock_mhz"] = 1650;
        g["temp_c"] = 75;
        g["counters_first"]["clock_event_reasons"] = 0x4;
      }
    }
    if (n == 2)
      gpus[1]["power_limit_mw"] = 400000, gpus[1]["power_mw"] = 399000,
      gpus[1]["sm_clock_mhz"] = 1500;
    if (n == 3) gpus[2]["sm_clock_mhz"] = 1600;  // same power, no reason: the silicon
  });
  auto s = FindStragglers(d, OutlierOptions{});
  std::map<std::string, std::string> kind;
  for (const auto& x : s) kind[d.cards[x.card].serial] = x.kind;
  EXPECT_EQ(kind.size(), 6u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(kind["SN-n1-" + std::to_string(i)], "capped");
  EXPECT_EQ(kind["SN-n2-1"], "capped");
  EXPECT_EQ(kind["SN-n3-2"], "hardware");
  FleetAnalysis a = Analyze(d, FleetOptions{});
  EXPECT_EQ(FleetExitCode(a), 1);  // the hardware one
}

TEST(FleetStragglerTest, IdleGpusAreIdleAndVictimsWaitOnTheStraggler) {
  FleetData d = Fleet(6, 5, [](int n, int, json& gpus, json&) {
    if (n == 0) {
      for (auto& g : gpus) g["util_gpu_pct"] = 0, g["sm_clock_mhz"] = 210;
    }
    if (n == 4) {
      gpus[0]["sm_clock_mhz"] = 1300;
      gpus[0]["counters_first"]["clock_event_reasons"] = 0x8;
      for (int i = 1; i < 4; ++i) gpus[i]["util_gpu_pct"] = 65;
    }
  });
  FleetAnalysis a = Analyze(d, FleetOptions{});
  ASSERT_EQ(a.idle.size(), 4u);
  EXPECT_EQ(a.idle_nodes, std::vector<std::string>{"n0"});
  ASSERT_EQ(a.stragglers.size(), 4u);
  EXPECT_EQ(a.stragglers[0].kind, "hardware");
  EXPECT_EQ(d.cards[a.stragglers[0].card].serial, "SN-n4-0");
  EXPECT_EQ(a.stragglers[0].holds_back, 3);
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(a.stragglers[i].kind, "victim");
    ASSERT_TRUE(a.stragglers[i].waits_on.has_value());
    EXPECT_EQ(*a.stragglers[i].waits_on, a.stragglers[0].card);
  }
  json j = json::parse(RenderFleetJson(d, a));
  EXPECT_EQ(j["idle_nodes"][0], "n0");
  EXPECT_EQ(j["stragglers"][1]["waits_on"]["serial"], "SN-n4-0");
}

json Finding(const std::string& id, const char* sev, const json& gpu, int xid = 0) {
  json f = Crit(id, gpu);
  f["severity"] = sev;
  if (xid) f["evidence"] = {{"xid", xid}};
  return f;
}

TEST(FleetStatsTest, LemonsCountHardwareIncidentsOnly) {
  // n0: a thermal blip over two windows, a host load warning, an application Xid and one ECC
  // event raising two findings: one or two incidents, not a lemon. n1: three Xid 79 events
  // hours apart: a lemon. Windows are 300 s apart, so the 12 windows span an hour.
  FleetData d;
  for (int w = 0; w < 12; ++w) {
    for (int n = 0; n < 2; ++n) {
      std::string node = "n" + std::to_string(n);
      json gpus = json::array({Gpu(0, node, 1980, 97), Gpu(1, node, 1980, 97)});
      json f = json::array();
      if (n == 0 && (w == 1 || w == 2)) f.push_back(Finding("gpu.thermal", "warn", gpus[0]));
      if (n == 0 && w == 4) f.push_back({{"id", "host.load.high"}, {"severity", "warn"}});
      if (n == 0 && w == 5) f.push_back(Finding("gpu.xid", "warn", gpus[1], 13));
      if (n == 0 && w == 8) {
        f.push_back(Finding("gpu.xid", "crit", gpus[0], 48));
        f.push_back(Finding("gpu.ecc.dbe", "crit", gpus[0]));
      }
      if (n == 1 && w % 4 == 1) f.push_back(Finding("gpu.xid", "crit", gpus[1], 79));
      int64_t t = kT0 + w * 7200;
      ASSERT_TRUE(AddReport(Report(node, t, gpus, f).dump(), node, kNow, d).ok());
    }
  }
  auto lemons = FindLemons(d, FindOnsets(d), 3);
  ASSERT_EQ(lemons.size(), 2u) << lemons[0].name;
  EXPECT_EQ(lemons[0].name, "n1");
  EXPECT_EQ(lemons[0].incidents, 3);
  EXPECT_EQ(lemons[1].name, "SN-n1-1");
}

TEST(FleetLedgerTest, ApplicationXidsAndOneOffsDoNotMakeVerdicts) {
  // Card X moves from a:b0 to b:b0 with an application Xid in each slot; card Y faults twice
  // in c:b0 and twice in d:b0 (after a move), and card Z has one Xid 79 in d:b0 before Y came.
  FleetData d;
  auto add = [&](const std::string& node, int64_t t, const std::string& serial, json f) {
    json g = Gpu(0, node, 1980, 97);
    g["serial"] = serial;
    g["uuid"] = "GPU-" + serial;
    for (auto& x : f) x["gpu"]["uuid"] = g["uuid"];
    ASSERT_TRUE(AddReport(Report(node, t, json::array({g}), f).dump(), node, kNow, d).ok());
  };
  json g0 = Gpu(0, "x", 1980, 97);
  add("a", kT0, "X", json::array({Finding("gpu.xid", "warn", g0, 13)}));
  add("b", kT0 + 86400, "X", json::array({Finding("gpu.xid", "warn", g0, 31)}));
  add("c", kT0, "Y", json::array({Finding("gpu.xid", "crit", g0, 79)}));
  add("c", kT0 + 7200, "Y", json::array({Finding("gpu.ecc.dbe", "crit", g0)}));
  add("d", kT0 + 3600, "Z", json::array({Finding("gpu.xid", "crit", g0, 79)}));
  add("d", kT0 + 86400, "Y", json::array({Finding("gpu.xid", "crit", g0, 79)}));
  add("d", kT0 + 86400 + 7200, "Y", json::array({Finding("gpu.ecc.dbe", "crit", g0)}));
  auto ledger = BuildLedger(d);
  auto faults = HardwareFaults(d, FindOnsets(d));
  EXPECT_EQ(faults.size(), 5u);
  EXPECT_EQ(JudgeCard("X", ledger, faults).verdict, "undecided");
  EXPECT_EQ(JudgeSlot("a:0000:00:00.0", ledger, faults).verdict, "undecided");
  // Z's one-off in d does not overturn Y's card verdict.
  EXPECT_EQ(JudgeCard("Y", ledger, faults).verdict, "card");
}

TEST(FleetLedgerTest, PlaceholderAndCopiedSerialsAreNoIdentity) {
  FleetData d;
  for (int n = 0; n < 3; ++n) {
    std::string node = "n" + std::to_string(n);
    json gpus = json::array({Gpu(0, node, 1980, 97), Gpu(1, node, 1980, 97)});
    gpus[0]["serial"] = "N/A";         // placeholder: no serial
    gpus[1]["serial"] = "1320000000";  // copied onto a board in every node
    json f = json::array({Finding("gpu.xid", "crit", gpus[1], 79)});
    ASSERT_TRUE(AddReport(Report(node, kT0 + n * 7200, gpus, f).dump(), node, kNow, d).ok());
    ASSERT_TRUE(AddReport(Report(node, kT0 + 86400, gpus).dump(), node, kNow, d).ok());
  }
  for (const auto& c : d.cards) EXPECT_NE(c.serial, "N/A");
  FleetAnalysis a = Analyze(d, FleetOptions{});
  ASSERT_EQ(a.problems.size(), 1u);
  EXPECT_NE(a.problems[0].message.find("serial 1320000000 seen in 3 slots at the same time"),
            std::string::npos)
      << a.problems[0].message;
  for (const auto& l : a.lemons) EXPECT_NE(l.kind, "card");
  auto ledger = BuildLedger(d);
  auto faults = HardwareFaults(d, FindOnsets(d));
  Verdict v = JudgeCard("1320000000", ledger, faults);
  EXPECT_EQ(v.verdict, "undecided");
  EXPECT_NE(v.reason.find("at the same time"), std::string::npos);
  EXPECT_NE(RenderFleetText(d, a).find("INPUT PROBLEMS (1)"), std::string::npos);
}

// Card vs slot on a hand-made ledger.
TEST(FleetLedgerTest, FaultFollowingTheSerialIsTheCard) {
  std::vector<Tenure> ledger = {{"A", "n1", "b1", 0, 10, 2}, {"A", "n2", "b2", 20, 30, 2}};
  std::vector<Fault> faults = {{"gpu.xid", "crit", "A", "n1", "b1", "", 5},
                               {"gpu.xid", "crit", "A", "n2", "b2", "", 25}};
  Verdict v = JudgeCard("A", ledger, faults);
  EXPECT_EQ(v.verdict, "card");
  EXPECT_EQ(v.faults.size(), 2u);
  EXPECT_EQ(JudgeSlot("n1:b1", ledger, faults).verdict, "card");
}

TEST(FleetLedgerTest, FaultStayingWithTheSlotIsTheSlot) {
  std::vector<Tenure> ledger = {
      {"B", "n3", "b9", 0, 10, 2}, {"C", "n3", "b9", 20, 30, 2}, {"B", "n4", "b1", 40, 50, 2}};
  std::vector<Fault> faults = {{"gpu.xid", "crit", "B", "n3", "b9", "", 5},
                               {"gpu.xid", "crit", "C", "n3", "b9", "", 25}};
  EXPECT_EQ(JudgeSlot("n3:b9", ledger, faults).verdict, "slot");
  EXPECT_EQ(JudgeCard("B", ledger, faults).verdict, "slot");  // clean after moving
}

TEST(FleetLedgerTest, OneFaultInOneSlotIsUndecidedWithSwapTest) {
  std::vector<Tenure> ledger = {{"D", "n5", "b1", 0, 10, 2}};
  std::vector<Fault> faults = {{"gpu.ecc.dbe", "crit", "D", "n5", "b1", "", 5}};
  Verdict v = JudgeCard("D", ledger, faults);
  EXPECT_EQ(v.verdict, "undecided");
  ASSERT_FALSE(v.next_steps.empty());
  EXPECT_NE(v.next_steps[0].find("healthy server"), std::string::npos);
  json j = json::parse(RenderVerdictJson(v));
  EXPECT_EQ(j["verdict"], "undecided");
  EXPECT_EQ(j["evidence"][0]["id"], "gpu.ecc.dbe");
}

TEST(FleetPrometheusTest, MatrixAnswersBecomeSamplesAndFindings) {
  FleetData d;
  std::string clock = R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"hostname":"n1","gpu":"0","uuid":"U0","pci_bus_id":"0000:18:00.0","model":"H100",
     "serial":"S0"},"values":[[1768003200,"1980000000"],[1768003500,"1410000000"]]}]}})";
  std::string util = R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"Hostname":"n1","gpu":"0","UUID":"U0","pci_bus_id":"0000:18:00.0",
     "modelName":"H100"},"values":[[1768003200,"97"]]}]}})";
  std::string finding = R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"hostname":"n1","id":"gpu.xid","severity":"crit","layer":"hardware","gpu":"0",
     "pci_bus_id":"0000:18:00.0"},"values":[[1768003500,"1"]]}]}})";
  ASSERT_TRUE(AddPrometheusMatrix("gpudoctor_gpu_sm_clock_hertz", clock, "p", d).ok());
  ASSERT_TRUE(AddPrometheusMatrix("gpudoctor_finding_active", finding, "p", d).ok());
  ASSERT_TRUE(AddPrometheusMatrix("DCGM_FI_DEV_GPU_UTIL", util, "p", d).ok());
  EXPECT_EQ(d.reports.size(), 2u);
  ASSERT_GE(d.samples.size(), 2u);
  EXPECT_FLOAT_EQ(*d.samples[0].sm_clock_mhz, 1980);
  EXPECT_FLOAT_EQ(*d.samples[1].sm_clock_mhz, 1410);
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_EQ(d.findings[0].id, "gpu.xid");
  EXPECT_FALSE(
      AddPrometheusMatrix("gpudoctor_gpu_power_watts", "{\"status\":\"error\"}", "p", d).ok());
  EXPECT_FALSE(AddPrometheusMatrix("gpudoctor_gpu_power_watts", "not json", "p", d).ok());
}

TEST(FleetPrometheusTest, ValuesOutOfPhysicalRangeAreDroppedAndListed) {
  FleetData d;
  std::string clock = R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"hostname":"n1","gpu":"0","uuid":"U0","pci_bus_id":"0000:18:00.0"},
     "values":[[1768003200,"1e300"],[1768003500,"-1e9"],[1768003800,"1410000000"]]}]}})";
  ASSERT_TRUE(AddPrometheusMatrix("gpudoctor_gpu_sm_clock_hertz", clock, "p", d).ok());
  ASSERT_EQ(d.samples.size(), 1u);
  EXPECT_FLOAT_EQ(*d.samples[0].sm_clock_mhz, 1410);
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_NE(d.problems[0].message.find("2 value(s) out of physical range"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor::fleet
