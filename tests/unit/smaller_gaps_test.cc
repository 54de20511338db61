// Issue 25 section 6: [gpu] expected_count defaults to the GPUs the history last saw (a card that
// fell off across a reboot is gpu.missing without configuration), and host.backup.stale takes a
// command that prints the newest backup's time (remote or object storage), under a deadline.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "core/civil_time.h"
#include "finding_test_util.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "rules/engine.h"
#include "store/expected_gpus.h"
#include "store/history_store.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::EvidenceOf;

std::vector<Finding> Only(const Snapshot& s, std::string_view id, const Thresholds& t) {
  std::vector<Finding> out;
  for (auto& f : EvaluateRules(s, t)) {
    // gpu.missing: the expected-count instance only (subject "expected_count").
    if (f.id == id && (id != "gpu.missing" || f.subject == "expected_count")) out.push_back(f);
  }
  return out;
}

StoredGpu Slot(std::string bus, int64_t last_seen) {
  StoredGpu g;
  g.pci_bus_id = std::move(bus);
  g.serial = "S" + g.pci_bus_id;
  g.last_seen_s = last_seen;
  return g;
}

TEST(ExpectedGpusTest, CountsTheSlotsSeenAtTheLedgersLastTime) {
  EXPECT_FALSE(LastSeenGpuCount({}));
  std::vector<StoredGpu> ledger;
  for (int i = 0; i < 8; ++i) ledger.push_back(Slot("0000:0" + std::to_string(i) + ":00.0", 10000));
  EXPECT_EQ(LastSeenGpuCount(ledger), 8);
  ledger[3].last_seen_s = 10000 - 86400;  // fell off a day before the last tick: not counted
  EXPECT_EQ(LastSeenGpuCount(ledger), 7);
  StoredGpu swapped = Slot("0000:01:00.0", 9990);  // a new card in slot 1: still one slot
  swapped.serial = "NEW";
  ledger.push_back(swapped);
  EXPECT_EQ(LastSeenGpuCount(ledger), 7);
}

TEST(ExpectedGpusTest, HistoryCountAppliesOnlyWhenTheConfigLeavesItUnset) {
  Settings s;
  EXPECT_TRUE(ApplyHistoryGpuCount(s, 8));
  EXPECT_EQ(s.thresholds.Find("gpu.missing", "expected_count"), 8);
  Settings configured;
  configured.thresholds.Set("gpu.missing", "expected_count", 0);  // "0: not checked", written
  EXPECT_FALSE(ApplyHistoryGpuCount(configured, 8));
  EXPECT_EQ(configured.thresholds.Find("gpu.missing", "expected_count"), 0);
  Settings none;
  EXPECT_FALSE(ApplyHistoryGpuCount(none, std::nullopt));
  EXPECT_FALSE(none.thresholds.Find("gpu.missing", "expected_count"));
}

TEST(ExpectedGpusTest, ACardThatFellOffAcrossARebootIsMissingWithoutConfiguration) {
  testing::TempDir d;
  std::string db = d.path() + "/history.db";
  {
    auto store = HistoryStore::Open(db, StoreOptions{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    (*store)->Close();
  }
  EXPECT_FALSE(ReadLastSeenGpuCount(db, SteadyClock::now() + std::chrono::seconds(5)));
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  for (int i = 0; i < 8; ++i) {
    std::string sql = "INSERT INTO gpus VALUES('S" + std::to_string(i) + "', 'GPU-" +
                      std::to_string(i) + "', '0000:0" + std::to_string(i) + ":00.0', " +
                      std::to_string(i) + ", 'H100', 1000, 5000)";
    ASSERT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  sqlite3_close(h);
  EXPECT_FALSE(
      ReadLastSeenGpuCount(d.path() + "/absent.db", SteadyClock::now() + std::chrono::seconds(5)));
  std::optional<int> count = ReadLastSeenGpuCount(db, SteadyClock::now() + std::chrono::seconds(5));
  ASSERT_EQ(count, 8);

  Settings settings;
  ASSERT_TRUE(ApplyHistoryGpuCount(settings, count));
  Snapshot s;
  s.gpu.pci_devices = std::vector<PciGpuDevice>(7);  // after the reboot: 7 on the bus
  for (int i = 0; i < 7; ++i)
    (*s.gpu.pci_devices)[i].bus_id = "0000:0" + std::to_string(i) + ":00.0";
  auto f = Only(s, "gpu.missing", Thresholds(settings.thresholds));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kCrit);
  EXPECT_EQ(EvidenceOf<int64_t>(f[0], "expected_gpus"), 8);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "expected_from"), "history (GPUs last seen)");
  // Without a history nothing is expected: no finding.
  EXPECT_TRUE(Only(s, "gpu.missing", Thresholds()).empty());
}

TEST(BackupCommandTest, ParsesUnixSecondsAndRfc3339) {
  EXPECT_EQ(ParseBackupTime("1764900000"), 1764900000);
  EXPECT_EQ(ParseBackupTime(" 1764900000.75 \n"), 1764900000);
  EXPECT_EQ(ParseBackupTime("2026-12-05T01:00:00Z"), DaysFromCivil(2026, 12, 5) * 86400 + 3600);
  EXPECT_FALSE(ParseBackupTime("yesterday"));
  EXPECT_FALSE(ParseBackupTime(""));
  EXPECT_FALSE(ParseBackupTime("6h"));  // a duration is not a time
}

// A script in a temp dir standing in for `aws s3 ls`, `restic snapshots --latest 1`, ...
std::string Script(const testing::TempDir& d, const std::string& name, const std::string& body) {
  d.Write(name, "#!/bin/sh\n" + body + "\n");
  std::string path = d.path() + "/" + name;
  chmod(path.c_str(), 0755);
  return path;
}

Snapshot RunBackup(std::vector<std::string> command, double timeout_s = 5) {
  auto settings = std::make_shared<Settings>();
  settings->backup_command = std::move(command);
  settings->backup_command_timeout_s = timeout_s;
  ProbeOutput out = RunBackupProbe({settings, SteadyClock::now() + std::chrono::seconds(10)});
  EXPECT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot s;
  if (out.apply) out.apply(s);
  return s;
}

TEST(BackupCommandTest, OldRemoteBackupIsStaleAFreshOneIsNot) {
  testing::TempDir d;
  int64_t now = DaysFromCivil(2026, 12, 5) * 86400;
  std::string newest = Script(d, "newest", "echo \"$1\"");
  Snapshot s = RunBackup({newest, "2026-12-03T00:00:00Z"});  // 48 h before `now`
  s.time = std::chrono::system_clock::time_point(std::chrono::seconds(now));
  auto f = Only(s, "host.backup.stale", Thresholds());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].subject, "command");
  EXPECT_NEAR(*EvidenceOf<double>(f[0], "age_h"), 48, 0.01);
  EXPECT_NE(f[0].summary.find("backup command"), std::string::npos);

  Snapshot fresh = RunBackup({newest, std::to_string(now - 3600)});
  fresh.time = s.time;
  EXPECT_TRUE(Only(fresh, "host.backup.stale", Thresholds()).empty());
  EXPECT_TRUE(Only(fresh, "host.backup.none", Thresholds()).empty());
}

TEST(BackupCommandTest, NoTimeIsNotCheckedNeverFine) {
  testing::TempDir d;
  auto none = [](const Snapshot& s) { return Only(s, "host.backup.none", Thresholds()); };
  Snapshot garbage = RunBackup({Script(d, "garbage", "echo 'no backups found'")});
  ASSERT_EQ(none(garbage).size(), 1u);
  EXPECT_NE(none(garbage)[0].summary.find("not unix seconds or RFC 3339"), std::string::npos);
  Snapshot failed = RunBackup({Script(d, "failed", "echo denied >&2; exit 3")});
  ASSERT_EQ(none(failed).size(), 1u);
  EXPECT_NE(none(failed)[0].summary.find("exited with 3"), std::string::npos);
  Snapshot missing = RunBackup({d.path() + "/no-such-program"});
  EXPECT_EQ(none(missing).size(), 1u);
  auto start = SteadyClock::now();
  Snapshot hung = RunBackup({Script(d, "hung", "sleep 30")}, 0.5);
  EXPECT_LT(SteadyClock::now() - start, std::chrono::seconds(3)) << "killed at its timeout";
  ASSERT_EQ(none(hung).size(), 1u);
  EXPECT_NE(none(hung)[0].summary.find("time"), std::string::npos) << none(hung)[0].summary;
}

}  // namespace
}  // namespace gpudoctor
