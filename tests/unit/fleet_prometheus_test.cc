// Prometheus input: the serial is only on gpudoctor_gpu_info; every other series (gpudoctor and
// dcgm-compat labels) is joined to it by node and bus id at each time, so card and slot verdicts
// work from Prometheus as from reports, also across a card swap.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "fleet/ledger.h"
#include "fleet/onsets.h"
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

}  // namespace
}  // namespace gpudoctor::fleet
