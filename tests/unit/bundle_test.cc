// The bundle's tar writer (round trip through the system `tar`, long names split or refused) and
// its redaction of secrets.
#include "bundle/bundle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "bundle/redact.h"
#include "bundle/tar_writer.h"
#include "core/settings.h"
#include "test_util.h"
#include "watch/history_store.h"
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

TEST(RedactTest, SecretsInConfigAreHidden) {
  std::string config =
      "[watch]\n"
      "listen = \"0.0.0.0:9835\"\n"
      "token_file = \"/etc/gpudoctor/token\"\n"
      "api_token = \"abc123secret\"\n"
      "\n"
      "[[notify.webhook]]\n"
      "url = \"https://bob:hunter2@hooks.example.com/x?token=qwerty99&team=ops\"\n"
      "headers = { Authorization = \"Bearer s3cr3t-bearer\" }\n"
      "[[notify.exec]]\n"
      "argv = [\"/usr/bin/curl\", \"-H\", \"Authorization: Basic Ym9iOmh1bnRlcjI=\", "
      "\"--password=pw1234\"]\n"
      "# password = \"commented\"\n"
      "min_severity = \"crit\"\n";
  std::string r = RedactText(config, {"the-token-value"});
  for (const char* secret : {"abc123secret", "hunter2", "bob:", "qwerty99", "s3cr3t-bearer",
                             "Ym9iOmh1bnRlcjI=", "pw1234"}) {
    EXPECT_EQ(r.find(secret), std::string::npos) << secret << "\n" << r;
  }
  // What is not secret stays, so the config is still useful.
  for (const char* kept : {"listen = \"0.0.0.0:9835\"", "token_file = \"/etc/gpudoctor/token\"",
                           "url = \"https://hooks.example.com/<redacted>\"",
                           "min_severity = \"crit\"", "[[notify.exec]]"}) {
    EXPECT_NE(r.find(kept), std::string::npos) << kept << "\n" << r;
  }
}

TEST(RedactTest, NotifyUrlsKeepOnlySchemeAndHost) {
  std::string r = RedactText(
      "[[notify.webhook]]\n"
      "url = \"https://hooks.slack.com/services/T0001/B0002/XyZsecret\"\n"
      "[[notify.alertmanager]]\n"
      "url = \"http://am.example:9093\"\n"
      "[watch]\n"
      "url = \"https://docs.example/x\"\n",
      {});
  EXPECT_EQ(r.find("XyZsecret"), std::string::npos) << r;
  EXPECT_EQ(r.find("T0001"), std::string::npos) << r;
  EXPECT_NE(r.find("url = \"https://hooks.slack.com/<redacted>\""), std::string::npos) << r;
  EXPECT_NE(r.find("url = \"http://am.example:9093\""), std::string::npos) << r;
  EXPECT_NE(r.find("url = \"https://docs.example/x\""), std::string::npos) << r;
}

TEST(RedactTest, ArgvElementsAfterSecretFlagsAndUserPassAreHidden) {
  std::string r = RedactText(
      "[[notify.exec]]\n"
      "argv = [\"notify\", \"--api-key\", \"k3y-VALUE\", \"-u\", \"bob:hunter2\", \"-p\", "
      "\"pw-one\", \"--host\", \"db:5432\"]\n"
      "[[notify.exec]]\n"
      "argv = [\n"
      "  \"curl\",\n"
      "  \"--token\",\n"
      "  \"multi-line-tok\",\n"
      "  \"alice:s3cret\",\n"
      "]\n",
      {});
  for (const char* secret : {"k3y-VALUE", "hunter2", "pw-one", "multi-line-tok", "s3cret"}) {
    EXPECT_EQ(r.find(secret), std::string::npos) << secret << "\n" << r;
  }
  for (const char* kept : {"\"notify\"", "\"--api-key\"", "\"-u\"", "\"--host\"", "\"db:5432\"",
                           "\"curl\"", "\"--token\""}) {
    EXPECT_NE(r.find(kept), std::string::npos) << kept << "\n" << r;
  }
}

TEST(RedactTest, SecretQueryParametersAreHidden) {
  std::string r = RedactText(
      "[probes]\n"
      "target = \"https://h/x?access_key=AKIAEXAMPLE1&sig=c2lnbmF0dXJl&X-Amz-Signature=abcdef12"
      "&api_key=k1k1k1&key=kkkk2&region=eu\"\n",
      {});
  for (const char* secret : {"AKIAEXAMPLE1", "c2lnbmF0dXJl", "abcdef12", "k1k1k1", "kkkk2"}) {
    EXPECT_EQ(r.find(secret), std::string::npos) << secret << "\n" << r;
  }
  EXPECT_NE(r.find("region=eu"), std::string::npos) << r;
}

TEST(RedactTest, MultiLineStringsOfSecretKeysAreHiddenOnEveryLine) {
  std::string r = RedactText(
      "password = \"\"\"\n"
      "line-one-secret\n"
      "[not_a_table]\n"
      "\"\"\"\n"
      "private_key = '''\n"
      "-----BEGIN KEY-----\n"
      "MIIEvQIBADANBg\n"
      "-----END KEY-----'''\n"
      "motd = \"\"\"\n"
      "hello\n"
      "\"\"\"\n"
      "[[notify.webhook]]\n"
      "url = \"https://hooks.slack.com/services/T/B/SECRETPATH\"\n",
      {});
  for (const char* secret :
       {"line-one-secret", "not_a_table", "MIIEvQIBADANBg", "BEGIN KEY", "SECRETPATH"}) {
    EXPECT_EQ(r.find(secret), std::string::npos) << secret << "\n" << r;
  }
  EXPECT_NE(r.find("hello"), std::string::npos) << r;
  // Still one line per line, so line numbers in a support answer match the original.
  EXPECT_EQ(std::count(r.begin(), r.end(), '\n'), 13) << r;
}

TEST(RedactTest, SecretKeysOfInlineTablesAreHidden) {
  std::string r = RedactText(
      "[[notify.webhook]]\n"
      "headers = { X-Api-Key = \"inline key 1\", X-Team = \"ops\", token='lit-tok' }\n",
      {});
  EXPECT_EQ(r.find("inline key 1"), std::string::npos) << r;
  EXPECT_EQ(r.find("lit-tok"), std::string::npos) << r;
  EXPECT_NE(r.find("X-Team = \"ops\""), std::string::npos) << r;
}

TEST(RedactTest, UserinfoEndsAtTheLastAt) {
  std::string r = RedactText("target = \"https://user:p@ss@host.example/x\"\n", {});
  EXPECT_EQ(r.find("ss@"), std::string::npos) << r;
  EXPECT_NE(r.find("https://<redacted>@host.example/x"), std::string::npos) << r;
  // Members other than config.toml (JSON, text) get the userinfo and NAME=VALUE rules too.
  std::string j = RedactText(
      "{\"detail\":\"webhook https://bob:pw@h/x?token=tok3n\\\"q&team=ops: sent\"}", {}, false);
  EXPECT_EQ(j,
            "{\"detail\":\"webhook https://<redacted>@h/x?token=<redacted>\\\"q&team=ops: sent\"}");
}

TEST(RedactTest, ExplicitSecretsAreReplacedEverywhere) {
  std::string r = RedactText("{\"x\":\"a-token-1234 and a-token-1234\"}", {"a-token-1234"}, false);
  EXPECT_EQ(r, "{\"x\":\"<redacted> and <redacted>\"}");
  // Line rules are off for reports: a key named like a secret keeps its value there.
  EXPECT_EQ(RedactText("password = 1\n", {}, false), "password = 1\n");
  EXPECT_TRUE(SecretLookingName("GITHUB_TOKEN"));
  EXPECT_FALSE(SecretLookingName("token_file"));
  EXPECT_FALSE(SecretLookingName("min_severity"));
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
