// The tick blob of samples_ticks (tick_codec.h): exact round trips of every kind of value and
// series-id order, and clean refusal of malformed blobs.
#include "store/tick_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace gpudoctor {
namespace {

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

void ExpectSameBits(const std::vector<TickPoint>& got, const std::vector<TickPoint>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].series_id, want[i].series_id) << i;
    EXPECT_EQ(Bits(got[i].value), Bits(want[i].value)) << i << ": " << want[i].value;
  }
}

TEST(StoreTickCodecTest, RoundTripsEveryValueBitForBit) {
  const double kMax = std::numeric_limits<double>::max();
  std::vector<TickPoint> in = {{1, 0.0},
                               {2, -0.0},
                               {3, 65},
                               {4, -3},
                               {5, 312.456},
                               {9, 1e12},
                               {7, 1e12 + 0.5},
                               {8, 9007199254740991.0},
                               {8, 9007199254740992.0},
                               {6, -9007199254740993.0},
                               {100000, kMax},
                               {2, -kMax},
                               {3, 5e-324},
                               {4, std::numeric_limits<double>::infinity()},
                               {1, std::nan("")},
                               {int64_t{1} << 40, 1.5},
                               {1, 0.1},
                               {1, 0.1}};
  ExpectSameBits(DecodeTick(EncodeTick(in)).value(), in);
  std::mt19937_64 rng(23);
  std::vector<TickPoint> random;
  for (int i = 0; i < 5000; ++i) {
    double v;
    switch (rng() % 3) {
      case 0:
        v = static_cast<double>(static_cast<int64_t>(rng() % 2000000) - 1000000);
        break;
      case 1: {
        uint64_t b = rng();
        std::memcpy(&v, &b, sizeof v);
        break;
      }
      default:
        v = static_cast<double>(rng() % 100000) / 7.0;
    }
    random.push_back({static_cast<int64_t>(rng() % 5000) + 1, v});
  }
  ExpectSameBits(DecodeTick(EncodeTick(random)).value(), random);
}

TEST(StoreTickCodecTest, SmallIntegersAndAscendingIdsTakeTwoBytes) {
  std::vector<TickPoint> in;
  for (int id = 1; id <= 300; ++id) in.push_back({id, static_cast<double>(id % 50)});
  EXPECT_EQ(EncodeTick(in).size(), 1 + 2 * in.size());
  EXPECT_EQ(EncodeTick({}), std::string(1, static_cast<char>(kTickBlobFormat)));
  ASSERT_TRUE(DecodeTick(EncodeTick({})));
  EXPECT_TRUE(DecodeTick(EncodeTick({}))->empty());
}

TEST(StoreTickCodecTest, EncoderReusesItsStringAcrossTicks) {
  std::string buf;
  {
    TickEncoder e(&buf);
    for (int i = 1; i <= 400; ++i) e.Add(i, 1.25 * i);
  }
  const size_t cap = buf.capacity();
  const char* data = buf.data();
  TickEncoder e(&buf);
  for (int i = 1; i <= 400; ++i) e.Add(i, 1.25 * i + 1);
  EXPECT_EQ(buf.capacity(), cap);
  EXPECT_EQ(buf.data(), data);
  EXPECT_EQ(DecodeTick(buf)->size(), 400u);
}

TEST(StoreTickCodecTest, MalformedBlobsAreRefused) {
  const std::string good = EncodeTick({{5, 1.5}, {6, 7}, {300, 2.25}});
  ASSERT_TRUE(DecodeTick(good));
  EXPECT_FALSE(DecodeTick(""));
  EXPECT_FALSE(DecodeTick(std::string(1, '\x02') + good.substr(1)));  // unknown format
  for (size_t n = 2; n < good.size(); ++n) {
    auto d = DecodeTick(good.substr(0, n));  // every truncation inside a point
    if (d) {
      // Only at a point boundary is a prefix a valid (shorter) blob.
      EXPECT_LT(d->size(), 3u) << n;
    }
  }
  EXPECT_FALSE(DecodeTick(good.substr(0, good.size() - 1)));  // the last double cut short
  // An id varint that never ends, and one longer than 64 bits.
  EXPECT_FALSE(DecodeTick(std::string(1, '\x01') + std::string(12, '\xff')));
  EXPECT_FALSE(DecodeTick(std::string(1, '\x01') + std::string(9, '\xff') + '\x02'));
  // ForEachTickPoint stops at the fault: the points before it were given, and it says false.
  int seen = 0;
  EXPECT_FALSE(ForEachTickPoint(good.substr(0, good.size() - 1), [&](int64_t, double) { ++seen; }));
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace gpudoctor
