#include "parsers/pressure.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

TEST(PressureTest, ParsesSomeAndFull) {
  auto r = ParsePressure(
      "some avg10=1.23 avg60=0.50 avg300=0.10 total=123456\n"
      "full avg10=0.40 avg60=0.20 avg300=0.05 total=7890\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(*r->some.avg10_pct, 1.23);
  EXPECT_DOUBLE_EQ(*r->some.avg60_pct, 0.50);
  EXPECT_DOUBLE_EQ(*r->some.avg300_pct, 0.10);
  EXPECT_EQ(r->some.total_us, 123456u);
  ASSERT_TRUE(r->full.has_value());
  EXPECT_DOUBLE_EQ(*r->full->avg10_pct, 0.40);
  EXPECT_EQ(r->full->total_us, 7890u);
}

TEST(PressureTest, CpuOnOldKernelHasNoFullLine) {
  auto r = ParsePressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->full.has_value());
}

TEST(PressureTest, IgnoresUnknownExtraFields) {
  auto r = ParsePressure("some avg10=1.00 avg60=2.00 avg300=3.00 total=4 avg1=9.00\n");
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(*r->some.avg300_pct, 3.0);
}

TEST(PressureTest, RejectsMalformed) {
  EXPECT_FALSE(ParsePressure("").ok());
  EXPECT_FALSE(ParsePressure("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").ok());
  EXPECT_FALSE(ParsePressure("some avg10=0.00 avg60=0.00 total=0\n").ok());  // missing avg300
  EXPECT_FALSE(ParsePressure("some avg10=abc avg60=0.00 avg300=0.00 total=0\n").ok());
  EXPECT_FALSE(ParsePressure("some avg10 avg60=0.00 avg300=0.00 total=0\n").ok());
  EXPECT_FALSE(ParsePressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n").ok());
  EXPECT_FALSE(ParsePressure("garbage line\n").ok());
  // Truncated mid-line.
  EXPECT_FALSE(ParsePressure("some avg10=1.00 avg60=2.0").ok());
}

TEST(PressureTest, RejectsAbsurdPercentages) {
  EXPECT_FALSE(ParsePressure("some avg10=100.01 avg60=0 avg300=0 total=0\n").ok());
  EXPECT_FALSE(ParsePressure("some avg10=-1 avg60=0 avg300=0 total=0\n").ok());
  EXPECT_FALSE(ParsePressure("some avg10=nan avg60=0 avg300=0 total=0\n").ok());
  EXPECT_TRUE(ParsePressure("some avg10=100.00 avg60=0 avg300=0 total=0\n").ok());
}

}  // namespace
}  // namespace gpudoctor
