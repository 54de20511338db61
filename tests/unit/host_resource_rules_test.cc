// Rule tests for memory, swap, pressure and disks: Snapshot in, findings out.
#include <gtest/gtest.h>

#include <algorithm>

#include "finding_test_util.h"
#include "rules/engine.h"

namespace gpudoctor {
namespace {

using testing::EvidenceOf;

constexpr uint64_t kGiB = 1ull << 30;

std::vector<Finding> Eval(const Snapshot& s, const Thresholds& t = Thresholds()) {
  return EvaluateRules(s, t);
}

std::optional<Finding> Find(const std::vector<Finding>& f, std::string_view id,
                            std::string subject = "") {
  for (const auto& x : f) {
    if (x.id == id && (subject.empty() || x.subject == subject)) return x;
  }
  return std::nullopt;
}

Snapshot WithMemory(uint64_t total, uint64_t avail) {
  Snapshot s;
  MemoryFacts m;
  m.total_bytes = total;
  m.available_bytes = avail;
  m.swap_total_bytes = 8 * kGiB;
  m.swap_free_bytes = 8 * kGiB;
  s.host.memory = m;
  return s;
}

TEST(MemoryRulesTest, HealthyMemoryNoFinding) {
  EXPECT_TRUE(Eval(WithMemory(100 * kGiB, 50 * kGiB)).empty());
  EXPECT_TRUE(Eval(Snapshot()).empty());
}

TEST(MemoryRulesTest, LowMemoryBoundaries) {
  // warn at <= 10%, crit at <= 5% of MemTotal.
  EXPECT_FALSE(Find(Eval(WithMemory(1000 * kGiB, 101 * kGiB)), "host.memory.low"));
  auto warn = Eval(WithMemory(1000 * kGiB, 100 * kGiB));
  ASSERT_TRUE(Find(warn, "host.memory.low"));
  EXPECT_EQ(Find(warn, "host.memory.low")->severity, Severity::kWarn);
  auto crit = Eval(WithMemory(1000 * kGiB, 50 * kGiB));
  auto f = Find(crit, "host.memory.low");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kCrit);
  EXPECT_DOUBLE_EQ(*EvidenceOf<double>(*f, "available_pct"), 5.0);
  EXPECT_EQ(*EvidenceOf<int64_t>(*f, "available_bytes"), static_cast<int64_t>(50 * kGiB));
  EXPECT_EQ(*EvidenceOf<int64_t>(*f, "swap_used_bytes"), 0);
  EXPECT_FALSE(f->next_steps.empty());
}

TEST(MemoryRulesTest, MissingMemAvailableIsNotBroken) {
  Snapshot s;
  MemoryFacts m;
  m.total_bytes = 100 * kGiB;
  s.host.memory = m;
  EXPECT_TRUE(Eval(s).empty());
}

TEST(MemoryRulesTest, ThresholdsComeFromConfig) {
  Thresholds t;
  t.Set("host.memory.low", "warn_available_pct", 60);
  auto f = Eval(WithMemory(100 * kGiB, 50 * kGiB), t);
  ASSERT_TRUE(Find(f, "host.memory.low"));
  t.SetEnabled("host.memory.low", false);
  EXPECT_TRUE(Eval(WithMemory(100 * kGiB, 50 * kGiB), t).empty());
}

Snapshot WithSwap(std::optional<double> in, std::optional<double> out_rate) {
  Snapshot s = WithMemory(100 * kGiB, 50 * kGiB);
  s.host.memory->swap_in_pages_per_s = in;
  s.host.memory->swap_out_pages_per_s = out_rate;
  s.host.memory->swap_free_bytes = 2 * kGiB;
  s.host.memory->window_s = 0.3;
  return s;
}

TEST(SwapRulesTest, Boundaries) {
  EXPECT_FALSE(Find(Eval(WithSwap(0, 0)), "host.swap.active"));
  EXPECT_FALSE(Find(Eval(WithSwap(49, 50)), "host.swap.active"));  // 99 < 100
  auto warn = Find(Eval(WithSwap(50, 50)), "host.swap.active");
  ASSERT_TRUE(warn);
  EXPECT_EQ(warn->severity, Severity::kWarn);
  auto crit = Eval(WithSwap(4000, 6000));
  auto f = Find(crit, "host.swap.active");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kWarn);  // over 0.3 s: a moment, capped at warn
  EXPECT_DOUBLE_EQ(*EvidenceOf<double>(*f, "window_s"), 0.3);
  Snapshot long_window = WithSwap(4000, 6000);
  long_window.host.memory->window_s = 10;
  auto lf = Find(Eval(long_window), "host.swap.active");
  ASSERT_TRUE(lf);
  EXPECT_EQ(lf->severity, Severity::kCrit);
  EXPECT_DOUBLE_EQ(*EvidenceOf<double>(*f, "swap_pages_per_s"), 10000.0);
  EXPECT_EQ(*EvidenceOf<int64_t>(*f, "swap_used_bytes"), static_cast<int64_t>(6 * kGiB));
  EXPECT_NE(f->summary.find("6 GiB"), std::string::npos) << f->summary;
}

TEST(SwapRulesTest, NoRatesNoFinding) {
  EXPECT_FALSE(Find(Eval(WithSwap(std::nullopt, std::nullopt)), "host.swap.active"));
  // One direction alone still counts.
  EXPECT_TRUE(Find(Eval(WithSwap(std::nullopt, 500)), "host.swap.active"));
}

PressureResource Psi(double some10, std::optional<double> full10) {
  PressureResource r;
  r.some.avg10_pct = some10;
  r.some.avg60_pct = some10 / 2;
  r.some.avg300_pct = some10 / 4;
  r.some.total_us = 1;
  if (full10) {
    PressureLine full;
    full.avg10_pct = *full10;
    full.avg60_pct = 0;
    full.avg300_pct = 0;
    full.total_us = 1;
    r.full = full;
  }
  return r;
}

TEST(PressureRulesTest, HealthyAndBoundaries) {
  Snapshot s;
  PressureFacts p;
  p.cpu = Psi(29.99, 0);
  p.memory = Psi(9.99, 9.99);
  p.io = Psi(29.99, 19.99);
  s.host.pressure = p;
  EXPECT_TRUE(Eval(s).empty());

  p.cpu = Psi(30, std::nullopt);
  p.memory = Psi(10, 0);
  p.io = Psi(0, 20);  // full alone makes it critical
  s.host.pressure = p;
  auto f = Eval(s);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(Find(f, "host.pressure.cpu")->severity, Severity::kWarn);
  EXPECT_EQ(Find(f, "host.pressure.memory")->severity, Severity::kWarn);
  EXPECT_EQ(Find(f, "host.pressure.io")->severity, Severity::kCrit);
  EXPECT_DOUBLE_EQ(*EvidenceOf<double>(*Find(f, "host.pressure.io"), "full_avg10_pct"), 20.0);

  p.cpu = Psi(70, 100);  // system-wide cpu "full" is ignored
  s.host.pressure = p;
  auto cpu = Find(Eval(s), "host.pressure.cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->severity, Severity::kCrit);
  EXPECT_FALSE(EvidenceOf<double>(*cpu, "full_avg10_pct").has_value());
}

MountFacts Mount(std::string point, uint64_t total, uint64_t avail, bool ro = false) {
  MountFacts m;
  m.device = "/dev/md0";
  m.mount_point = std::move(point);
  m.fs_type = "xfs";
  m.read_only = ro;
  m.total_bytes = total;
  m.available_bytes = avail;
  m.free_bytes = avail;
  m.inodes_total = 1000;
  m.inodes_free = 900;
  return m;
}

Snapshot WithMounts(std::vector<MountFacts> mounts) {
  Snapshot s;
  s.host.mounts = std::move(mounts);
  return s;
}

TEST(DiskRulesTest, HealthyNoFinding) {
  EXPECT_TRUE(Eval(WithMounts({Mount("/", 100 * kGiB, 60 * kGiB)})).empty());
  EXPECT_TRUE(Eval(WithMounts({})).empty());
}

TEST(DiskRulesTest, FullBoundariesPerMount) {
  auto f = Eval(WithMounts({Mount("/", 1000, 101), Mount("/data", 1000, 100),
                            Mount("/scratch", 1000, 30), Mount("/dev/shm", 1000, 0)}));
  EXPECT_FALSE(Find(f, "host.disk.full", "/"));  // 89.9%
  ASSERT_TRUE(Find(f, "host.disk.full", "/data"));
  EXPECT_EQ(Find(f, "host.disk.full", "/data")->severity, Severity::kWarn);
  EXPECT_EQ(Find(f, "host.disk.full", "/scratch")->severity, Severity::kCrit);
  auto shm = Find(f, "host.disk.full", "/dev/shm");
  ASSERT_TRUE(shm);
  EXPECT_NE(shm->next_steps.front().find("shm-size"), std::string::npos);
  EXPECT_EQ(*EvidenceOf<std::string>(*shm, "mount_point"), "/dev/shm");
  EXPECT_DOUBLE_EQ(*EvidenceOf<double>(*shm, "used_pct"), 100.0);
}

TEST(DiskRulesTest, ReservedBlocksCountLikeDf) {
  // ext4 with 5% reserved: 1000 total, 60 free, 10 available to users -> 940/(940+10) = 98.9%.
  MountFacts m = Mount("/", 1000, 10);
  m.free_bytes = 60;
  auto f = Find(Eval(WithMounts({m})), "host.disk.full");
  ASSERT_TRUE(f);
  EXPECT_NEAR(*EvidenceOf<double>(*f, "used_pct"), 98.947, 0.01);
}

TEST(DiskRulesTest, ReadOnlyAndErroredMountsAreNotFull) {
  MountFacts squash = Mount("/snap/core20/1", 1000, 0, /*ro=*/true);
  MountFacts denied = Mount("/secret", 1000, 0);
  denied.error = "permission_denied: /secret";
  MountFacts zero = Mount("/empty", 0, 0);
  EXPECT_TRUE(Eval(WithMounts({squash, denied, zero})).empty());
}

TEST(DiskRulesTest, InodeBoundaries) {
  MountFacts m = Mount("/data", 1000, 900);
  m.inodes_free = 101;  // 89.9% used
  EXPECT_TRUE(Eval(WithMounts({m})).empty());
  m.inodes_free = 100;
  EXPECT_EQ(Find(Eval(WithMounts({m})), "host.disk.inodes")->severity, Severity::kWarn);
  m.inodes_free = 0;
  auto f = Find(Eval(WithMounts({m})), "host.disk.inodes");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kCrit);
  EXPECT_EQ(f->subject, "/data");
  EXPECT_EQ(*EvidenceOf<int64_t>(*f, "inodes_free_count"), 0);
  m.inodes_total.reset();  // btrfs: no inode table
  m.inodes_free.reset();
  EXPECT_TRUE(Eval(WithMounts({m})).empty());
}

TEST(DiskRulesTest, UnresponsiveMount) {
  MountFacts nfs;
  nfs.device = "nas01:/export";
  nfs.mount_point = "/mnt/datasets";
  nfs.fs_type = "nfs4";
  nfs.timed_out = true;
  nfs.error = "statvfs did not answer in time";
  auto f = Eval(WithMounts({nfs, Mount("/", 100, 50)}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "host.disk.unresponsive");
  EXPECT_EQ(f[0].subject, "/mnt/datasets");
  EXPECT_EQ(f[0].severity, Severity::kWarn);
}

}  // namespace
}  // namespace gpudoctor
