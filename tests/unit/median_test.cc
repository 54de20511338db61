// core/median.h: the middle value, the mean of the two middle ones for an even count, nullopt for
// none, whatever the input order; the callers that share it (job step times, change points, the
// fleet's straggler values) keep their answers.
#include "core/median.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "fleet/outliers.h"

namespace gpudoctor {
namespace {

TEST(MedianTest, MiddleValueOrMeanOfTheTwoMiddleOnesInAnyOrder) {
  EXPECT_EQ(Median({}), std::nullopt);
  EXPECT_EQ(Median({4.0}), 4.0);
  EXPECT_EQ(Median({9.0, 1.0, 5.0}), 5.0);
  EXPECT_EQ(Median({10.0, 1.0, 3.0, 2.0}), 2.5);
  std::vector<double> v = {7, 3, 3, 8, 1, 9, 2, 6};  // sorted: 1 2 3 3 6 7 8 9
  do {
    EXPECT_EQ(Median(v), 4.5);
  } while (std::next_permutation(v.begin(), v.begin() + 5));
}

TEST(MedianTest, InPlaceReordersOnlyTheGivenValues) {
  std::vector<double> v = {5, 4, 3, 2, 1};
  EXPECT_EQ(MedianInPlace(v), 3.0);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (std::vector<double>{1, 2, 3, 4, 5}));
  EXPECT_EQ(fleet::MedianInPlace(v), 3.0);
  std::vector<double> none;
  EXPECT_EQ(fleet::MedianInPlace(none), 0.0);  // the fleet's convention: 0 for none
}

}  // namespace
}  // namespace gpudoctor
