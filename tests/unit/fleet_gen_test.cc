// Fleet judgement on generated fleets of 200 and 2,000 nodes (tests/fleet_gen.h) with every
// confounder planted: each detection and each card/slot verdict must reach precision and recall
// >= 0.95 against the generator's truth. The figures are printed for the record.
#include "fleet_gen.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "fleet/analysis.h"
#include "fleet/ledger.h"
#include "fleet/onsets.h"
#include "fleet/report_reader.h"

namespace gpudoctor::fleet {
namespace {

using testing::FleetGenOptions;
using testing::GeneratedFleet;
using testing::GenerateFleet;

struct Scored {
  int tp = 0, fp = 0, fn = 0;
  std::vector<std::string> false_pos, false_neg;
  double Precision() const { return tp + fp == 0 ? 1.0 : double(tp) / (tp + fp); }
  double Recall() const { return tp + fn == 0 ? 1.0 : double(tp) / (tp + fn); }
};

Scored Score(const std::set<std::string>& predicted, const std::set<std::string>& truth) {
  Scored s;
  for (const auto& p : predicted) {
    if (truth.count(p)) {
      ++s.tp;
    } else {
      ++s.fp;
      if (s.false_pos.size() < 5) s.false_pos.push_back(p);
    }
  }
  for (const auto& t : truth) {
    if (!predicted.count(t)) {
      ++s.fn;
      if (s.false_neg.size() < 5) s.false_neg.push_back(t);
    }
  }
  return s;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// One generated fleet, read through the report reader and analysed once per size.
struct Case {
  GeneratedFleet fleet;
  FleetData data;
  FleetAnalysis analysis;
  std::vector<Tenure> ledger;
  std::vector<Fault> faults;
  double generate_s = 0, read_s = 0, analyse_s = 0;
};

const Case& Get(int nodes) {
  static std::map<int, std::unique_ptr<Case>> cache;
  auto& slot = cache[nodes];
  if (slot) return *slot;
  slot = std::make_unique<Case>();
  Case& c = *slot;
  using Clock = std::chrono::steady_clock;
  auto secs = [](Clock::time_point a) {
    return std::chrono::duration<double>(Clock::now() - a).count();
  };
  auto t = Clock::now();
  FleetGenOptions opt;
  opt.nodes = nodes;
  opt.seed = 20260110;
  c.fleet = GenerateFleet(opt);
  c.generate_s = secs(t);
  t = Clock::now();
  for (const auto& r : c.fleet.reports) {
    Status s = AddReport(r.json, r.source, c.fleet.now_s, c.data);
    EXPECT_TRUE(s.ok()) << r.source << ": " << s.message();
  }
  DropTimeOutliers(c.data);
  c.read_s = secs(t);
  t = Clock::now();
  c.analysis = Analyze(c.data, FleetOptions{});
  c.ledger = BuildLedger(c.data);
  c.faults = HardwareFaults(c.data, FindOnsets(c.data));
  c.analyse_s = secs(t);
  std::printf("[fleet %d nodes] %zu reports: generate %.2f s, read %.2f s, analyse %.2f s\n", nodes,
              c.fleet.reports.size(), c.generate_s, c.read_s, c.analyse_s);
  return c;
}

std::string SlotOf(const FleetData& d, uint32_t card) {
  return d.cards[card].node + ":" + d.cards[card].pci_bus_id;
}

void ExpectGood(const char* what, int nodes, const Scored& s) {
  std::printf("[fleet %d nodes] %-22s precision %.3f recall %.3f (tp %d fp %d fn %d)\n", nodes,
              what, s.Precision(), s.Recall(), s.tp, s.fp, s.fn);
  EXPECT_GE(s.Precision(), 0.95) << what << " false positives: " << Join(s.false_pos);
  EXPECT_GE(s.Recall(), 0.95) << what << " missed: " << Join(s.false_neg);
  EXPECT_GT(s.tp, 0) << what << ": nothing planted or found";
}

class FleetGenTest : public ::testing::TestWithParam<int> {};

TEST_P(FleetGenTest, StragglersByKind) {
  const Case& c = Get(GetParam());
  std::map<std::string, std::set<std::string>> by_kind;
  std::set<std::string> victims;
  for (const auto& s : c.analysis.stragglers) {
    by_kind[s.kind].insert(SlotOf(c.data, s.card));
    if (s.kind == "victim") {
      ASSERT_TRUE(s.waits_on.has_value());
      victims.insert(SlotOf(c.data, s.card) + " -> " + SlotOf(c.data, *s.waits_on));
    }
    for (const auto& m : s.metrics) {
      EXPECT_TRUE(std::isfinite(m.gpu_median) && std::isfinite(m.peer_median)) << m.metric;
    }
  }
  std::set<std::string> truth_victims;
  for (const auto& [v, holder] : c.fleet.truth.victims) truth_victims.insert(v + " -> " + holder);
  ExpectGood("hardware stragglers", GetParam(), Score(by_kind["hardware"], c.fleet.truth.hardware));
  ExpectGood("power-capped / config", GetParam(), Score(by_kind["capped"], c.fleet.truth.capped));
  ExpectGood("collective victims", GetParam(), Score(victims, truth_victims));
  ExpectGood("workload stragglers", GetParam(), Score(by_kind["workload"], c.fleet.truth.workload));
  // Hardware stragglers name the victims they hold back.
  for (const auto& s : c.analysis.stragglers) {
    if (s.kind != "hardware") continue;
    int expected = 0;
    for (const auto& [v, holder] : c.fleet.truth.victims) {
      expected += holder == SlotOf(c.data, s.card);
    }
    EXPECT_EQ(s.holds_back, expected) << SlotOf(c.data, s.card);
  }
}

TEST_P(FleetGenTest, IdleGpusAndNodes) {
  const Case& c = Get(GetParam());
  std::set<std::string> idle;
  for (const auto& g : c.analysis.idle) idle.insert(SlotOf(c.data, g.card));
  ExpectGood("idle GPUs", GetParam(), Score(idle, c.fleet.truth.idle));
  std::set<std::string> nodes(c.analysis.idle_nodes.begin(), c.analysis.idle_nodes.end());
  ExpectGood("idle nodes", GetParam(), Score(nodes, c.fleet.truth.idle_nodes));
}

TEST_P(FleetGenTest, LemonsCountHardwareIncidents) {
  const Case& c = Get(GetParam());
  std::set<std::string> nodes, cards;
  for (const auto& l : c.analysis.lemons) {
    (l.kind == "node" ? nodes : cards).insert(l.name);
  }
  ExpectGood("lemon nodes", GetParam(), Score(nodes, c.fleet.truth.lemon_nodes));
  ExpectGood("lemon cards", GetParam(), Score(cards, c.fleet.truth.lemon_cards));
}

TEST_P(FleetGenTest, CardAndSlotVerdicts) {
  const Case& c = Get(GetParam());
  const auto& truth = c.fleet.truth;
  // Every card with a hardware fault, every card that moved, and the planted ones.
  std::set<std::string> serials;
  for (const auto& f : c.faults) {
    if (!f.serial.empty()) serials.insert(f.serial);
  }
  std::map<std::string, int> tenures;
  for (const auto& t : c.ledger) ++tenures[t.serial];
  for (const auto& [s, n] : tenures) {
    if (n >= 2) serials.insert(s);
  }
  for (const auto& [s, v] : truth.card_verdicts) serials.insert(s);
  serials.insert(truth.cloned_serials.begin(), truth.cloned_serials.end());
  std::map<std::string, std::set<std::string>> card_pred, card_truth, slot_pred, slot_truth;
  for (const auto& s : serials) card_pred[JudgeCard(s, c.ledger, c.faults).verdict].insert(s);
  for (const auto& [s, v] : truth.card_verdicts) card_truth[v].insert(s);
  std::set<std::string> slots;
  for (const auto& f : c.faults) slots.insert(f.node + ":" + f.pci_bus_id);
  for (const auto& [s, v] : truth.slot_verdicts) slots.insert(s);
  for (const auto& s : slots) slot_pred[JudgeSlot(s, c.ledger, c.faults).verdict].insert(s);
  for (const auto& [s, v] : truth.slot_verdicts) slot_truth[v].insert(s);
  ExpectGood("card verdict: card", GetParam(), Score(card_pred["card"], card_truth["card"]));
  ExpectGood("card verdict: slot", GetParam(), Score(card_pred["slot"], card_truth["slot"]));
  ExpectGood("slot verdict: card", GetParam(), Score(slot_pred["card"], slot_truth["card"]));
  ExpectGood("slot verdict: slot", GetParam(), Score(slot_pred["slot"], slot_truth["slot"]));
}

TEST_P(FleetGenTest, IdentityProblemsNameCopiedSerialsOnly) {
  const Case& c = Get(GetParam());
  std::set<std::string> named;
  for (const auto& p : c.analysis.problems) {
    ASSERT_EQ(p.source.rfind("serial ", 0), 0u) << p.source;
    named.insert(p.source.substr(7));
  }
  ExpectGood("serial in 2 slots", GetParam(), Score(named, c.fleet.truth.cloned_serials));
  // Placeholder serials are no serial: no card carries one.
  for (const auto& card : c.data.cards) {
    EXPECT_TRUE(card.serial != "0" && card.serial != "N/A") << card.node;
  }
}

TEST_P(FleetGenTest, BadInputIsListedAndDoesNotInflateGpuTime) {
  const Case& c = Get(GetParam());
  std::set<std::string> sources;
  for (const auto& p : c.data.problems) sources.insert(p.source);
  ExpectGood("input problems", GetParam(), Score(sources, c.fleet.truth.bad_sources));
  EXPECT_NEAR(c.analysis.stats.gpu_days, c.fleet.truth.gpu_days, 0.01 * c.fleet.truth.gpu_days);
  for (const auto& s : c.data.samples) {
    EXPECT_LE(s.sm_clock_mhz.value_or(0), 10000);
    EXPECT_LE(s.temp_c.value_or(0), 150);
    EXPECT_GE(s.power_w.value_or(0), 0);
  }
}

TEST_P(FleetGenTest, InterruptionsOnePerHardwareEvent) {
  const Case& c = Get(GetParam());
  const auto& truth = c.fleet.truth.interruptions;
  const FleetGenOptions opt;
  std::set<std::string> found, planted;
  std::map<std::string, std::set<std::string>> by_cat_found, by_cat_planted;
  for (const auto& x : c.analysis.interruptions.list) {
    std::string key = x.node + "@" + std::to_string((x.time_s - opt.t0_s) / opt.step_s);
    found.insert(key);
    by_cat_found[x.category].insert(key);
  }
  for (const auto& [key, cat] : truth) {
    planted.insert(key);
    by_cat_planted[cat].insert(key);
  }
  ExpectGood("interruptions", GetParam(), Score(found, planted));
  for (const char* cat : {"gpu", "gpu_memory", "nvlink_pcie"}) {
    ExpectGood((std::string("interruptions: ") + cat).c_str(), GetParam(),
               Score(by_cat_found[cat], by_cat_planted[cat]));
  }
  std::printf(
      "[fleet %d nodes] crit onsets %d, interruptions %d (%d on lemons, %d present at "
      "start); %.5f per GPU-day without lemons\n",
      GetParam(), c.analysis.stats.failures, c.analysis.interruptions.unexpected,
      c.analysis.interruptions.lemon_interruptions, c.analysis.interruptions.present_at_start,
      c.analysis.interruptions.per_gpu_day);
  // One interruption per event: the count is the planted count, not the onset count.
  EXPECT_EQ(c.analysis.interruptions.unexpected, static_cast<int>(truth.size()));
  EXPECT_GT(c.analysis.interruptions.lemon_interruptions, 0);
  EXPECT_LT(c.analysis.interruptions.lemon_interruptions, c.analysis.interruptions.unexpected);
}

INSTANTIATE_TEST_SUITE_P(Sizes, FleetGenTest, ::testing::Values(200, 2000));

TEST(FleetGenDeterminismTest, SameSeedSameFleet) {
  FleetGenOptions opt;
  opt.nodes = 150;
  opt.seed = 7;
  GeneratedFleet a = GenerateFleet(opt), b = GenerateFleet(opt);
  ASSERT_EQ(a.reports.size(), b.reports.size());
  for (size_t i = 0; i < a.reports.size(); ++i) ASSERT_EQ(a.reports[i].json, b.reports[i].json);
  opt.seed = 8;
  GeneratedFleet other = GenerateFleet(opt);
  EXPECT_NE(other.truth.hardware, a.truth.hardware);
}

}  // namespace
}  // namespace gpudoctor::fleet
