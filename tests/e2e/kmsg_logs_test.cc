// End-to-end: `gpudoctor logs FILE|-`, `explain xid N`, and `check --kmsg-file` on fixtures.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::FixturePath;
using ::testing::HasSubstr;
using testing::RunGpudoctor;

TEST(KmsgLogsE2eTest, JsonFindingsAndExitCode) {
  auto r = RunGpudoctor({"logs", "--json", FixturePath("kmsg/dmesg_r535_h100.log")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "crit");
  EXPECT_EQ(j["kernel_log"]["gpus"].size(), 2u);
  int xids = 0;
  bool saw119 = false;
  for (const auto& f : j["findings"]) {
    if (f["id"] == "gpu.xid") ++xids;
    if (f["id"] == "gpu.xid" && f["evidence"]["xid"] == 119) {
      saw119 = true;
      EXPECT_EQ(f["evidence"]["count"], 2);
      EXPECT_EQ(f["gpu"]["uuid"], "GPU-9c03b6f1-7d2e-54a8-b1c9-3e6f0a8d2c47");
    }
  }
  EXPECT_EQ(xids, 6);
  EXPECT_TRUE(saw119);
}

// `logs --json` is written a finding at a time (WriteLogsJson); its bytes must stay those of
// dump(2) of the whole document (indentation, separators, an empty findings array).
TEST(KmsgLogsE2eTest, StreamedJsonIsTheWholeDocumentsDump) {
  testing::TempDir dir;
  dir.Write("empty.log", "");
  for (const std::string& path :
       {FixturePath("kmsg/dmesg_r535_h100.log"), FixturePath("kmsg/kmsg_raw_r570_b200.log"),
        dir.path() + "/empty.log"}) {
    auto r = RunGpudoctor({"logs", "--json", path});
    ASSERT_GE(r.exit_code, 0) << r.err;
    ASSERT_LE(r.exit_code, 2) << r.err;
    const auto j = nlohmann::ordered_json::parse(r.out);
    EXPECT_EQ(r.out, j.dump(2) + "\n") << path;
    EXPECT_EQ(j["findings"].empty(), path == dir.path() + "/empty.log") << path;
  }
}

TEST(KmsgLogsE2eTest, StdinTextAndCleanLog) {
  std::string text = testing::ReadFileOrDie(FixturePath("kmsg/syslog_r390_k80.log"));
  auto r = RunGpudoctor({"logs", "-"}, std::chrono::seconds(30), {{"TZ", "UTC"}}, text);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpudoctor logs: stdin"));
  EXPECT_THAT(r.out, HasSubstr("CRIT  pcie.aer"));
  auto clean = RunGpudoctor({"logs", "-"}, std::chrono::seconds(30), {},
                            "[ 1.0] usb 1-1: new device\n[ 2.0] EXT4-fs mounted\n");
  EXPECT_EQ(clean.exit_code, 0);
  EXPECT_THAT(clean.out, HasSubstr("0 finding(s), verdict ok"));
}

// `logs --help` lists --kmsg-file, so it is the file as well as the operand is; both at once
// must name the same file; the usage line shows the operand.
TEST(KmsgLogsE2eTest, KmsgFileFlagIsTheOperandsEqual) {
  const std::string log = FixturePath("kmsg/dmesg_r535_h100.log");
  auto by_operand = RunGpudoctor({"logs", "--json", log});
  auto by_flag = RunGpudoctor({"logs", "--json", "--kmsg-file", log});
  EXPECT_EQ(by_flag.exit_code, 2) << by_flag.err;
  EXPECT_EQ(by_flag.exit_code, by_operand.exit_code);
  EXPECT_EQ(nlohmann::json::parse(by_flag.out)["findings"],
            nlohmann::json::parse(by_operand.out)["findings"]);
  auto both_same = RunGpudoctor({"logs", "--kmsg-file", log, log});
  EXPECT_EQ(both_same.exit_code, 2) << both_same.err;
  auto two = RunGpudoctor({"logs", "--kmsg-file", log, FixturePath("kmsg/syslog_r390_k80.log")});
  EXPECT_EQ(two.exit_code, 3);
  EXPECT_THAT(two.err, HasSubstr("two files"));
  auto none = RunGpudoctor({"logs"});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_THAT(none.err, HasSubstr("gpudoctor logs FILE"));
  auto help = RunGpudoctor({"logs", "--help"});
  EXPECT_THAT(help.out, HasSubstr("usage: gpudoctor logs FILE|- [flags]"));
  EXPECT_THAT(RunGpudoctor({"help", "compare"}).out,
              HasSubstr("usage: gpudoctor compare GOOD [NOW] [flags]"));
}

TEST(KmsgLogsE2eTest, MissingFileExitsThree) {
  auto r = RunGpudoctor({"logs", "/nonexistent/kern.log"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/kern.log"));
  EXPECT_EQ(RunGpudoctor({"logs"}).exit_code, 3);
}

TEST(KmsgLogsE2eTest, ExplainXid) {
  auto r = RunGpudoctor({"explain", "xid", "79"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"));
  EXPECT_THAT(r.out, HasSubstr("severity: fatal"));
  auto u = RunGpudoctor({"explain", "xid", "999"});
  EXPECT_EQ(u.exit_code, 0);
  EXPECT_THAT(u.out, HasSubstr("look up"));
  EXPECT_EQ(RunGpudoctor({"explain", "xid", "abc"}).exit_code, 3);
  auto cat = RunGpudoctor({"explain", "gpu.xid"});
  EXPECT_EQ(cat.exit_code, 0);
  EXPECT_THAT(cat.out, HasSubstr("escalate_distinct_processes"));
}

TEST(KmsgLogsE2eTest, CheckIncludesKernelLogFindings) {
  auto r = RunGpudoctor({"check", "--json", "--probes", "kmsg", "--kmsg-file",
                         FixturePath("kmsg/journal_short_iso_r560_gh200.log")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  auto j = nlohmann::json::parse(r.out);
  bool init = false;
  for (const auto& f : j["findings"]) init = init || f["id"] == "driver.init_failed";
  EXPECT_TRUE(init);
  ASSERT_EQ(j["probes"].size(), 1u);
  EXPECT_EQ(j["probes"][0]["status"], "ok");
  // The kernel-log accounting rides along as its own section.
  EXPECT_THAT(j["kernel_log"]["source"].get<std::string>(), HasSubstr("journal_short_iso"));
  EXPECT_GT(j["kernel_log"]["bytes_scanned"].get<int64_t>(), 0);
}

TEST(KmsgLogsE2eTest, CheckWithSavedRingInRootfsAndSince) {
  testing::TempDir root;
  root.Write("dev/kmsg", testing::ReadFileOrDie(FixturePath("kmsg/kmsg_raw_r570_b200.log")));
  auto r = RunGpudoctor({"check", "--json", "--probes", "kmsg", "--path.rootfs", root.path()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NETIR_LINK_EVT"));
  // Boot-relative stamps become wall time from this boot: --since in the future drops them all.
  auto s = RunGpudoctor({"check", "--json", "--probes", "kmsg", "--path.rootfs", root.path(),
                         "--since", "@4000000000"});
  EXPECT_EQ(s.exit_code, 0) << s.out;
  EXPECT_EQ(RunGpudoctor({"check", "--probes", "kmsg", "--since", "yesterday-ish"}).exit_code, 3);
}

// Issue 8 item 19: `logs` honours --deadline on inputs that never end, and says the scan was cut.
TEST(KmsgLogsE2eTest, LogsStopsAtTheDeadlineOnEndlessInput) {
  auto r =
      RunGpudoctor({"logs", "--json", "--deadline", "1", "/dev/zero"}, std::chrono::seconds(20));
  ASSERT_NE(r.exit_code, -1) << "logs did not stop at its deadline";
  EXPECT_LT(r.seconds, 5);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel_log"]["stopped_at_deadline"], true);
  ASSERT_GE(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["id"], "gpudoctor.kmsg.partial");
}

TEST(KmsgLogsE2eTest, CheckKmsgFileCutAtTheDeadlineIsNotCleanOk) {
  testing::TempDir dir;
  dir.MakeFifo("k.fifo");
  // Keep a silent writer attached so the FIFO never ends.
  int wfd = ::open((dir.path() + "/k.fifo").c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(wfd, 0);
  auto r = RunGpudoctor({"check", "--json", "--probes", "kmsg", "--deadline", "1", "--kmsg-file",
                         dir.path() + "/k.fifo"},
                        std::chrono::seconds(20));
  ::close(wfd);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpudoctor.kmsg.partial"));
}

TEST(KmsgLogsE2eTest, SinceOnBootRelativeLogSaysItCouldNotFilter) {
  auto r = RunGpudoctor({"logs", "--since", "2h", FixturePath("kmsg/dmesg_r535_h100.log")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpudoctor.kmsg.since_unapplied"));
}

}  // namespace
}  // namespace gpudoctor
