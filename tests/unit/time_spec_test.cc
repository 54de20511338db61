// The one time grammar (core/time_spec.h): every flag, API parameter and report timestamp reads
// times through it, so these cases are what an operator can type anywhere.
#include "core/time_spec.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

constexpr int64_t kNow = 1709553600;  // 2024-03-04T12:00:00Z

TEST(TimeSpecTest, DurationsSimpleAndCompound) {
  EXPECT_EQ(ParseDurationS("90s"), 90);
  EXPECT_EQ(ParseDurationS("15m"), 900);
  EXPECT_EQ(ParseDurationS("2w"), 14 * 86400);
  EXPECT_EQ(ParseDurationS("1h30m"), 5400);
  EXPECT_EQ(ParseDurationS("1d12h"), 129600);
  EXPECT_EQ(ParseDurationS("2h0m5s"), 7205);
  for (const char* bad : {"", "0s", "0h0m", "2h30", "30m1h", "1h1h", "1.5h", "h", "10y", "-5m",
                          "1h 30m", "99999999999s"}) {
    EXPECT_FALSE(ParseDurationS(bad)) << bad;
  }
}

TEST(TimeSpecTest, DurationsBackFromNowAndUnixSeconds) {
  EXPECT_EQ(ParseTimeSpec("2h", kNow), kNow - 7200);
  EXPECT_EQ(ParseTimeSpec("1h30m", kNow), kNow - 5400);
  EXPECT_EQ(ParseTimeSpec("1700000000", kNow), 1700000000);
  EXPECT_EQ(ParseTimeSpec("@1700000000", kNow), 1700000000);
  EXPECT_FALSE(ParseTimeSpec("@", kNow));
  EXPECT_FALSE(ParseTimeSpec("@2h", kNow));
  EXPECT_FALSE(ParseTimeSpec("yesterday", kNow));
}

TEST(TimeSpecTest, Rfc3339WithZonesAndFractions) {
  EXPECT_EQ(ParseTimeSpec("2024-03-04", 0), 1709510400);
  EXPECT_EQ(ParseTimeSpec("2024-03-04T12:00", 0), kNow);
  EXPECT_EQ(ParseTimeSpec("2024-03-04 12:00:00", 0), kNow);
  EXPECT_EQ(ParseTimeSpec("2024-03-04T12:00:00Z", 0), kNow);
  EXPECT_EQ(ParseTimeSpec("2024-03-04T12:00:00.250Z", 0), kNow);
  EXPECT_EQ(ParseTimeSpec("2024-03-04T14:00:00+02:00", 0), kNow);
  EXPECT_EQ(ParseTimeSpec("2024-03-04T14:00+0200", 0), kNow);
  EXPECT_EQ(ParseTimeSpec("2024-03-04T07:00:00-05", 0), kNow);
  EXPECT_EQ(ParseTimeSpec("2024-03-04T06:30:00.123456789-05:30", 0), kNow);
  for (const char* bad : {"2024-02-30", "2024-13-01", "2024-03-04T24:00", "2024-03-04T12:00:00+2",
                          "2024-03-04T12:00:00+25:00", "2024-03-04T12:00:00.Z", "2024-03-04T12",
                          "2024-3-4", "1969-12-31", "1970-01-01T00:00+18:00"}) {
    EXPECT_FALSE(ParseTimeSpec(bad, kNow)) << bad;
  }
}

TEST(TimeSpecTest, MachineTimestampsTakeOnlyAbsoluteForms) {
  EXPECT_EQ(ParseRfc3339("2024-03-04T12:00:00Z"), kNow);
  EXPECT_FALSE(ParseRfc3339("6h"));
  EXPECT_FALSE(ParseRfc3339("1700000000"));
}

TEST(TimeSpecTest, FormatRoundTrips) {
  EXPECT_EQ(FormatUtc(kNow), "2024-03-04T12:00:00Z");
  EXPECT_EQ(ParseTimeSpec(FormatUtc(kNow), 0), kNow);
}

TEST(TimeSpecTest, ErrorsNameTheGrammar) {
  EXPECT_NE(TimeSpecExpectation().find("RFC 3339"), std::string::npos);
  EXPECT_NE(DurationExpectation().find("1h30m"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor
