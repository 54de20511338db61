#include <gtest/gtest.h>

#include "test_util.h"

TEST(BinaryTest, RunsAndExits) {
  auto r = gpudoctor::testing::RunGpudoctor({"--bogus-flag"});
  EXPECT_EQ(r.exit_code, 3);
}
