// Parsers of room/inlet temperature sources (src/parsers/temperature_sensors.h) on realistic
// `ipmitool sdr type Temperature` outputs (Dell iDRAC, Supermicro, HPE iLO styles; lines written
// for these tests after the vendors' formats) and hwmon values.
#include "parsers/temperature_sensors.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

constexpr const char* kDell =
    "Temp             | 0Eh | ok  |  3.1 | 41 degrees C\n"
    "Temp             | 0Fh | ns  |  3.2 | Disabled\n"
    "Inlet Temp       | 04h | ok  |  7.1 | 23 degrees C\n"
    "Exhaust Temp     | 01h | ok  |  7.1 | 35 degrees C\n";

constexpr const char* kSupermicro =
    "CPU1 Temp        | 01h | ok  |  3.1 | 46 degrees C\n"
    "PCH Temp         | 0Ah | ok  |  7.1 | 52 degrees C\n"
    "System Temp      | 0Bh | ok  |  7.1 | 31 degrees C\n"
    "Peripheral Temp  | 0Ch | ok  |  7.1 | 40 degrees C\n"
    "Inlet Temp       | 0Dh | cr  |  7.1 | 38 degrees C\n"
    "GPU1 Temp        | 10h | ns  | 11.1 | No Reading\n";

constexpr const char* kHpe =
    "01-Inlet Ambient | 01h | ok  | 64.1 | 19 degrees C\r\n"
    "02-CPU 1         | 02h | ok  | 65.1 | 40 degrees C\r\n"
    "03-P1 DIMM 1-6   | 04h | ok  | 32.1 | 31.5 degrees C\r\n";

TEST(IpmiTemperatureTest, DellInletAndDisabledSensor) {
  auto t = ParseIpmiTemperatures(kDell);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].name, "Temp");
  EXPECT_EQ(t[0].temp_c, 41.0);
  EXPECT_EQ(t[1].status, "ns");
  EXPECT_FALSE(t[1].temp_c);
  EXPECT_EQ(t[2].name, "Inlet Temp");
  EXPECT_EQ(t[2].temp_c, 23.0);
  EXPECT_EQ(ClassifyTemperatureLabel(t[2].name), SensorKind::kInlet);
  EXPECT_FALSE(ClassifyTemperatureLabel(t[3].name)) << "exhaust is not room air";
  EXPECT_FALSE(ClassifyTemperatureLabel(t[0].name));
  // Inlets of parts that heat their own air are not the room's.
  EXPECT_FALSE(ClassifyTemperatureLabel("PSU1 Inlet Temp"));
  EXPECT_FALSE(ClassifyTemperatureLabel("GPU2 Inlet"));
  EXPECT_EQ(ClassifyTemperatureLabel("Front Panel Inlet"), SensorKind::kInlet);
}

TEST(IpmiTemperatureTest, SupermicroCriticalInletAndNoReading) {
  auto t = ParseIpmiTemperatures(kSupermicro);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[2].name, "System Temp");
  EXPECT_EQ(ClassifyTemperatureLabel(t[2].name), SensorKind::kBoard);
  EXPECT_EQ(t[4].status, "cr");
  EXPECT_EQ(t[4].temp_c, 38.0);
  EXPECT_FALSE(t[5].temp_c);
  EXPECT_FALSE(ClassifyTemperatureLabel("CPU1 Temp"));
  EXPECT_FALSE(ClassifyTemperatureLabel("Peripheral Temp"));
}

TEST(IpmiTemperatureTest, HpeAmbientWithCrLfAndDecimals) {
  auto t = ParseIpmiTemperatures(kHpe);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "01-Inlet Ambient");
  EXPECT_EQ(t[0].temp_c, 19.0);
  EXPECT_EQ(ClassifyTemperatureLabel(t[0].name), SensorKind::kInlet);
  EXPECT_EQ(t[2].temp_c, 31.5);
}

TEST(IpmiTemperatureTest, SkipsGarbageAndImplausibleValues) {
  auto t = ParseIpmiTemperatures(
      "Could not open device at /dev/ipmi0: No such file or directory\n"
      "\n"
      "Ambient | 01h | ok | 7.1 | 900 degrees C\n"
      "Ambient | 01h | ok | 7.1 | -5 degrees C\n"
      "Ambient | 01h | ok | 7.1 | 24 degrees F\n"
      " | 01h | ok | 7.1 | 20 degrees C\n"
      "a|b|c\n");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_FALSE(t[0].temp_c) << "900 C is garbage";
  EXPECT_EQ(t[1].temp_c, -5.0);
  EXPECT_FALSE(t[2].temp_c) << "only Celsius readings are kept";
}

TEST(IpmiTemperatureTest, BoundsTheNumberOfSensors) {
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "Inlet | 01h | ok | 7.1 | 20 degrees C\n";
  EXPECT_EQ(ParseIpmiTemperatures(many).size(), kMaxIpmiSensors);
}

TEST(TemperatureLabelTest, CaseInsensitiveKinds) {
  EXPECT_EQ(ClassifyTemperatureLabel("AMBIENT"), SensorKind::kInlet);
  EXPECT_EQ(ClassifyTemperatureLabel("intake air"), SensorKind::kInlet);
  EXPECT_EQ(ClassifyTemperatureLabel("Room Temp"), SensorKind::kInlet);
  EXPECT_EQ(ClassifyTemperatureLabel("Board Temp"), SensorKind::kBoard);
  EXPECT_FALSE(ClassifyTemperatureLabel("Outlet Temp"));
  EXPECT_FALSE(ClassifyTemperatureLabel("Package id 0"));
}

TEST(HwmonTest, Millidegrees) {
  EXPECT_EQ(ParseHwmonMillidegrees("23500\n"), 23.5);
  EXPECT_EQ(ParseHwmonMillidegrees("-2000"), -2.0);
  EXPECT_FALSE(ParseHwmonMillidegrees("255000"));  // 255 C: an unconnected input
  EXPECT_FALSE(ParseHwmonMillidegrees("N/A"));
  EXPECT_FALSE(ParseHwmonMillidegrees(""));
}

}  // namespace
}  // namespace gpudoctor
