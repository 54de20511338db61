// The bundle's tar writer (round trip through the system `tar`, long names split or refused) and
// its redaction of secrets.
#include "bundle/bundle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "bundle/redact.h"
#include "bundle/tar_writer.h"
#include "core/settings.h"
#include "store/history_store.h"
#include "test_util.h"
#include "watch/watch_types.h"

namespace gpudoctor {
namespace {

using testing::ReadFileOrDie;
using testing::RunProgram;
using testing::TempDir;

TEST(TarWriterTest, RoundTripThroughSystemTar) {
  if (!std::filesystem::exists("/usr/bin/tar") && !std::filesystem::exists("/bin/tar")) {
    GTEST_SKIP() << "no tar";
  }
  TempDir dir;
  std::string path = dir.path() + "/a.tar.gz";
  auto w = TarGzWriter::Create(path, 1700000000);
  ASSERT_TRUE(w.ok()) << w.status().message();
  std::string big(70000, 'x');
  big += "end";
  std::string long_dir(120, 'd');
  std::string long_name = long_dir + "/" + std::string(90, 'n') + ".json";  // 215 bytes
  ASSERT_TRUE((*w)->Add("report.json", "{\"a\":1}\n").ok());
  ASSERT_TRUE((*w)->Add("history/metrics.json", big).ok());
  ASSERT_TRUE((*w)->Add("empty.txt", "").ok());
  ASSERT_TRUE((*w)->Add(long_name, "long").ok());
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));

  auto list = RunProgram({"/bin/tar", "-tzvf", path});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.err, "");  // no "checksum error", no "unexpected EOF"
  EXPECT_NE(list.out.find("-rw-r--r-- root/root         8 2023-11-14 22:13 report.json"),
            std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("70003"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(long_name), std::string::npos) << list.out;

  ASSERT_EQ(RunProgram({"/bin/tar", "-xzf", path, "-C", dir.path()}).exit_code, 0);
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/report.json"), "{\"a\":1}\n");
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/history/metrics.json"), big);
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/" + long_name), "long");
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/empty.txt"), "");
}

TEST(TarWriterTest, NamesThatDoNotFitAreRefusedNotTruncated) {
  EXPECT_TRUE(UstarHeader(std::string(100, 'a'), 1, 0644, 0).ok());
  auto no_slash = UstarHeader(std::string(101, 'a'), 1, 0644, 0);
  ASSERT_FALSE(no_slash.ok());
  EXPECT_NE(no_slash.status().message().find("101 bytes"), std::string::npos);
  // A last component over 100 bytes cannot be split.
  EXPECT_FALSE(UstarHeader("dir/" + std::string(101, 'b'), 1, 0644, 0).ok());
  // A prefix over 155 bytes neither.
  EXPECT_FALSE(UstarHeader(std::string(160, 'p') + "/x", 1, 0644, 0).ok());
  EXPECT_FALSE(UstarHeader("/etc/passwd", 1, 0644, 0).ok());
  EXPECT_FALSE(UstarHeader("a/../../b", 1, 0644, 0).ok());
  EXPECT_FALSE(UstarHeader("", 1, 0644, 0).ok());
}

TEST(TarWriterTest, UnwritableDirectoryIsAnErrorAndAbandonedArchiveLeavesNothing) {
  TempDir dir;
  auto bad = TarGzWriter::Create(dir.path() + "/missing/x.tar.gz", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("missing/x.tar.gz.partial"), std::string::npos);
  {
    auto w = TarGzWriter::Create(dir.path() + "/y.tar.gz", 0);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add("a", "b").ok());
  }  // no Close(): abandoned
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/y.tar.gz"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/y.tar.gz.partial"));
}

TEST(TarWriterTest, ExistingOutputOrPartialIsRefusedAndKept) {
  TempDir dir;
  std::string config = dir.path() + "/config.toml";
  dir.Write("config.toml", "keep me\n");
  auto w = TarGzWriter::Create(config, 0);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("config.toml exists"), std::string::npos)
      << w.status().message();
  EXPECT_EQ(ReadFileOrDie(config), "keep me\n");
  EXPECT_FALSE(std::filesystem::exists(config + ".partial"));

  // A .partial that is there belongs to someone else: refused, not removed.
  dir.Write("b.tar.gz.partial", "another run\n");
  auto p = TarGzWriter::Create(dir.path() + "/b.tar.gz", 0);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("b.tar.gz.partial exists (another bundle running?)"),
            std::string::npos)
      << p.status().message();
  EXPECT_EQ(ReadFileOrDie(dir.path() + "/b.tar.gz.partial"), "another run\n");
}

TEST(TarWriterTest, FileAppearingWhileWritingIsNotReplaced) {
  TempDir dir;
  std::string out = dir.path() + "/c.tar.gz";
  auto w = TarGzWriter::Create(out, 0);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Add("a", "b").ok());
  dir.Write("c.tar.gz", "appeared\n");
  Status s = (*w)->Close();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("appeared meanwhile"), std::string::npos) << s.message();
  EXPECT_EQ(ReadFileOrDie(out), "appeared\n");
  EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
}

TEST(BundleTest, NotifyEventsOfOlderVersionsShowNoWebhookSecret) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  constexpr int64_t kT0 = 1764000000;
  {
    auto store = HistoryStore::Open(db, {});
    ASSERT_TRUE(store.ok()) << store.status().message();
    auto tick = std::make_shared<TickResult>();
    tick->unix_ms = kT0 * 1000;
    // What NotifierHub recorded before it kept only the origin.
    tick->events.push_back(
        {kT0 * 1000, "notify_sent", 1, "SN1", "0000:3b:00.0",
         "webhook https://bob:hunter2@hooks.slack.com/services/T0001/B0002/XyZsecret: opened "
         "gpu.ecc.dbe (attempt 2)"});
    tick->events.push_back({kT0 * 1000, "notify_failed", std::nullopt, "", "",
                            "alertmanager http://am.example:9093/x?token=tok3n: gave up"});
    (*store)->Append(tick);
    (*store)->Flush();
    (*store)->Close();
  }
  Report report;
  Settings settings;
  BundleInputs in;
  in.report = &report;
  in.settings = &settings;
  in.db_path = db;
  in.now_unix_s = kT0 + 60;
  std::string events;
  for (const BundleMember& m : BuildBundleMembers(in)) {
    if (m.name == "history/events.json") events = m.content;
  }
  ASSERT_NE(events.find("notify_sent"), std::string::npos) << events;
  for (const char* secret : {"bob", "hunter2", "XyZsecret", "T0001", "tok3n"}) {
    EXPECT_EQ(events.find(secret), std::string::npos) << secret << "\n" << events;
  }
  EXPECT_NE(events.find("webhook https://hooks.slack.com: opened gpu.ecc.dbe (attempt 2)"),
            std::string::npos)
      << events;
  EXPECT_NE(events.find("alertmanager http://am.example:9093: gave up"), std::string::npos)
      << events;
}

TEST(BundleTest, DefaultNameHasHostAndUtcTime) {
  EXPECT_EQ(DefaultBundleName("gpu-node/7 a", 1700000000),
            "gpudoctor-bundle-gpu-node_7_a-20231114T221320Z.tar.gz");
}

}  // namespace
}  // namespace gpudoctor
