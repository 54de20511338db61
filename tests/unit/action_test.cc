// Findings' actions: the catalogue gives every id one, MakeFinding applies it (and keeps warn-level
// findings in service), and everything that acts (Slurm, NPD, fleet) reads the action only.
#include <gtest/gtest.h>

#include <set>

#include "rules/catalogue.h"
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
  // No resource or network finding takes a node out, at any severity.
  for (const CatalogueEntry* e : Catalogue()) {
    if (e->layer == Layer::kResources || e->layer == Layer::kNetwork) {
      if (std::string_view(e->id).starts_with("net.ib") || e->id == "net.link") continue;
      EXPECT_FALSE(NeedsNodeOutOfService(e->action)) << e->id;
    }
  }
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
