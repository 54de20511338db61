// core/toml_ascii_guard.h: characters outside ASCII are found outside strings and comments only,
// every valid TOML text passes (the same texts toml++ accepts), and the config loader and the
// bundle's redaction refuse such text with its place before toml++ sees it (toml++ 3.0 reaches
// __builtin_unreachable on it: found by bundle_redact_fuzz once toml++ was compiled in).
#include "core/toml_ascii_guard.h"

#include <gtest/gtest.h>

#include "bundle/redact.h"
#include "config/config.h"
#include "core/toml.h"

namespace gpudoctor {
namespace {

using std::string_view_literals::operator""sv;

TEST(TomlAsciiGuardTest, ValidTomlWithNonAsciiInStringsAndCommentsPasses) {
  const char* valid[] = {
      "# é комментарий ひらがな\nkey = 1\n",
      "key = \"é Ж ひ \\\" # not a comment é\"\n",
      "key = 'C:\\é'  # é\n",
      "k = \"\"\"\né \" \"\" ひ\n\"\"\"\n",
      "k = '''\né ' '' ひ\n'''\n",
      "k = \"\"\"a é\"\"\"\"\n",  // a multi-line string may end with one more quote
      "\"é key\" = 1\n'ключ' = 2\n",
      "[\"таблица\"]\nx = \"\\\\\"  # é\n",
      "k = \"\"\"line \\\n  é\"\"\"\n",
      "a.\"é\".c = 1\nx = [\n  \"é\", # é\n  'ж'\n]\ny = { k = \"é\", \"é\" = 1 }\n",
      "[ \"é\" . 'ж' ]\n[[ \"ё\" ]]\n",
  };
  for (const char* text : valid) {
    EXPECT_FALSE(FindNonAsciiOutsideStrings(text).has_value()) << text;
    EXPECT_NO_THROW(toml::parse(text)) << text;  // the texts are valid TOML
  }
}

TEST(TomlAsciiGuardTest, NonAsciiOutsideStringsIsFoundWithItsPlace) {
  struct Case {
    std::string_view text;
    size_t line, column;
  } cases[] = {
      {"[[nourkey\xca\xbeKIA0&ss_key=AK\n", 1, 10},  // the fuzzer's input
      {"a = 1\n\xc3\xa9 = 1\n", 2, 1},
      {"a = \"x\" \xc3\xa9\n", 1, 9},
      {"k = '''\nx\n''' \xe3\x81\x82\n", 3, 5},
      {"k = \"\"\"\nx\"\"\"\"\xc3\xa9\n", 2, 6},
      {"# c\nk = \"x\\\"\" \xd0\x96\n", 2, 11},
      // A quote where no string can begin is no string (toml++ scans on; found by the fuzzer).
      {"target =0\"://\xd1\x97\"\n", 1, 14},
      {"a = 1.\"\xc3\xa9\"\n", 1, 8},
      // A NUL byte is no place where a string begins (the fuzzer's bundle_redact_fuzz crash).
      {"a =0\"x\0\"h/\xd1\x97\"4\n"sv, 1, 11},
      {"\0\"\xc3\xa9\"\n"sv, 1, 3},
  };
  for (const Case& c : cases) {
    auto place = FindNonAsciiOutsideStrings(c.text);
    ASSERT_TRUE(place.has_value()) << c.text;
    EXPECT_EQ(place->line, c.line) << c.text;
    EXPECT_EQ(place->column, c.column) << c.text;
  }
}

TEST(TomlAsciiGuardTest, ConfigAndRedactionRefuseItWithThePlace) {
  Settings s;
  auto r = ApplyConfigText("[check]\ndeadline_s = 3\n[[nourkey\xca\xbe]]\n", "gpudoctor.toml", s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gpudoctor.toml:3:10: a character outside ASCII"),
            std::string::npos)
      << r.status().message();
  std::string redacted = RedactConfigToml("token = \"s3cret\"\n\xc3\xa9 = 1\n", {});
  EXPECT_EQ(redacted, "# the config does not parse as TOML (line 2, column 1); not included\n");
  EXPECT_EQ(redacted.find("s3cret"), std::string::npos);
}

// core/toml.h's replacement of toml++ 3.3's is_non_ascii_horizontal_whitespace: defined for every
// code point, true for exactly the 20 toml++ lists (the original reached __builtin_unreachable for
// U+00A1..U+0499 and more).
TEST(TomlAsciiGuardTest, TheParsersWhitespaceTestIsDefinedForEveryCodePoint) {
  size_t whitespace = 0;
  for (char32_t c = 0x80; c <= 0x10FFFF; ++c) {
    if (toml::impl::is_non_ascii_horizontal_whitespace(c)) ++whitespace;
  }
  EXPECT_EQ(whitespace, 20u);
  for (char32_t c : {U'\u00A0', U'\u1680', U'\u180E', U'\u2000', U'\u200B', U'\u202F', U'\u205F',
                     U'\u2060', U'\u3000', U'\uFEFF'}) {
    EXPECT_TRUE(toml::impl::is_non_ascii_horizontal_whitespace(c)) << static_cast<uint32_t>(c);
  }
  for (char32_t c : {U'\u00A1', U'\u0457', U'\u0499', U'\u3001', U'\u3042', U'\uFEFE', U'\u200C'}) {
    EXPECT_FALSE(toml::impl::is_non_ascii_horizontal_whitespace(c)) << static_cast<uint32_t>(c);
  }
}

// Valid TOML whose parse asked toml++ 3.3 about such a character: a line-ending backslash in a
// multi-line string followed by Cyrillic, and an escape followed by CJK. Both parse to the text.
TEST(TomlAsciiGuardTest, NonAsciiAfterALineEndingBackslashParses) {
  const std::string text = "a = \"\"\"x \\\n   \xd1\x97\"\"\"\nb = \"\\t\xe3\x81\x82\"\n";
  EXPECT_FALSE(FindNonAsciiOutsideStrings(text).has_value());
  toml::table doc = toml::parse(text);
  EXPECT_EQ(doc["a"].value_or(std::string()), "x \xd1\x97");
  EXPECT_EQ(doc["b"].value_or(std::string()), "\t\xe3\x81\x82");
}

}  // namespace
}  // namespace gpudoctor
