// Finding lifecycle as a pure function over sequences of ticks with fake times.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/catalogue.h"
#include "watch/finding_lifecycle.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;

Finding GpuFinding(const std::string& id, const std::string& serial,
                   Severity sev = Severity::kCrit) {
  Finding f;
  f.id = id;
  f.layer = Layer::kHardware;
  f.severity = sev;
  f.summary = id + " on " + serial;
  GpuRef g;
  g.index = 0;
  g.serial = serial;
  g.pci_bus_id = "0000:3b:00.0";
  f.gpu = g;
  return f;
}

// Drives StepLifecycle tick by tick and keeps the transitions.
class Driver {
 public:
  explicit Driver(Thresholds th = Thresholds()) : th_(std::move(th)) {}
  std::vector<FindingTransition> Tick(int64_t t_s, std::vector<Finding> fired,
                                      const std::string& boot = "boot-a",
                                      int64_t driver_loaded_s = 0) {
    LifecycleInput in;
    in.driver_loaded_ms = driver_loaded_s * 1000;
    in.tracked = tracked_;
    in.fired = std::move(fired);
    in.now_ms = t_s * 1000;
    in.boot_id = boot;
    in.previous_boot_id = prev_boot_;
    auto out = StepLifecycle(in, th_);
    tracked_ = out.tracked;
    prev_boot_ = boot;
    return out.transitions;
  }
  const TrackedFinding* Find(const std::string& id) const {
    const TrackedFinding* last = nullptr;
    for (const auto& t : tracked_) {
      if (t.last.id == id) last = &t;
    }
    return last;
  }
  std::vector<TrackedFinding>& tracked() { return tracked_; }

 private:
  Thresholds th_;
  std::vector<TrackedFinding> tracked_;
  std::string prev_boot_;
};

TEST(LifecycleTest, KeyUsesSerialThenBusIdThenIndexAndSubject) {
  Finding f = GpuFinding("gpu.xid", "SN1");
  f.subject = "79";
  EXPECT_EQ(FindingKey(f), "gpu.xid|serial=SN1|79");
  f.gpu->serial.clear();
  EXPECT_EQ(FindingKey(f), "gpu.xid|bus=0000:3b:00.0|79");
  f.gpu->pci_bus_id.clear();
  EXPECT_EQ(FindingKey(f), "gpu.xid|index=0|79");
  Finding host;
  host.id = "host.disk.full";
  host.subject = "/";
  EXPECT_EQ(FindingKey(host), "host.disk.full||/");
}

TEST(LifecycleTest, CatalogueDefaults) {
  EXPECT_EQ(WatchDefaultsFor(*FindCatalogueEntry("gpu.ecc.dbe")).for_s, 0);
  EXPECT_EQ(WatchDefaultsFor(*FindCatalogueEntry("gpu.ecc.dbe")).resolve_after_s, 300);
  EXPECT_EQ(WatchDefaultsFor(*FindCatalogueEntry("gpu.thermal")).for_s, 60);
  EXPECT_EQ(WatchDefaultsFor(*FindCatalogueEntry("gpu.thermal")).resolve_after_s, 60);
  EXPECT_EQ(WatchDefaultsFor(*FindCatalogueEntry("host.disk.full")).for_s, 60);
  EXPECT_TRUE(WatchDefaultsFor(*FindCatalogueEntry("gpu.xid")).reboot_fixable);
  EXPECT_TRUE(WatchDefaultsFor(*FindCatalogueEntry("driver.mismatch")).reboot_fixable);
  EXPECT_FALSE(WatchDefaultsFor(*FindCatalogueEntry("host.disk.full")).reboot_fixable);
  Thresholds th;
  EXPECT_EQ(th.Get("gpu.thermal", "for_s"), 60);
}

TEST(LifecycleTest, CritHardwareOpensAtOnce) {
  Driver d;
  auto tr = d.Tick(1000, {GpuFinding("gpu.ecc.dbe", "SN1")});
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].kind, TransitionKind::kOpened);
  EXPECT_EQ(tr[0].finding.state, FindingState::kOpen);
  EXPECT_EQ(tr[0].finding.opened_ms, 1000000);
}

TEST(LifecycleTest, ThermalPendingUntilForS) {
  Driver d;
  Finding hot = GpuFinding("gpu.thermal", "SN1", Severity::kWarn);
  for (int64_t t = 0; t < 60; t += 10) {
    EXPECT_TRUE(d.Tick(t, {hot}).empty()) << t;
    EXPECT_EQ(d.Find("gpu.thermal")->state, FindingState::kPending);
  }
  auto tr = d.Tick(60, {hot});
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].kind, TransitionKind::kOpened);
  EXPECT_EQ(tr[0].finding.first_seen_ms, 0);
  EXPECT_EQ(tr[0].finding.opened_ms, 60000);
}

TEST(LifecycleTest, PendingThatClearsIsForgottenWithoutTransition) {
  Driver d;
  Finding hot = GpuFinding("gpu.thermal", "SN1", Severity::kWarn);
  d.Tick(0, {hot});
  d.Tick(30, {hot});
  EXPECT_TRUE(d.Tick(40, {}).empty());
  EXPECT_EQ(d.Find("gpu.thermal"), nullptr);
  // It starts over: opens 60 s after it fires again, not earlier.
  d.Tick(50, {hot});
  EXPECT_TRUE(d.Tick(100, {hot}).empty());
  EXPECT_EQ(d.Tick(110, {hot}).size(), 1u);
}

TEST(LifecycleTest, ResolvesOnlyAfterResolveAfterSClear) {
  Driver d;
  Finding dbe = GpuFinding("gpu.ecc.dbe", "SN1");
  d.Tick(0, {dbe});
  d.Tick(10, {dbe});
  // Flapping inside the hysteresis keeps it open without new transitions.
  EXPECT_TRUE(d.Tick(100, {}).empty());
  EXPECT_TRUE(d.Tick(200, {dbe}).empty());
  EXPECT_TRUE(d.Tick(499, {}).empty());
  auto tr = d.Tick(500, {});
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].kind, TransitionKind::kResolved);
  EXPECT_EQ(tr[0].finding.resolution, "cleared");
  EXPECT_EQ(tr[0].finding.resolved_ms, 500000);
  // Kept as resolved for an hour, then dropped.
  EXPECT_EQ(d.Find("gpu.ecc.dbe")->state, FindingState::kResolved);
  d.Tick(500 + 3600, {});
  EXPECT_NE(d.Find("gpu.ecc.dbe"), nullptr);
  d.Tick(500 + 3601, {});
  EXPECT_EQ(d.Find("gpu.ecc.dbe"), nullptr);
}

TEST(LifecycleTest, ConfiguredTimesOverrideCatalogue) {
  ThresholdOverrides o;
  o.Set("gpu.thermal", "for_s", 5);
  o.Set("gpu.thermal", "resolve_after_s", 20);
  Driver d{Thresholds(o)};
  Finding hot = GpuFinding("gpu.thermal", "SN1", Severity::kWarn);
  d.Tick(0, {hot});
  EXPECT_EQ(d.Tick(5, {hot}).size(), 1u);
  EXPECT_TRUE(d.Tick(24, {}).empty());
  EXPECT_EQ(d.Tick(25, {}).size(), 1u);
}

TEST(LifecycleTest, SeverityChangesWhileOpenWithoutReopening) {
  Driver d;
  d.Tick(0, {GpuFinding("gpu.ecc.dbe", "SN1", Severity::kWarn)});
  EXPECT_TRUE(d.Tick(1, {GpuFinding("gpu.ecc.dbe", "SN1", Severity::kCrit)}).empty());
  EXPECT_EQ(d.Find("gpu.ecc.dbe")->last.severity, Severity::kCrit);
}

TEST(LifecycleTest, RebootClearsRebootFixableFindingNotFiringAfterReboot) {
  Driver d;
  Finding xid = GpuFinding("gpu.xid", "SN1");
  d.Tick(0, {xid}, "boot-a");
  auto tr = d.Tick(10, {}, "boot-b");
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].kind, TransitionKind::kResolved);
  EXPECT_EQ(tr[0].finding.resolution, "cleared_by_reboot");
  EXPECT_EQ(tr[0].finding.reboots_during, 1);
}

TEST(LifecycleTest, RebootDoesNotClearOtherFindings) {
  Driver d;
  Finding disk;
  disk.id = "host.disk.full";
  disk.subject = "/";
  d.Tick(0, {disk});
  d.Tick(60, {disk});
  ASSERT_EQ(d.Find("host.disk.full")->state, FindingState::kOpen);
  EXPECT_TRUE(d.Tick(70, {}, "boot-b").empty());
  EXPECT_EQ(d.Find("host.disk.full")->state, FindingState::kOpen);
}

TEST(LifecycleTest, FindingSurvivingRebootStaysOpenAndCountsIt) {
  Driver d;
  Finding xid = GpuFinding("gpu.xid", "SN1");
  d.Tick(0, {xid}, "boot-a");
  EXPECT_TRUE(d.Tick(10, {xid}, "boot-b").empty());
  EXPECT_EQ(d.Find("gpu.xid")->state, FindingState::kOpen);
  EXPECT_EQ(d.Find("gpu.xid")->reboots_during, 1);
}

TEST(LifecycleTest, ReturningAfterTwoRebootsEscalates) {
  Driver d;
  Finding xid = GpuFinding("gpu.xid", "SN1");
  xid.next_steps = {"original step"};
  d.Tick(0, {xid}, "boot-a");
  d.Tick(10, {}, "boot-b");  // cleared by reboot 1
  auto back1 = d.Tick(20, {xid}, "boot-b");
  ASSERT_EQ(back1.size(), 1u);
  EXPECT_EQ(back1[0].kind, TransitionKind::kOpened);
  EXPECT_EQ(back1[0].finding.episodes_after_reboot, 1);
  EXPECT_FALSE(back1[0].finding.escalated);
  d.Tick(30, {}, "boot-c");  // cleared by reboot 2
  auto back2 = d.Tick(40, {xid}, "boot-c");
  ASSERT_EQ(back2.size(), 2u);
  EXPECT_EQ(back2[0].kind, TransitionKind::kOpened);
  EXPECT_EQ(back2[1].kind, TransitionKind::kEscalated);
  const TrackedFinding& t = back2[1].finding;
  EXPECT_TRUE(t.escalated);
  EXPECT_EQ(t.episodes_after_reboot, 2);
  ASSERT_GE(t.last.next_steps.size(), 4u);
  std::string steps;
  for (const auto& s : t.last.next_steps) steps += s + "\n";
  EXPECT_THAT(steps, HasSubstr("Reseat"));
  EXPECT_THAT(steps, HasSubstr("Swap test"));
  EXPECT_THAT(steps, HasSubstr("RMA"));
  EXPECT_THAT(steps, HasSubstr("original step"));
  // The escalation steps stay on later ticks and are not repeated.
  EXPECT_TRUE(d.Tick(41, {xid}, "boot-c").empty());
  EXPECT_EQ(d.Find("gpu.xid")->last.next_steps.size(), t.last.next_steps.size());
}

TEST(LifecycleTest, OtherCardDoesNotInheritRebootHistory) {
  Driver d;
  d.Tick(0, {GpuFinding("gpu.xid", "SN1")}, "boot-a");
  d.Tick(10, {}, "boot-b");
  d.Tick(20, {GpuFinding("gpu.xid", "SN1")}, "boot-b");
  d.Tick(30, {}, "boot-c");
  // The card was swapped: a different serial in the slot is a different key.
  auto tr = d.Tick(40, {GpuFinding("gpu.xid", "SN2")}, "boot-c");
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].finding.episodes_after_reboot, 0);
  EXPECT_FALSE(tr[0].finding.escalated);
}

TEST(LifecycleTest, AcksAndSilencesAreCarried) {
  Driver d;
  Finding dbe = GpuFinding("gpu.ecc.dbe", "SN1");
  d.Tick(0, {dbe});
  d.tracked()[0].acked = true;
  d.tracked()[0].acked_ms = 5000;
  d.tracked()[0].ack_note = "RMA filed";
  d.tracked()[0].silenced_until_ms = 7200000;
  d.Tick(10, {dbe});
  d.Tick(20, {});
  const TrackedFinding* t = d.Find("gpu.ecc.dbe");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->acked);
  EXPECT_EQ(t->acked_ms, 5000);
  EXPECT_EQ(t->ack_note, "RMA filed");
  EXPECT_EQ(t->silenced_until_ms, 7200000);
}

TEST(LifecycleTest, DuplicateFindingsInOneTickKeepWorstSeverity) {
  Driver d;
  auto tr = d.Tick(0, {GpuFinding("gpu.ecc.dbe", "SN1", Severity::kWarn),
                       GpuFinding("gpu.ecc.dbe", "SN1", Severity::kCrit)});
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].finding.last.severity, Severity::kCrit);
  EXPECT_EQ(d.tracked().size(), 1u);
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// An Xid that needs a reset is not repaired by a quiet log: it stays open until a reboot or an
// acknowledgement; an application Xid (restart_app) resolves after the usual quiet time.
TEST(LifecycleLatchTest, ResetNeedingXidStaysOpenUntilRebootOrAck) {
  Finding dbe = GpuFinding("gpu.xid", "1654921000123");
  dbe.action = Action::kDrainReset;
  Finding app = GpuFinding("gpu.xid", "1654921000999", Severity::kWarn);
  app.action = Action::kRestartApp;
  app.gpu->pci_bus_id = "0000:3c:00.0";

  Driver d;
  d.Tick(0, {dbe, app});
  ASSERT_EQ(d.tracked().size(), 2u);
  d.Tick(10, {});
  d.Tick(3600, {});  // an hour of quiet log
  int open = 0, resolved = 0;
  for (const auto& t : d.tracked()) {
    if (t.last.gpu->serial == "1654921000123") {
      EXPECT_EQ(t.state, FindingState::kOpen) << "a quiet log is not a reset GPU";
      ++open;
    } else {
      EXPECT_EQ(t.state, FindingState::kResolved);
      ++resolved;
    }
  }
  EXPECT_EQ(open, 1);
  EXPECT_EQ(resolved, 1);

  // Acknowledged: resolves once quiet for resolve_after_s.
  for (auto& t : d.tracked()) {
    if (t.last.gpu->serial == "1654921000123") t.acked = true;
  }
  auto tr = d.Tick(3700, {});
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].kind, TransitionKind::kResolved);

  // A reboot clears a new one (reboot-fixable), acked or not.
  Driver r;
  r.Tick(0, {dbe}, "boot-a");
  r.Tick(4000, {}, "boot-a");
  ASSERT_EQ(r.Find("gpu.xid")->state, FindingState::kOpen);
  r.Tick(4100, {}, "boot-b");
  EXPECT_EQ(r.Find("gpu.xid")->state, FindingState::kResolved);
  EXPECT_EQ(r.Find("gpu.xid")->resolution, "cleared_by_reboot");
}

// Issue 17 §4: a reload of the NVIDIA module after the Xid was last seen resets the GPU: the
// latched episode resolves ("cleared_by_driver_reload"); an AER (the platform's) stays.
TEST(LifecycleLatchTest, DriverReloadAfterTheXidResolvesIt) {
  Finding xid = GpuFinding("gpu.xid", "1654921000123");
  xid.action = Action::kDrainReset;
  Finding aer = GpuFinding("pcie.aer", "1654921000123");
  aer.action = Action::kInspectHardware;
  Driver d;
  d.Tick(0, {xid, aer}, "boot-a", /*driver_loaded_s=*/-1000);  // the boot's own load
  d.Tick(60, {}, "boot-a", -1000);
  ASSERT_EQ(d.Find("gpu.xid")->state, FindingState::kOpen);
  auto tr = d.Tick(600, {}, "boot-a", /*driver_loaded_s=*/500);  // reloaded at 500 s
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].finding.last.id, "gpu.xid");
  EXPECT_EQ(tr[0].kind, TransitionKind::kResolved);
  EXPECT_EQ(d.Find("gpu.xid")->resolution, "cleared_by_driver_reload");
  EXPECT_EQ(d.Find("pcie.aer")->state, FindingState::kOpen);

  // An Xid seen after the reload is not cleared by it.
  Driver e;
  e.Tick(0, {xid}, "boot-a", 0);
  e.Tick(700, {xid}, "boot-a", 500);  // fires again after the reload
  e.Tick(800, {}, "boot-a", 500);
  EXPECT_EQ(e.Find("gpu.xid")->state, FindingState::kOpen);
}

}  // namespace
}  // namespace gpudoctor
