// SeriesJsonText (GET /api/v1/history's body, written without a JSON tree) against
// SeriesToJson(...).dump(), the form it replaced and `history --json` still prints.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "store/history_store.h"

namespace gpudoctor {
namespace {

Series MakeSeries(std::string metric, std::optional<int> gpu, std::string labels,
                  std::vector<std::pair<int64_t, double>> points) {
  Series s;
  s.metric = std::move(metric);
  s.gpu = gpu;
  s.labels = std::move(labels);
  s.points = std::move(points);
  return s;
}

TEST(HistoryJsonTest, TextIsWhatTheTreeDumpsForEveryKindOfValue) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<int64_t, double>> points = {{1733400000, 0.0},
                                                    {1733400001, -0.0},
                                                    {1733400002, 2.0},
                                                    {1733400003, 0.1},
                                                    {1733400004, 1e-05},
                                                    {1733400005, 1e21},
                                                    {1733400006, 1e15},
                                                    {1733400007, -3.25},
                                                    {1733400008, nan},
                                                    {1733400009, inf},
                                                    {1733400010, -inf},
                                                    {0, 123456789.125},
                                                    {-5, 5e-324},
                                                    {1, 1.7976931348623157e308},
                                                    {2, 0.30000000000000004},
                                                    {3, 85520809984.0},
                                                    {4, 71.5f}};
  std::vector<std::vector<Series>> cases = {
      {},
      {MakeSeries("gpudoctor_gpu_temperature_celsius", 3, "", points)},
      {MakeSeries("gpudoctor_cpu_busy_ratio", std::nullopt, "", {})},
      {MakeSeries("gpudoctor_nic_rx_bytes_per_second", -1, "nic=eth0", points),
       MakeSeries("gpudoctor_gpu_throttle_active", 0, "reason=\"hw\\slowdown\"\n\t\x01", points),
       MakeSeries("gpudoctor_job_step_seconds", 7, "job=训练-β", {{1, 1.0}})},
  };
  for (const auto& series : cases) {
    EXPECT_EQ(SeriesJsonText(series), SeriesToJson(series).dump()) << series.size() << " series";
  }
}

TEST(HistoryJsonTest, TextIsWhatTheTreeDumpsOnRandomSeries) {
  std::mt19937_64 rng(20261206);
  std::uniform_int_distribution<int> kind(0, 5);
  for (int round = 0; round < 200; ++round) {
    std::vector<Series> series;
    int n = static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      std::vector<std::pair<int64_t, double>> points;
      int m = static_cast<int>(rng() % 50);
      for (int k = 0; k < m; ++k) {
        double v = 0;
        switch (kind(rng)) {
          case 0:  // any bit pattern: subnormals, NaNs, infinities, huge and tiny
            v = std::bit_cast<double>(static_cast<uint64_t>(rng()));
            break;
          case 1:
            v = static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000);
            break;
          case 2:
            v = std::ldexp(static_cast<double>(rng() % 1000000), static_cast<int>(rng() % 80) - 60);
            break;
          case 3:
            v = static_cast<float>(static_cast<double>(rng() % 100000) / 997.0);
            break;
          default:
            v = static_cast<double>(rng() % 1000) / 100.0;
        }
        points.emplace_back(static_cast<int64_t>(rng() >> 1) * (rng() % 2 ? 1 : -1), v);
      }
      series.push_back(
          MakeSeries("gpudoctor_m" + std::to_string(i),
                     rng() % 3 ? std::optional<int>(static_cast<int>(rng() % 9) - 1) : std::nullopt,
                     rng() % 2 ? "" : "k=v" + std::to_string(rng() % 100), points));
    }
    ASSERT_EQ(SeriesJsonText(series), SeriesToJson(series).dump()) << "round " << round;
  }
}

TEST(HistoryJsonTest, TextThatIsNotUtf8IsReplacedNotThrown) {
  std::vector<Series> series = {MakeSeries("gpudoctor_x", 0, "nic=e\xff\xfe", {{1, 1.0}})};
  std::string text;
  ASSERT_NO_THROW(text = SeriesJsonText(series));
  auto j = nlohmann::json::parse(text);  // valid JSON
  EXPECT_EQ(j["labels"], "nic=e\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(j["points"][0][1], 1.0);
}

TEST(HistoryJsonTest, TextLeavesRoomForTheHttpHeadInItsBuffer) {
  // Short values (the guess is long) and 17-digit ones (the guess is short) at every count.
  for (double v : {1.0, 0.30000000000000004}) {
    for (int n : {0, 1, 7, 100, 2000, 5000}) {
      std::vector<std::pair<int64_t, double>> points;
      for (int i = 0; i < n; ++i) points.emplace_back(1733400000 + i, v);
      std::string text = SeriesJsonText({MakeSeries("gpudoctor_gpu_power_watts", 0, "", points)});
      EXPECT_GE(text.capacity() - text.size(), 512u)
          << n << " points of " << v << ": Serialize would copy the body";
    }
  }
}

}  // namespace
}  // namespace gpudoctor
