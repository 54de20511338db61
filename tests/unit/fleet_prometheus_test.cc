// Prometheus input: the serial is only on gpudoctor_gpu_info; every other series (gpudoctor and
// dcgm-compat labels) is joined to it by node and bus id at each time, so card and slot verdicts
// work from Prometheus as from reports, also across a card swap.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "fleet/ledger.h"
#include "fleet/onsets.h"
#include "fleet/prom_matrix.h"
#include "fleet/prometheus_input.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::json;
constexpr int64_t kT0 = 1768003200;
constexpr int kSteps = 6;

// One series over steps [from, to).
json Series(json labels, int from, int to, const std::string& value) {
  json values = json::array();
  for (int w = from; w < to; ++w) values.push_back({kT0 + w * 300, value});
  return {{"metric", labels}, {"values", values}};
}

std::string Matrix(const json& result) {
  return json{{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", result}}}}
      .dump();
}

// Card SX sits in p0 (bus 1a) for steps 0-2 and in p1 (bus 1a) for steps 3-5; SY and SZ take the
// other places. SX has a double-bit ECC error in each slot.
class FleetPrometheusJoinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    json info = json::array();
    auto add_info = [&](const char* node, const char* serial, int from, int to) {
      info.push_back(Series({{"hostname", node},
                             {"gpu", "0"},
                             {"uuid", std::string("GPU-") + serial},
                             {"pci_bus_id", "0000:1a:00.0"},
                             {"serial", serial}},
                            from, to, "1"));
    };
    add_info("p0", "SX", 0, 3);
    add_info("p0", "SY", 3, kSteps);
    add_info("p1", "SZ", 0, 3);
    add_info("p1", "SX", 3, kSteps);
    add_info("p2", "N/A", 0, kSteps);  // a placeholder serial: no identity
    ASSERT_TRUE(ids.AddInfoMatrix(Matrix(info)).ok());
    // gpudoctor labels (no serial, no uuid here: joined by bus id) ...
    json sm = json::array();
    for (const char* node : {"p0", "p1", "p2"}) {
      sm.push_back(Series({{"hostname", node}, {"gpu", "0"}, {"pci_bus_id", "0000:1a:00.0"}}, 0,
                          kSteps, "1.98e9"));
    }
    ASSERT_TRUE(
        AddPrometheusMatrix("gpudoctor_gpu_sm_clock_hertz", Matrix(sm), "prom", ids, data).ok());
    // ... and dcgm-compat labels (NVML's upper-case bus id, Hostname, UUID).
    json dcgm = json::array();
    for (const char* node : {"p0", "p1"}) {
      dcgm.push_back(Series(
          {{"Hostname", node}, {"gpu", "0"}, {"pci_bus_id", "00000000:1A:00.0"}, {"UUID", ""}}, 0,
          kSteps, "97"));
    }
    ASSERT_TRUE(AddPrometheusMatrix("DCGM_FI_DEV_GPU_UTIL", Matrix(dcgm), "prom", ids, data).ok());
    json findings = json::array();
    for (auto [node, step] : {std::pair{"p0", 1}, std::pair{"p1", 4}}) {
      findings.push_back(Series({{"hostname", node},
                                 {"id", "gpu.ecc.dbe"},
                                 {"severity", "crit"},
                                 {"layer", "hardware"},
                                 {"action", "drain_reset"},
                                 {"gpu", "0"},
                                 {"pci_bus_id", "0000:1a:00.0"}},
                                step, step + 1, "1"));
    }
    ASSERT_TRUE(
        AddPrometheusMatrix("gpudoctor_finding_active", Matrix(findings), "prom", ids, data).ok());
  }
  GpuIdentities ids;
  FleetData data;
};

TEST_F(FleetPrometheusJoinTest, SerialsComeFromGpuInfoAtEachTime) {
  EXPECT_EQ(ids.SerialAt("p0", "0000:1a:00.0", "", 0, kT0 + 300), "SX");
  EXPECT_EQ(ids.SerialAt("p0", "0000:1a:00.0", "", 0, kT0 + 4 * 300), "SY");
  EXPECT_EQ(ids.SerialAt("p1", "", "GPU-SX", std::nullopt, kT0 + 5 * 300), "SX");  // by uuid
  EXPECT_EQ(ids.SerialAt("p1", "", "", 0, kT0), "SZ");                             // by index
  EXPECT_EQ(ids.SerialAt("p2", "0000:1a:00.0", "", 0, kT0), "");                   // placeholder
  EXPECT_EQ(ids.SerialAt("p9", "0000:1a:00.0", "", 0, kT0), "");
  std::set<std::string> serials;
  for (const auto& c : data.cards) serials.insert(c.serial);
  EXPECT_EQ(serials, (std::set<std::string>{"", "SX", "SY", "SZ"}));
  // The dcgm-compat series merged into the same samples as the gpudoctor ones.
  for (const auto& s : data.samples) {
    if (data.cards[s.card].node == "p2") continue;
    EXPECT_TRUE(s.sm_clock_mhz.has_value() && s.util_pct.has_value())
        << data.cards[s.card].node << " " << s.time_s;
  }
}

TEST_F(FleetPrometheusJoinTest, CardAndSlotVerdictsAndLemonsFromPrometheus) {
  auto ledger = BuildLedger(data);
  auto faults = HardwareFaults(data, FindOnsets(data));
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0].serial, "SX");
  EXPECT_EQ(faults[1].serial, "SX");
  Verdict card = JudgeCard("SX", ledger, faults);
  EXPECT_EQ(card.verdict, "card") << card.reason;
  EXPECT_EQ(card.tenures.size(), 2u);
  Verdict slot = JudgeSlot("p0:00000000:1A:00.0", ledger, faults);
  EXPECT_EQ(slot.verdict, "card") << slot.reason;
  EXPECT_EQ(JudgeCard("SY", ledger, faults).verdict, "undecided");  // there, no fault
}

TEST(FleetPrometheusJoinBadInputTest, MalformedInfoIsAnErrorNotACrash) {
  GpuIdentities ids;
  EXPECT_FALSE(ids.AddInfoMatrix("{").ok());
  EXPECT_FALSE(ids.AddInfoMatrix(R"({"status":"error","error":"bad"})").ok());
  EXPECT_TRUE(
      ids.AddInfoMatrix(Matrix(json::array({json{{"metric", {{"hostname", "a"}, {"serial", "S"}}},
                                                 {"values", {{"x", "1"}, {1e300, "1"}, 5}}},
                                            7, "x"})))
          .ok());
  EXPECT_EQ(ids.SerialAt("a", "0000:1a:00.0", "", 0, kT0), "");
}

// The read asks Prometheus for per-window aggregates only: a fixed set of queries, each an
// _over_time over exactly one window, GPU series trimmed to the join labels, dcgm-exporter names
// only for nodes without gpudoctor_gpu_info.
TEST(FleetPrometheusQueriesTest, EveryQueryIsAPerWindowAggregate) {
  std::vector<PromQl> q = PrometheusQueries(120);
  ASSERT_FALSE(q.empty());
  EXPECT_EQ(q[0].metric, "gpudoctor_gpu_info");
  EXPECT_LE(q.size(), 20u);
  EXPECT_EQ(PrometheusQueries(86400).size(), q.size());
  std::set<std::string> fields;
  for (const auto& x : q) {
    fields.insert(x.field);
    EXPECT_NE(x.expr.find("_over_time(" + x.metric), std::string::npos) << x.expr;
    EXPECT_NE(x.expr.find("[120s])"), std::string::npos) << x.expr;
    if (x.metric.rfind("DCGM_", 0) == 0) {
      EXPECT_NE(x.expr.find("unless on (Hostname)"), std::string::npos) << x.expr;
    }
    if (x.field == "sm" && x.metric.rfind("gpudoctor_", 0) == 0) {
      EXPECT_EQ(x.expr,
                "max by (hostname, gpu, pci_bus_id) "
                "(avg_over_time(gpudoctor_gpu_sm_clock_hertz[120s]))");
    }
    if (x.field == "reason_bit") {
      EXPECT_NE(x.expr.find("max_over_time(gpudoctor_gpu_throttle_active{reason=~"),
                std::string::npos);
      EXPECT_NE(x.expr.find("hw_slowdown"), std::string::npos);
      EXPECT_EQ(x.expr.find("gpu_idle"), std::string::npos);  // idle GPUs send nothing
      EXPECT_EQ(x.expr.substr(x.expr.size() - 4), " > 0");
    }
  }
  for (const char* f : {"info", "sm", "power", "util", "temp", "reason_bit", "reasons", "sbe",
                        "dbe", "replays", "max_sm", "limit", "finding"}) {
    EXPECT_TRUE(fields.count(f)) << f;
  }
}

// Trimmed series (hostname, gpu, pci_bus_id only) take serial, uuid and model from
// gpudoctor_gpu_info; throttle reasons active in a window become bits of that window's sample.
TEST(FleetPrometheusQueriesTest, TrimmedSeriesJoinIdentityAndReasonBits) {
  GpuIdentities ids;
  json info = json::array({Series({{"hostname", "n0"},
                                   {"gpu", "0"},
                                   {"uuid", "GPU-A"},
                                   {"pci_bus_id", "00000000:1A:00.0"},
                                   {"model", "NVIDIA H100 80GB HBM3"},
                                   {"serial", "SA"}},
                                  1, 4, "1")});
  ASSERT_TRUE(ids.AddInfoMatrix(Matrix(info), 300).ok());
  GpuIdentity id = ids.IdentityAt("n0", "0000:1a:00.0", "", 0, kT0);
  EXPECT_EQ(id.serial, "SA");
  EXPECT_EQ(id.uuid, "GPU-A");
  EXPECT_EQ(id.model, "NVIDIA H100 80GB HBM3");
  FleetData data;
  json id_labels = {{"hostname", "n0"}, {"gpu", "0"}, {"pci_bus_id", "00000000:1A:00.0"}};
  ASSERT_TRUE(AddPrometheusMatrix("gpudoctor_gpu_sm_clock_hertz",
                                  Matrix(json::array({Series(id_labels, 1, 4, "9e8")})), "p", ids,
                                  data)
                  .ok());
  json slow = id_labels;
  slow["reason"] = "hw_slowdown";
  json idle = id_labels;
  idle["reason"] = "gpu_idle";  // not a reason the straggler classes use: ignored
  ASSERT_TRUE(
      AddPrometheusMatrix("gpudoctor_gpu_throttle_active",
                          Matrix(json::array({Series(slow, 2, 3, "1"), Series(idle, 1, 4, "1")})),
                          "p", ids, data)
          .ok());
  ASSERT_EQ(data.cards.size(), 1u);
  EXPECT_EQ(data.cards[0].serial, "SA");
  EXPECT_EQ(data.cards[0].uuid, "GPU-A");
  EXPECT_EQ(data.cards[0].model, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(data.samples.size(), 3u);
  for (const auto& s : data.samples) {
    EXPECT_EQ(s.sm_clock_mhz.value_or(0), 900.0f);
    if (s.time_s == kT0 + 2 * 300) {
      EXPECT_EQ(s.clock_event_reasons.value_or(0), 0x8u);
    } else {
      EXPECT_FALSE(s.clock_event_reasons.has_value()) << s.time_s;
    }
  }
}

// The streaming reader: series as they end, in any key order; bad points are marked, not
// dropped silently; error answers and broken JSON are errors naming the query.
TEST(PromMatrixTest, SeriesPointsAndErrors) {
  std::vector<std::pair<PromLabels, std::vector<PromPoint>>> got;
  auto collect = [&](const PromLabels& l, const std::vector<PromPoint>& p) {
    got.emplace_back(l, p);
  };
  // "status" after the result, "values" before "metric", a nested unknown key.
  std::string body = R"({"data":{"result":[{"values":[[1.5,"2"],["x","3"],[4,"NaN"],[5,7],[6]],)"
                     R"("metric":{"hostname":"h","gpu":"0","n":1}},)"
                     R"({"metric":{"hostname":"g"},"values":[[9,"1e3"]],"extra":{"a":[1]}}],)"
                     R"("resultType":"matrix"},"status":"success"})";
  ASSERT_TRUE(ReadPromMatrix("q", body, collect).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(PromLabel(got[0].first, {"hostname"}), "h");
  EXPECT_EQ(PromLabel(got[0].first, {"n", "gpu"}), "0");  // only string labels
  ASSERT_EQ(got[0].second.size(), 5u);
  EXPECT_TRUE(got[0].second[0].valid);
  EXPECT_EQ(got[0].second[0].time_s, 1.5);
  EXPECT_EQ(got[0].second[0].value, 2.0);
  for (int i = 1; i < 5; ++i) EXPECT_FALSE(got[0].second[i].valid) << i;
  EXPECT_EQ(got[1].second.at(0).value, 1000.0);
  got.clear();
  Status err = ReadPromMatrix(
      "sm", R"({"status":"error","errorType":"bad_data","error":"parse error"})", collect);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message().find("error for sm: parse error"), std::string::npos) << err.message();
  // An error answer that carries series: none are handed on.
  EXPECT_FALSE(ReadPromMatrix("sm",
                              R"({"data":{"result":[{"metric":{},"values":[[1,"1"]]}]},)"
                              R"("status":"error"})",
                              collect)
                   .ok());
  EXPECT_TRUE(got.empty());
  Status cut = ReadPromMatrix("sm", R"({"status":"success","data":{"result":[{"met)", collect);
  EXPECT_NE(cut.message().find("invalid JSON from Prometheus for sm"), std::string::npos);
  EXPECT_NE(ReadPromMatrix("sm", R"({"status":"success","data":{}})", collect)
                .message()
                .find("no data.result"),
            std::string::npos);
}

}  // namespace
}  // namespace gpudoctor::fleet
