// core/toml_ascii_guard.h: characters outside ASCII are found outside strings and comments only,
// every valid TOML text passes (the same texts toml++ accepts), and the config loader and the
// bundle's redaction refuse such text with its place before toml++ sees it (toml++ 3.0 reaches
// __builtin_unreachable on it: found by bundle_redact_fuzz once toml++ was compiled in).
#include "core/toml_ascii_guard.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "bundle/redact.h"
#include "config/config.h"

namespace gpudoctor {
namespace {

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
    const char* text;
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

}  // namespace
}  // namespace gpudoctor
