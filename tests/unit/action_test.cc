// Findings' actions: the catalogue gives every id one, MakeFinding applies it (and keeps warn-level
// findings in service), and everything that acts (Slurm, NPD, fleet) reads the action only.
#include <gtest/gtest.h>

#include <set>

#include "config/config.h"
#include "core/settings.h"
#include "rules/catalogue.h"
#include "rules/engine.h"
#include "rules/make_finding.h"
#include "sched/npd.h"
#include "sched/slurm.h"

namespace gpudoctor {
namespace {

TEST(ActionTest, NamesRoundTripAndRankByDisruption) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(Action::kInspectHardware); ++i) {
    Action a = static_cast<Action>(i);
    std::string name = ActionName(a);
    EXPECT_NE(name, "unknown");
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(ParseAction(name), a);
    EXPECT_STRNE(ActionPhrase(a), "unknown");
  }
  EXPECT_FALSE(ParseAction("drain"));
  EXPECT_FALSE(ParseAction(""));
  std::vector<Finding> fs(2);
  fs[0].action = Action::kRestartApp;
  fs[1].action = Action::kDrainReset;
  EXPECT_EQ(WorstAction(fs), Action::kDrainReset);
  EXPECT_EQ(WorstAction({}), Action::kNone);
}

TEST(ActionTest, OnlyNodeOutActionsTakeANodeOut) {
  for (Action a :
       {Action::kResetGpu, Action::kReboot, Action::kDrainReset, Action::kInspectHardware}) {
    EXPECT_TRUE(NeedsNodeOutOfService(a)) << ActionName(a);
  }
  for (Action a : {Action::kNone, Action::kWatch, Action::kFixConfig, Action::kContactProvider,
                   Action::kRestartApp}) {
    EXPECT_FALSE(NeedsNodeOutOfService(a)) << ActionName(a);
  }
  Finding info;
  info.action = Action::kReboot;  // e.g. a pending kernel update: reboot when convenient
  info.severity = Severity::kInfo;
  EXPECT_FALSE(TakesNodeOutOfService(info));
  info.severity = Severity::kWarn;
  EXPECT_TRUE(TakesNodeOutOfService(info));
}

// What an operator on call expects of the ids that cost money when wrong.
TEST(ActionTest, CatalogueActionsOfTheIdsThatAct) {
  struct Case {
    const char* id;
    Action action;
  } cases[] = {
      {"gpu.ecc.dbe", Action::kDrainReset},
      {"gpu.lost", Action::kDrainReset},
      {"gpu.remap.failed", Action::kInspectHardware},
      {"driver.mismatch", Action::kReboot},
      {"host.cpu.saturated", Action::kWatch},
      {"host.disk.full", Action::kFixConfig},
      {"host.memory.low", Action::kWatch},
      {"gpu.util.low", Action::kWatch},
      {"net.loss", Action::kContactProvider},
      {"net.nic.saturated", Action::kContactProvider},
      {"driver.persistence_off", Action::kFixConfig},
      {"gpu.xid", Action::kRestartApp},
  };
  for (const auto& c : cases) {
    const CatalogueEntry* e = FindCatalogueEntry(c.id);
    ASSERT_NE(e, nullptr) << c.id;
    EXPECT_EQ(e->action, c.action) << c.id << " is " << ActionName(e->action);
  }
  // No resource or network finding takes a node out, at any severity, except the NHC-style node
  // checks a site opts into ([node] required_mounts, [network] ib_min_rate_gbps; off by default):
  // a missing /scratch or a link trained at half rate is what such a site drains for.
  const std::set<std::string_view> opt_in = {"host.mount.missing", "net.ib.rate"};
  for (const CatalogueEntry* e : Catalogue()) {
    if ((e->layer == Layer::kResources || e->layer == Layer::kNetwork) && !opt_in.count(e->id)) {
      EXPECT_FALSE(NeedsNodeOutOfService(e->action)) << e->id;
    }
  }
  EXPECT_EQ(FindCatalogueEntry("host.mount.missing")->action, Action::kReboot);
  EXPECT_EQ(FindCatalogueEntry("net.ib.rate")->action, Action::kInspectHardware);
}

TEST(ActionTest, MakeFindingKeepsWarnLevelFindingsInService) {
  EXPECT_EQ(MakeFinding("gpu.thermal", Severity::kCrit, "hot").action, Action::kInspectHardware);
  EXPECT_EQ(MakeFinding("gpu.thermal", Severity::kWarn, "warm").action, Action::kWatch);
  EXPECT_EQ(MakeFinding("gpu.ecc.dbe", Severity::kCrit, "dbe").action, Action::kDrainReset);
  // At its own worst severity (warn) a pending remap still needs its reset.
  EXPECT_EQ(MakeFinding("gpu.remap.pending", Severity::kWarn, "").action, Action::kResetGpu);
}

TEST(ActionTest, ActionOrDefaultReadsBackOlderInput) {
  EXPECT_EQ(ActionOrDefault("reset_gpu", "gpu.xid"), Action::kResetGpu);
  EXPECT_EQ(ActionOrDefault("", "gpu.ecc.dbe"), Action::kDrainReset);  // older report
  EXPECT_EQ(ActionOrDefault("bogus", "host.cpu.saturated"), Action::kWatch);
  EXPECT_EQ(ActionOrDefault("", "future.finding"), Action::kWatch);
}

TEST(ActionTest, SlurmAndNpdActOnTheActionNotTheSeverity) {
  std::vector<Finding> busy = {MakeFinding("host.cpu.saturated", Severity::kCrit, "busy"),
                               MakeFinding("host.disk.full", Severity::kCrit, "full"),
                               MakeFinding("net.loss", Severity::kCrit, "lossy"),
                               MakeFinding("host.memory.low", Severity::kCrit, "low")};
  SlurmOptions o;
  o.node = "n1";
  o.scontrol = "/nonexistent/scontrol";  // a drain would try to run it and fail with "error"
  SlurmOutcome r = RunSlurmMode(busy, "", o);
  EXPECT_EQ(r.exit_code, 0) << r.message;
  EXPECT_EQ(r.action, "none");
  EXPECT_EQ(SlurmReason(busy), "gpudoctor:");
  for (std::optional<Layer> layer :
       {std::optional<Layer>(), std::optional<Layer>(Layer::kResources),
        std::optional<Layer>(Layer::kNetwork)}) {
    NpdOutcome n = NpdResult(busy, layer, "");
    EXPECT_EQ(n.exit_code, 0) << n.message;
    EXPECT_EQ(n.message.rfind("ok", 0), 0u) << n.message;
  }
  Finding dbe = MakeFinding("gpu.ecc.dbe", Severity::kCrit, "GPU 1: 2 DBE");
  dbe.gpu = GpuRef{1, "GPU-1", "0000:2a:00.0", "", "H100"};
  busy.push_back(dbe);
  EXPECT_EQ(SlurmReason(busy), "gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0");
  SlurmOutcome d = RunSlurmMode(busy, "", o);
  EXPECT_EQ(d.action, "error");  // it tried to drain (scontrol missing)
  NpdOutcome n = NpdResult(busy, Layer::kHardware, "");
  EXPECT_EQ(n.exit_code, 1);
  EXPECT_EQ(n.message.rfind("gpu.ecc.dbe GPU1 [drain_reset]", 0), 0u) << n.message;
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

Snapshot IbPortInit() {
  Snapshot snap;
  IbPortFacts p;
  p.device = "mlx5_0";
  p.port = 1;
  p.state = "INIT";
  p.phys_state = "LinkUp";
  snap.network.ib_ports = std::vector<IbPortFacts>{p};
  return snap;
}

// A dead fabric port is the network's business by default (never a drain), and a site whose
// multi-node jobs cannot run without it says so in the config: `[finding."ID"] action`.
TEST(ActionTest, SiteConfigOverridesTheCataloguesAction) {
  Settings plain;
  auto by_default = EvaluateRules(IbPortInit(), plain.thresholds);
  ASSERT_EQ(by_default.size(), 1u);
  EXPECT_EQ(by_default[0].id, "net.ib.port");
  EXPECT_EQ(by_default[0].action, Action::kContactProvider);
  SlurmOptions o;
  o.node = "n1";
  o.scontrol = "/nonexistent/scontrol";
  EXPECT_EQ(RunSlurmMode(by_default, "", o).action, "none");

  Settings site;
  auto load =
      ApplyConfigText("[finding.\"net.ib.port\"]\naction = \"drain_reset\"\n", "site.toml", site);
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  auto overridden = EvaluateRules(IbPortInit(), site.thresholds);
  ASSERT_EQ(overridden.size(), 1u);
  EXPECT_EQ(overridden[0].action, Action::kDrainReset);
  EXPECT_EQ(RunSlurmMode(overridden, "", o).action, "error");  // it tried to drain

  // A warn-level finding that the catalogue keeps in service stays so: a spare unplugged port.
  Snapshot unplugged = IbPortInit();
  (*unplugged.network.ib_ports)[0].state = "DOWN";
  (*unplugged.network.ib_ports)[0].phys_state = "Disabled";
  auto warn = EvaluateRules(unplugged, site.thresholds);
  ASSERT_EQ(warn.size(), 1u);
  EXPECT_EQ(warn[0].severity, Severity::kWarn);
  EXPECT_FALSE(NeedsNodeOutOfService(warn[0].action));

  Settings bad;
  auto refused =
      ApplyConfigText("[finding.\"net.ib.port\"]\naction = \"drain\"\n", "site.toml", bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("site.toml:2"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("drain_reset"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor
