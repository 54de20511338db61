// Parsers and the trace generator of the planner: context distributions, trace CSV, sizes, data
// types, length ranges.
#include <gtest/gtest.h>

#include <cmath>

#include "plan/context_dist.h"
#include "plan/trace.h"
#include "plan/units.h"

namespace gpudoctor::plan {
namespace {

TEST(PlanParsersTest, ContextDistWithWeightsAndComments) {
  auto d = ParseContextDist("# tokens,weight\n512,3\n\n2048 1\n4096\n");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->buckets.size(), 3u);
  EXPECT_EQ(d->MaxTokens(), 4096u);
  // (512 x 3 + 2048 + 4096) / 5 = 1536.
  EXPECT_DOUBLE_EQ(d->MeanTokens(), 1536);
  // Blocks of 16: (32 x 3 + 128 + 256) / 5 = 96.
  EXPECT_DOUBLE_EQ(d->MeanBlocks(16), 96);
}

TEST(PlanParsersTest, ContextDistErrorsNameTheLine) {
  auto d = ParseContextDist("512\n-5\n");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("line 2 '-5'"), std::string::npos) << d.status().message();
  EXPECT_NE(ParseContextDist("512,0\n").status().message().find("weight"), std::string::npos);
  EXPECT_NE(ParseContextDist("1,2,3\n").status().message().find("line 1"), std::string::npos);
  EXPECT_FALSE(ParseContextDist("# only a comment\n").ok());
  EXPECT_FALSE(ParseContextDist("99999999999\n").ok());
}

TEST(PlanParsersTest, TraceCsvWithHeaderIsSortedByArrival) {
  auto t = ParseTraceCsv("arrival_s,prompt_tokens,output_tokens\n1.5,100,10\n0.25,2000,300\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 2u);
  EXPECT_DOUBLE_EQ((*t)[0].arrival_s, 0.25);
  EXPECT_EQ((*t)[0].prompt_tokens, 2000u);
  EXPECT_EQ((*t)[1].output_tokens, 10u);
}

TEST(PlanParsersTest, TraceCsvMalformedLineIsNamed) {
  auto t = ParseTraceCsv("0,100,10\n1,100,10\n2,-100,10\n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("line 3 '2,-100,10'"), std::string::npos)
      << t.status().message();
  EXPECT_NE(t.status().message().find("prompt tokens"), std::string::npos);
  EXPECT_NE(ParseTraceCsv("0,100\n").status().message().find("expected arrival_s"),
            std::string::npos);
  EXPECT_NE(ParseTraceCsv("-1,100,10\n").status().message().find("arrival"), std::string::npos);
  EXPECT_NE(ParseTraceCsv("0,100,0\n").status().message().find("output tokens"), std::string::npos);
  // A header is only allowed first: text on line 2 is an error.
  EXPECT_NE(ParseTraceCsv("0,1,1\nx,y,z\n").status().message().find("line 2"), std::string::npos);
  EXPECT_FALSE(ParseTraceCsv("").ok());
}

TEST(PlanParsersTest, ByteSizes) {
  EXPECT_EQ(*ParseByteSize("80GiB"), 80ull << 30);
  EXPECT_EQ(*ParseByteSize("80G"), 80ull << 30);
  EXPECT_EQ(*ParseByteSize("141GB"), 141000000000ull);
  EXPECT_EQ(*ParseByteSize("512 MiB"), 512ull << 20);
  EXPECT_EQ(*ParseByteSize("1.5TiB"), 3ull << 39);
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_FALSE(ParseByteSize("0").ok());
  EXPECT_FALSE(ParseByteSize("-80GiB").ok());
  EXPECT_FALSE(ParseByteSize("80 potatoes").ok());
  EXPECT_FALSE(ParseByteSize("").ok());
}

TEST(PlanParsersTest, DataTypes) {
  EXPECT_EQ(BytesPerElement(*ParseDType("BF16")), 2);
  EXPECT_EQ(BytesPerElement(*ParseDType("fp8")), 1);
  EXPECT_EQ(BytesPerElement(*ParseDType("int4")), 0.5);
  auto bad = ParseDType("fp7");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'fp7'"), std::string::npos);
}

TEST(PlanParsersTest, LengthRanges) {
  auto r = ParseLengthRange("128:2048");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->lo, 128u);
  EXPECT_EQ(r->hi, 2048u);
  EXPECT_EQ(FormatLengthRange(*r), "128:2048");
  EXPECT_EQ(ParseLengthRange("512")->hi, 512u);
  auto e = ParseLengthRange("exp:256:4096");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->exponential);
  EXPECT_EQ(FormatLengthRange(*e), "exp:256:4096");
  EXPECT_FALSE(ParseLengthRange("2048:128").ok());
  EXPECT_FALSE(ParseLengthRange("-5").ok());
  EXPECT_FALSE(ParseLengthRange("0").ok());
  EXPECT_FALSE(ParseLengthRange("exp:5000:4096").ok());
}

TEST(PlanParsersTest, GeneratedTraceIsReproducibleAndHasTheRate) {
  TraceSpec spec{10, 20000, 42, {100, 300}, {1, 1}};
  spec.output = *ParseLengthRange("exp:200:100000");
  auto a = GenerateTrace(spec);
  auto b = GenerateTrace(spec);
  ASSERT_EQ(a.size(), 20000u);
  double prompt_sum = 0, output_sum = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].arrival_s, b[i].arrival_s);
    ASSERT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
    ASSERT_GE(a[i].prompt_tokens, 100u);
    ASSERT_LE(a[i].prompt_tokens, 300u);
    if (i > 0) {
      ASSERT_GE(a[i].arrival_s, a[i - 1].arrival_s);
    }
    prompt_sum += a[i].prompt_tokens;
    output_sum += a[i].output_tokens;
  }
  // 20000 arrivals at 10/s take about 2000 s (Poisson: sd of the sum ~ sqrt(20000)/10 = 14 s).
  EXPECT_NEAR(a.back().arrival_s, 2000, 60);
  EXPECT_NEAR(prompt_sum / a.size(), 200, 2);
  // ceil of an exponential with mean 200 has mean ~200.5.
  EXPECT_NEAR(output_sum / a.size(), 200.5, 6);
  spec.seed = 43;
  EXPECT_NE(GenerateTrace(spec)[0].arrival_s, a[0].arrival_s);
}

}  // namespace
}  // namespace gpudoctor::plan
