#include "core/strings.h"

#include <gtest/gtest.h>

#include <limits>

namespace gpudoctor {
namespace {

TEST(StringsTest, ParseNumbersRejectGarbage) {
  EXPECT_EQ(ParseInt64(" 42 "), 42);
  EXPECT_EQ(ParseInt64("-7"), -7);
  EXPECT_FALSE(ParseInt64("42x"));
  EXPECT_FALSE(ParseInt64(""));
  EXPECT_FALSE(ParseUint64("-1"));
  EXPECT_FALSE(ParseUint64("99999999999999999999999"));
  EXPECT_EQ(ParseHex("0x3b"), 0x3bu);
  EXPECT_EQ(ParseHex("3B"), 0x3bu);
  EXPECT_FALSE(ParseHex("0x"));
  EXPECT_DOUBLE_EQ(*ParseDouble("1.5"), 1.5);
  EXPECT_FALSE(ParseDouble("nan"));
  EXPECT_FALSE(ParseDouble("inf"));
}

TEST(StringsTest, BoundedDecimalRejectsSignsSpacesAndLength) {
  EXPECT_EQ(ParseBoundedDecimal("79"), 79);
  EXPECT_EQ(ParseBoundedDecimal("007", 3), 7);
  EXPECT_FALSE(ParseBoundedDecimal("1234", 3));
  EXPECT_FALSE(ParseBoundedDecimal("-1"));
  EXPECT_FALSE(ParseBoundedDecimal(" 1"));
  EXPECT_FALSE(ParseBoundedDecimal(""));
  EXPECT_FALSE(ParseBoundedDecimal("1", 19));  // would overflow int64: refused outright
}

TEST(StringsTest, SplitAndTrim) {
  auto f = Split("cpu  1 2\t3", " \t");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[3], "3");
  EXPECT_EQ(Trim("  a b \n"), "a b");
  auto lines = SplitLines("a\r\nb\n\nc");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "a");
  EXPECT_EQ(lines[2], "");
}

// Split against string_view::find_first_of (its definition) on random bytes, with one to four
// delimiters (NUL and high bytes among them), keeping and dropping empty fields.
TEST(StringsTest, SplitFindsTheSameFieldsAsFindFirstOf) {
  auto reference = [](std::string_view s, std::string_view delims, bool skip_empty) {
    std::vector<std::string_view> out;
    size_t start = 0;
    while (start <= s.size()) {
      size_t pos = s.find_first_of(delims, start);
      if (pos == std::string_view::npos) pos = s.size();
      if (pos > start || !skip_empty) out.push_back(s.substr(start, pos - start));
      start = pos + 1;
    }
    return out;
  };
  const std::string alphabet("ab \t,:\0\xff\n", 9);
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff; };
  for (int round = 0; round < 3000; ++round) {
    std::string text, delims;
    for (size_t n = next() % 40; n > 0; --n) text += alphabet[next() % alphabet.size()];
    for (size_t n = 1 + next() % 4; n > 0; --n) delims += alphabet[next() % alphabet.size()];
    for (bool skip : {true, false}) {
      EXPECT_EQ(Split(text, delims, skip), reference(text, delims, skip))
          << "round " << round << " skip " << skip;
    }
  }
}

TEST(StringsTest, SanitizeKeepsUtf8AndReplacesBinary) {
  EXPECT_EQ(Sanitize("ok \xe2\x9c\x93"), "ok \xe2\x9c\x93");
  EXPECT_EQ(Sanitize(std::string("a\0b\xff", 4)), "a?b?");
  EXPECT_EQ(Sanitize("abcdef", 3), "abc");
  // Not well-formed: surrogates, overlong forms, past U+10FFFF (JSON encoders refuse them).
  EXPECT_EQ(Sanitize("\xed\xa0\x80"), "???");
  EXPECT_EQ(Sanitize("\xe0\x80\xaf"), "???");
  EXPECT_EQ(Sanitize("\xf4\x90\x80\x80"), "????");
  EXPECT_EQ(Sanitize("\xf0\x9f\x98\x80 \xed\x9f\xbf"), "\xf0\x9f\x98\x80 \xed\x9f\xbf");
}

TEST(StringsTest, Utf8SequenceLengthFollowsRfc3629) {
  EXPECT_EQ(Utf8SequenceLength("\xc3\xa9", 0), 2u);
  EXPECT_EQ(Utf8SequenceLength("\xe0\xa0\x80", 0), 3u);      // U+0800, the first of three bytes
  EXPECT_EQ(Utf8SequenceLength("\xe0\x9f\xbf", 0), 0u);      // overlong
  EXPECT_EQ(Utf8SequenceLength("\xed\x9f\xbf", 0), 3u);      // U+D7FF
  EXPECT_EQ(Utf8SequenceLength("\xed\xa0\x80", 0), 0u);      // U+D800, a surrogate
  EXPECT_EQ(Utf8SequenceLength("\xf0\x90\x80\x80", 0), 4u);  // U+10000
  EXPECT_EQ(Utf8SequenceLength("\xf0\x8f\xbf\xbf", 0), 0u);  // overlong
  EXPECT_EQ(Utf8SequenceLength("\xf4\x8f\xbf\xbf", 0), 4u);  // U+10FFFF
  EXPECT_EQ(Utf8SequenceLength("\xf4\x90\x80\x80", 0), 0u);  // past U+10FFFF
  EXPECT_EQ(Utf8SequenceLength("\xc3", 0), 0u);              // cut
  EXPECT_EQ(Utf8SequenceLength("a", 0), 0u);                 // ASCII
  EXPECT_EQ(Utf8SequenceLength("a", 5), 0u);                 // past the end
}

TEST(StringsTest, FormatBytesAndDouble) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatDouble(97.25, 1), "97.2");
  EXPECT_EQ(FormatDouble(3.0, 2), "3");
  EXPECT_EQ(FormatDouble(-0.04, 1), "0");
  EXPECT_EQ(FormatDouble(-2.5, 0), "-2");    // round half to even, as printf
  EXPECT_EQ(FormatDouble(100.0, 0), "100");  // no '.': the zeros are digits
  EXPECT_EQ(FormatDouble(0.000123, 6), "0.000123");
  EXPECT_EQ(FormatDouble(1e300, 1).size(), 301u);  // every digit, not cut at a buffer's end
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "nan");
}

TEST(StringsTest, UrlOriginDropsUserinfoPathAndQuery) {
  EXPECT_EQ(UrlOrigin("https://hooks.slack.com/services/T0001/B0002/XyZsecret"),
            "https://hooks.slack.com");
  EXPECT_EQ(UrlOrigin("http://bob:hunter2@am.example:9093/api?token=x"), "http://am.example:9093");
  EXPECT_EQ(UrlOrigin("https://user:p@ss@host.example/x"), "https://host.example");
  EXPECT_EQ(UrlOrigin("https://h.example?access_key=AKIA#frag"), "https://h.example");
  EXPECT_EQ(UrlOrigin("http://[::1]:8080/hook"), "http://[::1]:8080");
  EXPECT_EQ(UrlOrigin("u:pw@host/path"), "host");
  EXPECT_EQ(UrlOrigin(""), "");
  // A password holding '/' must not be taken for the host.
  EXPECT_EQ(UrlOrigin("https://bob:pa/ss@hooks.example/x"), "https://hooks.example");
  EXPECT_EQ(UrlOrigin("https://bob:a/b/c@h:8443"), "https://h:8443");
}

}  // namespace
}  // namespace gpudoctor
