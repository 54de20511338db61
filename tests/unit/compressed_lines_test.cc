// Compressed line reads (core/root_fs_compressed.h): lz4 frames and gzip members decoded as a
// stream give exactly the lines of the plain text; malformed, truncated and oversized input is an
// error or a bound, never a crash; the pending-updates scan reads apt's *_Packages.lz4/.gz lists
// (this machine's apt keeps them lz4-compressed) and says which lists it could not read.
// Formats: the LZ4 frame format (lz4/lz4 doc/lz4_Frame_format.md), RFC 1952 (gzip).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <lz4frame.h>
#include <zlib.h>

#include <random>

#include "core/root_fs.h"
#include "core/root_fs_compressed.h"
#include "core/root_fs_lines.h"
#include "core/strings.h"
#include "probes/updates_scan.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;

std::string Lz4(std::string_view text, bool checksum = false,
                LZ4F_blockSizeID_t block = LZ4F_max64KB) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = block;
  prefs.frameInfo.blockMode = LZ4F_blockLinked;  // as apt writes them
  prefs.frameInfo.contentChecksumFlag =
      checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
  std::string out(LZ4F_compressFrameBound(text.size(), &prefs), '\0');
  size_t n = LZ4F_compressFrame(out.data(), out.size(), text.data(), text.size(), &prefs);
  EXPECT_FALSE(LZ4F_isError(n)) << LZ4F_getErrorName(n);
  out.resize(n);
  return out;
}

std::string Gzip(std::string_view text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A text of many lines over many 64 KiB blocks, CRLF and LF, an empty line, a line longer than a
// block, no final newline.
std::string BigText() {
  std::mt19937 rng(7);
  std::string t;
  for (int i = 0; i < 40000; ++i) {
    t += "Package: pkg" + std::to_string(i) + (i % 3 == 0 ? "\r\n" : "\n");
    if (i % 5 == 0)
      t += "Description: " + std::string(rng() % 120, 'a' + static_cast<char>(i % 26)) + "\n\n";
  }
  t += std::string(100000, 'L') + "\n";
  t += "last line without a newline";
  return t;
}

std::vector<std::string> PlainLines(const std::string& text, size_t max_bytes = 64u << 20) {
  testing::TempDir d;
  d.Write("plain", text);
  std::vector<std::string> out;
  Status s = ForEachFileLine(d.path() + "/plain", max_bytes, [&](std::string_view l) {
    out.emplace_back(l);
    return true;
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

Result<std::vector<std::string>> Lines(std::string_view data, Compression c,
                                       size_t max_bytes = 64u << 20) {
  std::vector<std::string> out;
  Status s = ForEachDecompressedLine(data, c, max_bytes, [&](std::string_view l) {
    out.emplace_back(l);
    return true;
  });
  if (!s.ok()) return s;
  return out;
}

TEST(CompressedLinesTest, Lz4AndGzipGiveThePlainFilesLines) {
  const std::string text = BigText();
  const std::vector<std::string> want = PlainLines(text);
  ASSERT_GT(want.size(), 40000u);
  for (Compression c : {Compression::kLz4, Compression::kGzip}) {
    std::vector<std::string> encodings;
    if (c == Compression::kLz4) {
      encodings = {Lz4(text), Lz4(text, /*checksum=*/true), Lz4(text, false, LZ4F_max4MB),
                   // Concatenated frames are one stream (the lz4 tool decodes them so).
                   Lz4(text.substr(0, 300000)) + Lz4(text.substr(300000))};
    } else {
      encodings = {Gzip(text), Gzip(text.substr(0, 300000)) + Gzip(text.substr(300000))};
    }
    for (const std::string& data : encodings) {
      auto got = Lines(data, c);
      ASSERT_TRUE(got.ok()) << CompressionName(c) << ": " << got.status().ToString();
      EXPECT_TRUE(*got == want) << CompressionName(c) << ": " << got->size() << " lines";
      // The same from a file, read 64 KiB at a time.
      testing::TempDir d;
      d.Write("list", data);
      std::vector<std::string> from_file;
      Status s =
          ForEachDecompressedFileLine(d.path() + "/list", c, 64u << 20, [&](std::string_view l) {
            from_file.emplace_back(l);
            return true;
          });
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_TRUE(from_file == want) << CompressionName(c);
    }
  }
}

TEST(CompressedLinesTest, InputCutAnywhereDecodesTheSame) {
  const std::string text = BigText().substr(0, 200000);
  for (Compression c : {Compression::kLz4, Compression::kGzip}) {
    const std::string data = c == Compression::kLz4 ? Lz4(text) : Gzip(text);
    for (size_t piece : {size_t{1}, size_t{3}, size_t{4096}, size_t{65537}}) {
      auto d = Decompressor::Create(c);
      ASSERT_TRUE(d.ok());
      std::string out;
      for (size_t i = 0; i < data.size(); i += piece) {
        Status s = (*d)->Feed(std::string_view(data).substr(i, piece), [&](std::string_view b) {
          EXPECT_LE(b.size(), 64u << 10);
          out.append(b);
          return true;
        });
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
      EXPECT_TRUE((*d)->Finish().ok());
      EXPECT_TRUE(out == text) << CompressionName(c) << " piece " << piece;
    }
  }
}

TEST(CompressedLinesTest, TruncatedOrCorruptInputIsAnErrorNamingTheFormat) {
  const std::string text = "Package: a\nVersion: 1\n\nPackage: b\nVersion: 2\n";
  for (Compression c : {Compression::kLz4, Compression::kGzip}) {
    const std::string data = c == Compression::kLz4 ? Lz4(text, /*checksum=*/true) : Gzip(text);
    const std::string name = CompressionName(c);
    ASSERT_TRUE(Lines(data, c).ok());
    // Every cut short of the whole frame: "truncated" (or malformed), never lines of garbage.
    for (size_t n = 1; n < data.size(); ++n) {
      auto got = Lines(data.substr(0, n), c);
      ASSERT_FALSE(got.ok()) << name << " cut at " << n;
      EXPECT_EQ(got.status().code(), StatusCode::kParseError);
      EXPECT_THAT(got.status().message(), HasSubstr(c == Compression::kLz4 ? "lz4" : "gzip"));
    }
    // Every single corrupted byte: the checksums (lz4 content, gzip CRC-32) or the format itself
    // catch it.
    for (size_t i = 0; i < data.size(); ++i) {
      std::string bad = data;
      bad[i] = static_cast<char>(bad[i] ^ 0x5a);
      auto got = Lines(bad, c);
      if (got.ok()) {
        // Only bytes no decoder reads can pass (gzip's OS and mtime header bytes, for example).
        EXPECT_TRUE(*got == PlainLines(text)) << name << " byte " << i;
      } else {
        EXPECT_EQ(got.status().code(), StatusCode::kParseError) << name << " byte " << i;
      }
    }
    // Text that is not compressed at all, and garbage after a whole frame.
    EXPECT_FALSE(Lines(text, c).ok()) << name;
    EXPECT_FALSE(Lines(data + "garbage!", c).ok()) << name;
  }
  auto lz4 =
      Lines(std::string("\x04\x22\x4d\x18\x40\x40\xc0\xff\xff\xff\x7f", 11), Compression::kLz4);
  ASSERT_FALSE(lz4.ok());
  EXPECT_THAT(lz4.status().message(), HasSubstr("at compressed byte"));
  // An empty input is an empty stream.
  EXPECT_TRUE(Lines("", Compression::kLz4).ok());
  EXPECT_TRUE(Lines("", Compression::kLz4)->empty());
  EXPECT_TRUE(Lines("", Compression::kGzip)->empty());
}

TEST(CompressedLinesTest, OutputIsBoundedAndTheCallerCanStop) {
  // 8 MiB of newlines compress to ≈ 33 KiB (lz4) or 8 KiB (gzip): a bomb for a reader without
  // a bound.
  const std::string zeros(8u << 20, '\n');
  for (Compression c : {Compression::kLz4, Compression::kGzip}) {
    const std::string data = c == Compression::kLz4 ? Lz4(zeros) : Gzip(zeros);
    ASSERT_LT(data.size(), 1u << 20);
    auto got = Lines(data, c, 1000);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->size(), 1000u);  // the first 1000 bytes: 1000 empty lines
    int seen = 0;
    Status s =
        ForEachDecompressedLine(data, c, 64u << 20, [&](std::string_view) { return ++seen < 5; });
    EXPECT_TRUE(s.ok());
    EXPECT_EQ(seen, 5);
  }
  // A line cut by the bound is passed, as ForEachFileLine passes it.
  auto cut = Lines(Lz4("abcdef\nghijkl\n"), Compression::kLz4, 10);
  ASSERT_TRUE(cut.ok());
  EXPECT_THAT(*cut, ::testing::ElementsAre("abcdef", "ghi"));
}

TEST(CompressedLinesTest, NamesAndUnsupportedFormats) {
  EXPECT_EQ(CompressionOfName("x_Packages.lz4"), Compression::kLz4);
  EXPECT_EQ(CompressionOfName("x_Packages.gz"), Compression::kGzip);
  EXPECT_EQ(CompressionOfName("x_Packages.xz"), Compression::kXz);
  EXPECT_EQ(CompressionOfName("x_Packages"), Compression::kNone);
  EXPECT_EQ(CompressionOfName("x_Packages.diff_Index"), Compression::kNone);
  auto xz = Lines(
      "\xfd"
      "7zXZ",
      Compression::kXz);
  ASSERT_FALSE(xz.ok());
  EXPECT_EQ(xz.status().code(), StatusCode::kUnsupported);
  testing::TempDir d;
  d.Write("l.xz",
          "\xfd"
          "7zXZ");
  Status s = ForEachDecompressedFileLine(d.path() + "/l.xz", Compression::kXz, 1 << 20,
                                         [](std::string_view) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr(d.path() + "/l.xz"));
  s = ForEachDecompressedFileLine(d.path() + "/missing.lz4", Compression::kLz4, 1 << 20,
                                  [](std::string_view) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("missing.lz4"));
  d.Write("bad.lz4", "not lz4 at all\n");
  s = ForEachDecompressedFileLine(d.path() + "/bad.lz4", Compression::kLz4, 1 << 20,
                                  [](std::string_view) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kParseError);
  EXPECT_THAT(s.message(), HasSubstr("bad.lz4: lz4: "));
}

// The scan on a root whose security list is lz4 or gzip compressed gives what the plain list
// gives; an xz or corrupt list is named in the note, and with no list read the updates are "not
// checked", never "nothing pending".
TEST(SecurityUpdatesTest, CompressedAptListsAreReadAndUnreadableOnesNamed) {
  const std::string release = "Suite: stable-security\nDate: Sun, 15 Nov 2026 08:00:00 UTC\n";
  const std::string list =
      "Package: openssl\nArchitecture: amd64\nVersion: 3.0.15-1~deb12u1\n\n"
      "Package: libc6\nArchitecture: amd64\nVersion: 2.36-9+deb12u9\n\n"
      "Package: tzdata\nArchitecture: all\nVersion: 2024a-0+deb12u1\n";
  const std::string status =
      "Package: openssl\nStatus: install ok installed\nArchitecture: amd64\nVersion: "
      "3.0.11-1~deb12u2\n\nPackage: libc6\nStatus: install ok installed\nArchitecture: "
      "amd64\nVersion: 2.36-9+deb12u4\n\nPackage: tzdata\nStatus: install ok "
      "installed\nArchitecture: all\nVersion: 2024a-0+deb12u1\n";
  const std::string base = "root/var/lib/apt/lists/x_dists_bookworm-security_";
  auto scan = [&](const std::string& suffix, const std::string& data) {
    testing::TempDir d;
    d.Write(base + "InRelease", release);
    d.Write(base + "main_binary-amd64_Packages" + suffix, data);
    d.Write("root/var/lib/dpkg/status", status);
    RootFs fs(d.path() + "/proc", d.path() + "/sys", d.path() + "/root");
    return ScanSecurityUpdates(fs, SteadyClock::now() + std::chrono::seconds(10));
  };
  UpdateFacts plain = scan("", list);
  ASSERT_TRUE(plain.checked) << plain.note;
  ASSERT_EQ(plain.pending_count, 2);
  for (const auto& [suffix, data] :
       {std::pair<std::string, std::string>{".lz4", Lz4(list)}, {".gz", Gzip(list)}}) {
    UpdateFacts u = scan(suffix, data);
    ASSERT_TRUE(u.checked) << suffix << ": " << u.note;
    EXPECT_EQ(u.note, "");
    ASSERT_EQ(u.pending_count, 2) << suffix;
    for (size_t i = 0; i < u.pending.size(); ++i) {
      EXPECT_EQ(u.pending[i].name, plain.pending[i].name);
      EXPECT_EQ(u.pending[i].candidate_version, plain.pending[i].candidate_version);
    }
  }
  // Beside a readable list, an unreadable one is named in the finding's evidence.
  {
    testing::TempDir d;
    d.Write(base + "InRelease", release);
    d.Write(base + "main_binary-amd64_Packages.lz4", Lz4(list));
    d.Write(base + "contrib_binary-amd64_Packages.xz", std::string("\xfd") + "7zXZ");
    d.Write("root/var/lib/dpkg/status", status);
    RootFs fs(d.path() + "/proc", d.path() + "/sys", d.path() + "/root");
    UpdateFacts u = ScanSecurityUpdates(fs, SteadyClock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(u.checked) << u.note;
    EXPECT_EQ(u.pending_count, 2);
    EXPECT_THAT(u.note, HasSubstr("contrib_binary-amd64_Packages.xz (unsupported: "));
    Snapshot s;
    s.time = std::chrono::system_clock::now();
    s.host.updates = std::make_shared<const UpdateFacts>(u);
    std::vector<Finding> found;
    for (auto& f : EvaluateRules(s, Thresholds())) {
      if (f.id == "host.updates.security") found.push_back(f);
    }
    ASSERT_EQ(found.size(), 1u);
    bool named = false;
    for (const auto& e : found[0].evidence) {
      if (e.name == "lists_not_read") {
        named = std::get<std::string>(e.value).find("Packages.xz") != std::string::npos;
      }
    }
    EXPECT_TRUE(named);
  }
  UpdateFacts xz = scan(".xz",
                        "\xfd"
                        "7zXZ");
  EXPECT_FALSE(xz.checked);
  EXPECT_THAT(xz.note, HasSubstr("main_binary-amd64_Packages.xz (unsupported: "));
  UpdateFacts corrupt = scan(".lz4", Lz4(list).substr(0, 20));
  EXPECT_FALSE(corrupt.checked);
  EXPECT_THAT(corrupt.note, HasSubstr("Packages.lz4 (parse_error: "));
  EXPECT_THAT(corrupt.note, HasSubstr("truncated"));
  // A security suite without any Packages list: not checked either.
  testing::TempDir d;
  d.Write(base + "InRelease", release);
  d.Write("root/var/lib/dpkg/status", status);
  RootFs fs(d.path() + "/proc", d.path() + "/sys", d.path() + "/root");
  UpdateFacts none = ScanSecurityUpdates(fs, SteadyClock::now() + std::chrono::seconds(10));
  EXPECT_FALSE(none.checked);
  EXPECT_THAT(none.note, HasSubstr("no Packages list of a security suite"));
}

}  // namespace
}  // namespace gpudoctor
