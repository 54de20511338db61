// The finding vocabulary: names round-trip, the action order that everything acting on a node
// relies on, and the predicates that drain a node or count against a card.
#include "findings/finding.h"

#include <gtest/gtest.h>

#include <string>

namespace gpudoctor {
namespace {

constexpr Action kAllActions[] = {
    Action::kNone,           Action::kWatch,    Action::kFixConfig, Action::kContactProvider,
    Action::kRestartApp,     Action::kResetGpu, Action::kReboot,    Action::kDrainReset,
    Action::kInspectHardware};

TEST(FindingVocabularyTest, NamesRoundTrip) {
  for (Action a : kAllActions) {
    ASSERT_TRUE(ParseAction(ActionName(a))) << ActionName(a);
    EXPECT_EQ(*ParseAction(ActionName(a)), a);
    EXPECT_FALSE(std::string(ActionPhrase(a)).empty()) << ActionName(a);
  }
  for (Severity s : {Severity::kInfo, Severity::kWarn, Severity::kCrit}) {
    EXPECT_EQ(ParseSeverity(SeverityName(s)), s);
  }
  for (Layer l : {Layer::kNetwork, Layer::kHardware, Layer::kSoftware, Layer::kResources}) {
    EXPECT_EQ(ParseLayer(LayerName(l)), l);
  }
  EXPECT_FALSE(ParseAction("drain"));
  EXPECT_FALSE(ParseSeverity("critical"));  // the alert word is not the finding's word
  EXPECT_STREQ(AlertSeverityName(Severity::kCrit), "critical");
}

TEST(FindingVocabularyTest, WhatTakesANodeOutAndWhatCountsAgainstACard) {
  int out_of_service = 0;
  for (Action a : kAllActions) {
    if (NeedsNodeOutOfService(a)) ++out_of_service;
    // Evidence against the hardware always needs the node out; the reverse is not true
    // (a reboot is not the card's fault).
    if (IsHardwareAction(a)) {
      EXPECT_TRUE(NeedsNodeOutOfService(a)) << ActionName(a);
    }
  }
  EXPECT_EQ(out_of_service, 4);  // reset_gpu, reboot, drain_reset, inspect_hardware
  EXPECT_FALSE(IsHardwareAction(Action::kReboot));
  EXPECT_FALSE(IsHardwareAction(Action::kRestartApp));
  EXPECT_TRUE(IsHardwareAction(Action::kInspectHardware));

  Finding f;
  f.action = Action::kDrainReset;
  f.severity = Severity::kInfo;
  EXPECT_FALSE(TakesNodeOutOfService(f)) << "info never drains";
  f.severity = Severity::kWarn;
  EXPECT_TRUE(TakesNodeOutOfService(f));
  f.action = Action::kContactProvider;
  f.severity = Severity::kCrit;
  EXPECT_FALSE(TakesNodeOutOfService(f)) << "a network path is the provider's, not a drain";
}

TEST(FindingVocabularyTest, WorstOfAList) {
  EXPECT_EQ(WorstAction({}), Action::kNone);
  EXPECT_FALSE(WorstSeverity({}).has_value());
  Finding a, b, c;
  a.action = Action::kWatch;
  a.severity = Severity::kCrit;
  b.action = Action::kReboot;
  b.severity = Severity::kWarn;
  c.action = Action::kFixConfig;
  c.severity = Severity::kInfo;
  EXPECT_EQ(WorstAction({a, b, c}), Action::kReboot);
  EXPECT_EQ(WorstSeverity({a, b, c}), Severity::kCrit);
  a.Add("used_bytes", uint64_t{5}).Add("busy_pct", 99.5).AddBool("hung", true);
  ASSERT_EQ(a.evidence.size(), 3u);
  EXPECT_EQ(a.evidence[0].name, "used_bytes");
}

}  // namespace
}  // namespace gpudoctor
