// Inlet/board temperature sensors in /metrics and `check --json` (issue 8 item 10).
#include <gtest/gtest.h>

#include "report/facts_json.h"
#include "serve/exporter.h"
#include "watch_tick_util.h"

namespace gpudoctor {
namespace {

TEST(UpkeepMetricsTest, InletAndBoardSensorsAreLabelledSeries) {
  auto tick = testing::MakeTick();
  ThermalFacts th;
  th.sensors = {{"Inlet Temp", "ipmi", "", SensorKind::kInlet, 23.5},
                {"Board Temp", "hwmon", "nct6798/temp1", SensorKind::kBoard, 41},
                {"Ambient", "hwmon", "x/temp2", SensorKind::kInlet, std::nullopt}};
  tick->report.snapshot.host.thermal = th;
  tick->points = FlattenSnapshot(tick->report.snapshot);
  std::string text = RenderMetrics(*tick, {});
  EXPECT_NE(text.find("gpudoctor_host_inlet_temperature_celsius{hostname=\"node1\",sensor=\"Inlet "
                      "Temp\",source=\"ipmi\"} 23.5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpudoctor_host_board_temperature_celsius{hostname=\"node1\",sensor=\"Board "
                      "Temp\",source=\"hwmon\"} 41\n"),
            std::string::npos);
  EXPECT_EQ(text.find("sensor=\"Ambient\""), std::string::npos) << "no reading, no point";

  auto j = HostFactsToJson(tick->report.snapshot.host);
  ASSERT_TRUE(j.contains("thermal"));
  EXPECT_EQ(j["thermal"]["sensors"][0]["temp_c"], 23.5);
  EXPECT_EQ(j["thermal"]["sensors"][1]["kind"], "board");
}

}  // namespace
}  // namespace gpudoctor
