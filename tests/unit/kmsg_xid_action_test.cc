// The Xid action table against NVIDIA's Xid Catalog buckets, the conditional cases decoded from
// the line (94/95 RST tails, 154 recovery action, NVLink5 144-150), and what the gpu.xid finding
// does with them (action, evidence, a severity that agrees with the action).
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <string_view>

#include "kmsg/log_scanner.h"
#include "rules/engine.h"
#include "rules/thresholds.h"
#include "rules/xid_action.h"
#include "rules/xid_table.h"

namespace gpudoctor {
namespace {

KernelEvent Xid(int code) {
  KernelEvent e;
  e.kind = KernelEventKind::kXid;
  e.xid = code;
  e.subject = "0000:3b:00.0";
  e.count = 1;
  return e;
}

TEST(KmsgXidActionTest, CatalogBucketsPerCode) {
  // RESTART_APP (and the application faults the device plugin never marks unhealthy).
  for (int code : {8, 11, 13, 31, 32, 45, 68, 69, 109}) {
    EXPECT_EQ(XidDefaultAction(code), Action::kRestartApp) << code;
    EXPECT_FALSE(NeedsNodeOutOfService(XidDefaultAction(code))) << code;
  }
  EXPECT_EQ(XidDefaultAction(43), Action::kNone);  // IGNORE: the channel was already reset
  EXPECT_EQ(LookupXid(13).bucket, "RESTART_APP");
  // RESET_GPU
  for (int code : {46, 62, 64, 110, 119, 120, 136, 140, 143, 155, 158}) {
    EXPECT_EQ(XidDefaultAction(code), Action::kResetGpu) << code;
  }
  EXPECT_EQ(LookupXid(119).bucket, "RESET_GPU");
  // Memory corruption and a GPU gone from the bus: node out, reset or reboot.
  for (int code : {48, 79, 95, 167, 171, 172}) {
    EXPECT_EQ(XidDefaultAction(code), Action::kDrainReset) << code;
  }
  EXPECT_EQ(LookupXid(79).bucket, "RESTART_BM");
  EXPECT_EQ(XidDefaultAction(151), Action::kReboot);          // RESTART_VM
  EXPECT_EQ(XidDefaultAction(54), Action::kInspectHardware);  // CHECK_MECHANICALS
  EXPECT_EQ(XidDefaultAction(78), Action::kFixConfig);        // UPDATE_SWFW
  for (int code : {63, 92, 121}) EXPECT_EQ(XidDefaultAction(code), Action::kWatch) << code;
  EXPECT_EQ(XidDefaultAction(999), Action::kWatch);  // unknown: look it up, never dropped
  EXPECT_EQ(LookupXid(999).bucket, "");
}

// The advice text printed as a finding's next step must not contradict the action the finding
// carries (an operator reads both: Xid 64 said "reset_gpu" and "drain, then reboot"). Each
// action's own step appears in its text, and an action that keeps the node in service never
// starts its advice with a drain.
TEST(KmsgXidActionTest, AdviceTextAgreesWithTheAction) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  for (int code = 1; code <= 200; ++code) {
    XidInfo info = LookupXid(code);
    if (!info.known) continue;
    const std::string text = lower(info.action);
    auto has = [&](std::string_view word) { return text.find(word) != std::string::npos; };
    switch (info.resolution) {
      case Action::kRestartApp:
        EXPECT_TRUE(has("restart")) << code << ": " << info.action;
        break;
      case Action::kResetGpu:
        EXPECT_TRUE(has("reset")) << code << ": " << info.action;
        break;
      case Action::kReboot:
        EXPECT_TRUE(has("reboot") || has("restart the vm")) << code << ": " << info.action;
        break;
      case Action::kDrainReset:
        EXPECT_TRUE(has("drain")) << code << ": " << info.action;
        break;
      case Action::kInspectHardware:
        EXPECT_TRUE(has("drain") || has("inspect") || has("reseat") || has("check"))
            << code << ": " << info.action;
        break;
      default:
        break;
    }
    if (!NeedsNodeOutOfService(info.resolution)) {
      EXPECT_NE(text.rfind("drain", 0), 0u) << code << ": " << info.action;
    }
  }
}

TEST(KmsgXidActionTest, Xid94And95Tails) {
  KernelEvent e = Xid(94);
  EXPECT_EQ(DecideXidAction(e).action, Action::kRestartApp);  // RST: No, D-RST: No
  e.reset_required = true;
  EXPECT_EQ(DecideXidAction(e).action, Action::kResetGpu);
  e.drain_reset_required = true;
  EXPECT_EQ(DecideXidAction(e).action, Action::kDrainReset);
  EXPECT_NE(DecideXidAction(e).reason.find("D-RST: Yes"), std::string::npos);

  KernelEvent u = Xid(95);
  EXPECT_EQ(DecideXidAction(u).action, Action::kDrainReset);  // no MIG: the whole GPU
  u.ids = {5};                                                // GPU-I:05
  EXPECT_EQ(DecideXidAction(u).action, Action::kResetGpu);
  u.reset_required = true;
  EXPECT_EQ(DecideXidAction(u).action, Action::kResetGpu);
  u.ids.clear();
  EXPECT_EQ(DecideXidAction(u).action, Action::kDrainReset);  // RST: Yes without MIG
  u.drain_reset_required = true;
  u.ids = {5};
  EXPECT_EQ(DecideXidAction(u).action, Action::kDrainReset);
}

TEST(KmsgXidActionTest, Xid154RecoveryActionText) {
  EXPECT_EQ(RecoveryActionFromText("None"), Action::kNone);
  EXPECT_EQ(RecoveryActionFromText("GPU Reset Required"), Action::kResetGpu);
  EXPECT_EQ(RecoveryActionFromText("PF FLR"), Action::kResetGpu);
  EXPECT_EQ(RecoveryActionFromText("Node Reboot Required"), Action::kReboot);
  EXPECT_EQ(RecoveryActionFromText("OS Reboot"), Action::kReboot);
  EXPECT_EQ(RecoveryActionFromText("Drain and Reset"), Action::kDrainReset);
  EXPECT_EQ(RecoveryActionFromText("Drain P2P"), Action::kDrainReset);
  EXPECT_FALSE(RecoveryActionFromText("Something New"));

  KernelEvent e = Xid(154);
  EXPECT_EQ(DecideXidAction(e).action, Action::kWatch);  // no text: read nvidia-smi -q
  e.recovery_actions = {"GPU Reset Required", "Node Reboot Required"};
  XidDecision d = DecideXidAction(e);
  EXPECT_EQ(d.action, Action::kReboot);  // the most disruptive one seen
  EXPECT_NE(d.reason.find("Node Reboot Required"), std::string::npos);
  e.recovery_actions = {"None"};
  EXPECT_EQ(DecideXidAction(e).action, Action::kNone);
  e.recovery_actions = {"Drain and Reset"};
  EXPECT_EQ(DecideXidAction(e).action, Action::kDrainReset);
}

TEST(KmsgXidActionTest, NvLink5FatalAndUnit) {
  KernelEvent e = Xid(149);
  e.nvlink_unit = "NETIR_LINK_EVT";
  e.nvlink_fatal = true;
  EXPECT_EQ(DecideXidAction(e).action, Action::kResetGpu);
  e.nvlink_unit = "NETIR_BER_EVENT";
  EXPECT_EQ(DecideXidAction(e).action, Action::kWatch);  // bit errors: check cables
  KernelEvent s = Xid(144);
  s.nvlink_unit = "SAW_MVB";
  EXPECT_EQ(DecideXidAction(s).action, Action::kWatch);  // Nonfatal
  s.nvlink_fatal = true;
  EXPECT_EQ(DecideXidAction(s).action, Action::kResetGpu);
  KernelEvent t = Xid(147);
  t.nvlink_unit = "TREX";
  EXPECT_EQ(DecideXidAction(t).action, Action::kNone);
  KernelEvent m = Xid(150);
  m.nvlink_unit = "MSE_WATCHDOG";
  EXPECT_EQ(DecideXidAction(m).action, Action::kResetGpu);
  for (int code = 144; code <= 150; ++code) {
    EXPECT_FALSE(LookupXid(code).bucket.empty()) << code;
  }
}

std::vector<Finding> Judge(const std::string& text) {
  KernelLogScanner s;
  s.ScanText(text);
  Snapshot snap;
  snap.kernel = s.Finish();
  std::vector<Finding> out;
  KernelRules(snap, Thresholds{}, out);
  return out;
}

const Finding* FindXid(const std::vector<Finding>& fs, int64_t code) {
  for (const auto& f : fs) {
    for (const auto& e : f.evidence) {
      if (f.id == "gpu.xid" && e.name == "xid" && std::get<int64_t>(e.value) == code) return &f;
    }
  }
  return nullptr;
}

TEST(KmsgXidActionTest, FindingCarriesActionReasonAndAConsistentSeverity) {
  auto fs = Judge(
      "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=10, name=a, Graphics Exception\n"
      "[ 1.1] NVRM: Xid (PCI:0000:3b:00): 13, pid=11, name=b, Graphics Exception\n"
      "[ 1.2] NVRM: Xid (PCI:0000:3b:00): 13, pid=12, name=c, Graphics Exception\n"
      "[ 2.0] NVRM: Xid (PCI:0000:52:00): 94, pid='<unknown>', name=<unknown>, Contained: SM "
      "(0x1). RST: No, D-RST: No\n"
      "[ 3.0] NVRM: Xid (PCI:0000:52:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable "
      "double bit error (DBE) has been detected on GPU\n"
      "[ 4.0] NVRM: Xid (PCI:0000:02:00): 154, GPU recovery action changed from 0x0 (None) to "
      "0x2 (Node Reboot Required)\n");
  const Finding* x13 = FindXid(fs, 13);
  ASSERT_TRUE(x13);
  // Three processes escalate it, but an application Xid never reaches crit or a drain.
  EXPECT_EQ(x13->action, Action::kRestartApp);
  EXPECT_EQ(x13->severity, Severity::kWarn);
  const Finding* x94 = FindXid(fs, 94);
  ASSERT_TRUE(x94);
  EXPECT_EQ(x94->action, Action::kRestartApp);
  EXPECT_EQ(x94->severity, Severity::kWarn);  // table says critical; RST: No says restart
  const Finding* x48 = FindXid(fs, 48);
  ASSERT_TRUE(x48);
  EXPECT_EQ(x48->action, Action::kDrainReset);
  EXPECT_EQ(x48->severity, Severity::kCrit);
  const Finding* x154 = FindXid(fs, 154);
  ASSERT_TRUE(x154);
  EXPECT_EQ(x154->action, Action::kReboot);
  EXPECT_EQ(x154->severity, Severity::kCrit);
  bool reason = false;
  for (const auto& e : x154->evidence) {
    if (e.name == "action_reason") {
      reason = std::get<std::string>(e.value).find("Node Reboot Required") != std::string::npos;
    }
  }
  EXPECT_TRUE(reason);
}

TEST(KmsgXidActionTest, ExplainShowsTheAction) {
  std::string e = ExplainXid(13);
  EXPECT_NE(e.find("action:   restart_app"), std::string::npos) << e;
  EXPECT_NE(e.find("RESTART_APP"), std::string::npos);
  EXPECT_NE(ExplainXid(79).find("action:   drain_reset"), std::string::npos);
  EXPECT_NE(ExplainXid(154).find("Node Reboot Required"), std::string::npos);
  EXPECT_NE(ExplainXid(95).find("D-RST"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor
