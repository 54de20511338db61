// ForEachFileLine (core/root_fs_lines.h): a file streamed in chunks gives exactly the lines of
// SplitLines(RootFs::ReadFile(path, max_bytes)), whatever the chunk size and wherever the cut.
#include "core/root_fs_lines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/root_fs.h"
#include "core/strings.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

std::vector<std::string> Streamed(const std::string& path, size_t max_bytes, size_t chunk) {
  std::vector<std::string> out;
  Status s = ForEachFileLine(
      path, max_bytes,
      [&](std::string_view line) {
        out.emplace_back(line);
        return true;
      },
      chunk);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

std::vector<std::string> Whole(const std::string& path, size_t max_bytes) {
  auto text = RootFs::ReadFile(path, max_bytes);
  EXPECT_TRUE(text.ok());
  std::vector<std::string> out;
  for (std::string_view line : SplitLines(*text)) out.emplace_back(line);
  return out;
}

TEST(ForEachFileLineTest, SameLinesAsTheWholeFileForEveryChunkSizeAndCut) {
  testing::TempDir dir;
  // Empty lines, CRLF, a lone '\r', a line longer than every small chunk, and no final '\n'.
  std::string text = "Package: a\r\nVersion: 1\n\n\n\r\n \tcontinued\nx\r\r\n" +
                     std::string(300, 'L') + "\nlast line without newline\r";
  dir.Write("f", text);
  const std::string path = dir.path() + "/f";
  for (size_t chunk : {1, 2, 3, 5, 7, 16, 64, 301, 4096, 65536}) {
    for (size_t max : {text.size() + 10, text.size(), text.size() - 1, size_t{11}, size_t{12},
                       size_t{13}, size_t{1}, size_t{0}}) {
      EXPECT_EQ(Streamed(path, max, chunk), Whole(path, max))
          << "chunk " << chunk << ", max_bytes " << max;
    }
  }
  // A cut at 13 bytes ends inside "Version: 1": that piece is the last line.
  EXPECT_EQ(Streamed(path, 13, 4), (std::vector<std::string>{"Package: a", "V"}));
}

TEST(ForEachFileLineTest, EndsOnAFinalNewlineAndStopsWhenAsked) {
  testing::TempDir dir;
  dir.Write("f", "one\ntwo\nthree\n");
  EXPECT_EQ(Streamed(dir.path() + "/f", 1 << 20, 3),
            (std::vector<std::string>{"one", "two", "three"}));
  std::vector<std::string> seen;
  Status s = ForEachFileLine(
      dir.path() + "/f", 1 << 20,
      [&](std::string_view line) {
        seen.emplace_back(line);
        return line != "two";
      },
      2);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"one", "two"}));
  dir.Write("empty", "");
  EXPECT_TRUE(Streamed(dir.path() + "/empty", 1 << 20, 64).empty());
}

TEST(ForEachFileLineTest, MissingFileAndDirectoryAreErrorsNamingThePath) {
  testing::TempDir dir;
  int calls = 0;
  auto count = [&](std::string_view) { return ++calls > 0; };
  Status missing = ForEachFileLine(dir.path() + "/nope", 1 << 20, count);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("/nope"), std::string::npos);
  dir.MakeDir("d");
  Status is_dir = ForEachFileLine(dir.path() + "/d", 1 << 20, count);
  EXPECT_EQ(is_dir.code(), StatusCode::kIoError);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace gpudoctor
