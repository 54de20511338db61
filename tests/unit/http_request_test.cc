// The request head as the watch server reads it off the network (serve/http_request.h), the
// bearer scheme, and the history API's time grammar (the CLI's, core/time_spec.h).
#include "serve/http_request.h"

#include <gtest/gtest.h>

#include "core/time_spec.h"
#include "serve/http_server.h"

namespace gpudoctor {
namespace {

HeadScanner::State FeedBytewise(HeadScanner& s, const std::string& data) {
  HeadScanner::State st = HeadScanner::State::kNeedMore;
  for (size_t i = 1; i <= data.size() && st == HeadScanner::State::kNeedMore; ++i) {
    st = s.Feed(std::string_view(data).substr(0, i));
  }
  return st;
}

TEST(HeadScannerTest, FindsTheEndOfTheHeadByteByByte) {
  std::string head = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /next";
  HeadScanner s;
  ASSERT_EQ(FeedBytewise(s, head), HeadScanner::State::kComplete);
  EXPECT_EQ(s.head_size(), head.find("GET /next"));
  HeadScanner lf;
  EXPECT_EQ(lf.Feed("GET / HTTP/1.1\nA: b\n\n"), HeadScanner::State::kComplete);
}

TEST(HeadScannerTest, RefusesOversizedHeadsWhileTheyArrive) {
  // A request line that never ends: refused once it passes 8 KiB, not when it ends.
  HeadScanner line;
  EXPECT_EQ(line.Feed("GET /" + std::string(9000, 'a')), HeadScanner::State::kError);
  EXPECT_EQ(line.error_status(), 414);
  // One header line over 8 KiB.
  HeadScanner one;
  EXPECT_EQ(one.Feed("GET / HTTP/1.1\r\nX: " + std::string(8300, 'a')), HeadScanner::State::kError);
  EXPECT_EQ(one.error_status(), 431);
  // Many small header lines: 32 KiB in all is the limit (the unbounded case: 4 connections
  // sending endless 4 KiB headers took the old server from 25 MB to 479 MB).
  std::string many = "GET / HTTP/1.1\r\n";
  HeadScanner total;
  HeadScanner::State st = HeadScanner::State::kNeedMore;
  while (st == HeadScanner::State::kNeedMore && many.size() < 1000000) {
    many += "X-A: " + std::string(4000, 'b') + "\r\n";
    st = total.Feed(many);
  }
  EXPECT_EQ(st, HeadScanner::State::kError);
  EXPECT_EQ(total.error_status(), 431);
  EXPECT_LE(many.size(), kMaxHeadBytes + 4100);
  // Too many lines.
  std::string lines = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 150; ++i) lines += "a: b\r\n";
  HeadScanner count;
  EXPECT_EQ(count.Feed(lines), HeadScanner::State::kError);
  EXPECT_EQ(count.error_status(), 431);
  HeadScanner empty;
  EXPECT_EQ(empty.Feed("\r\n"), HeadScanner::State::kError);
  EXPECT_EQ(empty.error_status(), 400);
}

TEST(ParseRequestHeadTest, RequestLineHeadersKeepAlive) {
  auto r = ParseRequestHead(
      "GET /api/v1/history?metric=x&gpu=1 HTTP/1.1\r\nHost: a\r\nAuthorization:  Bearer t \r\n"
      "\r\n",
      nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->path, "/api/v1/history");
  EXPECT_EQ(r->query, "metric=x&gpu=1");
  EXPECT_EQ(r->Header("authorization").value_or(""), "Bearer t");
  EXPECT_TRUE(r->keep_alive);
  EXPECT_FALSE(r->has_body);
  EXPECT_FALSE(
      ParseRequestHead("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", nullptr)->keep_alive);
  EXPECT_FALSE(ParseRequestHead("GET / HTTP/1.0\r\n\r\n", nullptr)->keep_alive);
  EXPECT_TRUE(
      ParseRequestHead("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", nullptr)->keep_alive);
  EXPECT_TRUE(ParseRequestHead("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n", nullptr)->has_body);
  EXPECT_TRUE(
      ParseRequestHead("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", nullptr)->has_body);
  HeadParseError e;
  EXPECT_FALSE(ParseRequestHead("GET / HTTP/2.0\r\n\r\n", &e).ok());
  EXPECT_EQ(e.status, 505);
  for (const char* bad :
       {"GET /\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET x HTTP/1.1\r\n\r\n",
        "G(T / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nA b: c\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", "GET / HTTP/1.1\r\n: v\r\n\r\n"}) {
    EXPECT_FALSE(ParseRequestHead(bad, &e).ok()) << bad;
    EXPECT_EQ(e.status, 400) << bad;
  }
}

TEST(ParseQueryStringTest, DecodesAndRefuses) {
  auto q = ParseQueryString("metric=a%5Fb&since=2024-03-04+12%3A00&flag&&x=");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->find("metric")->second, "a_b");
  EXPECT_EQ(q->find("since")->second, "2024-03-04 12:00");
  EXPECT_EQ(q->count("flag"), 1u);
  EXPECT_EQ(q->find("x")->second, "");
  EXPECT_EQ(q->size(), 4u);
  for (const char* bad : {"a=%", "a=%4", "a=%zz", "a=%00"}) {
    EXPECT_FALSE(ParseQueryString(bad).ok()) << bad;
  }
  std::string many;
  for (int i = 0; i < 40; ++i) many += "k" + std::to_string(i) + "=1&";
  EXPECT_FALSE(ParseQueryString(many).ok());
}

TEST(BearerCredentialsTest, SchemeIsCaseInsensitive) {
  EXPECT_EQ(BearerCredentials("Bearer abc").value_or(""), "abc");
  EXPECT_EQ(BearerCredentials("bearer abc").value_or(""), "abc");
  EXPECT_EQ(BearerCredentials("BEARER   abc").value_or(""), "abc");
  EXPECT_EQ(BearerCredentials("bEaReR abc ").value_or(""), "abc");
  for (const char* bad : {"", "Bearer", "Bearer ", "Bearerabc", "Basic abc", "Token abc"}) {
    EXPECT_FALSE(BearerCredentials(bad).has_value()) << bad;
  }
}

// The API's since/until take exactly what `gpudoctor history --since/--until` takes.
TEST(ParseHistoryQueryTest, SinceUntilUseTheCliTimeGrammar) {
  const int64_t now = 1709553600;  // 2024-03-04T12:00:00Z
  const std::string metric = "gpudoctor_gpu_temperature_celsius";
  for (const char* spec : {"6h", "90s", "2d", "1w", "1709500000", "@1709500000", "2024-03-04",
                           "2024-03-04T10:00", "2024-03-04T10:00:00Z", "2024-03-04 10:00:00"}) {
    auto q = ParseHistoryQuery({{"metric", metric}, {"since", spec}}, now);
    ASSERT_TRUE(q.ok()) << spec << ": " << q.status().ToString();
    EXPECT_EQ(q->since_unix_s, *ParseTimeSpec(spec, now)) << spec;
  }
  auto q = ParseHistoryQuery(
      {{"metric", metric}, {"since", "2024-03-04T10:00:00Z"}, {"until", "2024-03-04T11:00:00Z"}},
      now);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->since_unix_s, 1709546400);
  EXPECT_EQ(q->until_unix_s, 1709550000);
  EXPECT_FALSE(ParseHistoryQuery({{"metric", metric}, {"since", "1h"}, {"until", "2h"}}, now).ok());
  for (const char* bad : {"", "h", "0h", "-1h", "1.5h", "6x", "2024-13-01", "yesterday"}) {
    EXPECT_FALSE(ParseHistoryQuery({{"metric", metric}, {"since", bad}}, now).ok()) << bad;
  }
}

}  // namespace
}  // namespace gpudoctor
