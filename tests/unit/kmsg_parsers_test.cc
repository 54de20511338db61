// Unit tests of the kernel-log parsers: PCI tuples, line shapes, Xid/NVRM lines, other signals.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "facts/pci_tuple.h"
#include "kmsg/kernel_signals.h"
#include "kmsg/line_format.h"
#include "kmsg/xid_parser.h"
#include "rules/xid_table.h"

namespace gpudoctor {
namespace {

class UtcEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

TEST(KmsgPciTest, ParsesEveryFormToTheSameTuple) {
  auto a = ParsePciTuple("PCI:0000:3b:00");
  auto b = ParsePciTuple("0000:3B:00.0");
  auto c = ParsePciTuple("00000000:3B:00.0");
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(a->SameDevice(*b));
  EXPECT_TRUE(a->SameDevice(*c));
  EXPECT_EQ(a->bus, 0x3bu);
  EXPECT_EQ(a->ToString(), "0000:3b:00.0");
  auto grace = ParsePciTuple("0018:01:00");
  ASSERT_TRUE(grace);
  EXPECT_EQ(grace->domain, 0x18u);
  EXPECT_FALSE(ParsePciTuple("0000:3b:20"));  // device > 0x1f
  EXPECT_FALSE(ParsePciTuple("0000:zz:00"));
  EXPECT_FALSE(ParsePciTuple("0000:3b:00.8"));
  EXPECT_FALSE(ParsePciTuple("123456789:3b:00"));
  EXPECT_FALSE(ParsePciTuple(""));
}

TEST_F(UtcEnv, LineShapesGiveMessageAndTime) {
  LineFormatState st;
  st.now_unix_s = 1717400000;  // 2024-06-03
  auto d = ParseLinePrefix("[ 1021.553181] NVRM: Xid (PCI:0000:18:00): 48, x", st);
  EXPECT_EQ(d.shape, LineShape::kDmesg);
  EXPECT_EQ(d.time.boot_us, 1021553181);
  EXPECT_EQ(d.message, "NVRM: Xid (PCI:0000:18:00): 48, x");

  // dmesg -H / --reltime: the message, no time (a delta, or a minute without a year).
  for (const char* line :
       {"[  +0.000844] nvidia 0000:03:00.0: AER: x", "[+0.000001] nvidia 0000:03:00.0: AER: x",
        "[Jan21 10:32] nvidia 0000:03:00.0: AER: x", "[Jan 21 10:32] nvidia 0000:03:00.0: AER: x",
        "kernel: nvidia 0000:03:00.0: AER: x"}) {
    auto r = ParseLinePrefix(line, st);
    EXPECT_EQ(r.shape, LineShape::kUntimed) << line;
    EXPECT_EQ(r.message, "nvidia 0000:03:00.0: AER: x") << line;
    EXPECT_FALSE(r.time.wall_us || r.time.boot_us) << line;
  }
  for (const char* line :
       {"[  +0.x] a", "[+1] a", "[Jan21 25:32] a", "[Foo21 10:32] a", "[Jan21 10:32 a"}) {
    EXPECT_EQ(ParseLinePrefix(line, st).shape, LineShape::kUnknown) << line;
  }

  auto t = ParseLinePrefix("[Tue Jan  9 09:41:02 2024] NVRM: hello", st);
  EXPECT_EQ(t.shape, LineShape::kDmesgCtime);
  EXPECT_EQ(t.time.wall_us, int64_t{1704793262} * 1000000);
  EXPECT_EQ(t.message, "NVRM: hello");

  auto j = ParseLinePrefix("Jun 03 14:22:31 node kernel: NVRM: x", st);
  EXPECT_EQ(j.shape, LineShape::kSyslog);
  EXPECT_TRUE(j.kernel);
  EXPECT_EQ(j.time.wall_us, int64_t{1717424551} * 1000000);
  EXPECT_EQ(j.message, "NVRM: x");

  auto noh = ParseLinePrefix("Mar 21 21:42:01 kernel: NVRM: GPU0 y", st);
  EXPECT_TRUE(noh.kernel);
  EXPECT_EQ(noh.message, "NVRM: GPU0 y");

  auto sys = ParseLinePrefix("Mar  4 02:11:40 oldbox kernel: [   91.553172] NVRM: Xid z", st);
  EXPECT_EQ(sys.time.boot_us, 91553172);
  EXPECT_TRUE(sys.time.wall_us.has_value());
  EXPECT_EQ(sys.message, "NVRM: Xid z");

  auto user = ParseLinePrefix("Jun 03 15:30:00 node nvidia-persistenced[1433]: NVRM: Xid", st);
  EXPECT_FALSE(user.kernel);

  auto iso = ParseLinePrefix("2024-11-20T10:11:12+0100 gh kernel: NVRM: q", st);
  EXPECT_EQ(iso.shape, LineShape::kSyslogIso);
  EXPECT_EQ(iso.time.wall_us, int64_t{1732093872} * 1000000);
  EXPECT_EQ(iso.message, "NVRM: q");

  auto diso = ParseLinePrefix("2024-11-20T10:11:12,123456+00:00 NVRM: Xid r", st);
  EXPECT_EQ(diso.shape, LineShape::kDmesgIso);
  EXPECT_EQ(diso.time.wall_us, int64_t{1732097472} * 1000000 + 123456);
  EXPECT_EQ(diso.message, "NVRM: Xid r");

  auto raw = ParseLinePrefix("4,2201,3801122090,-;NVRM: Xid (PCI:0018:01:00): 149, t", st);
  EXPECT_EQ(raw.shape, LineShape::kRawKmsg);
  EXPECT_EQ(raw.time.boot_us, 3801122090);
  EXPECT_TRUE(raw.kernel);
  EXPECT_FALSE(ParseLinePrefix("14,2204,3801122300,-;NVRM: Xid", st).kernel);  // LOG_USER
  EXPECT_EQ(ParseLinePrefix(" DEVICE=+pci:0018:01:00.0", st).shape, LineShape::kKmsgContinuation);
  EXPECT_EQ(ParseLinePrefix("-- Boot 1a2b3c --", st).shape, LineShape::kJournalBoot);
  auto r = ParseLinePrefix("<4>[   12.5] NVRM: a", st);
  EXPECT_EQ(r.time.boot_us, 12500000);
  auto x = ParseLinePrefix("kern  :warn  : [   12.5] NVRM: b", st);
  EXPECT_EQ(x.message, "NVRM: b");
  auto talos = ParseLinePrefix("node-7: kern: warning: [2026-04-22T21:27:51Z]: NVRM: c", st);
  EXPECT_EQ(talos.shape, LineShape::kTalos);
  EXPECT_EQ(talos.message, "NVRM: c");
  auto unknown = ParseLinePrefix("node-7 kernel> warning {2026-04-22T21:27:51Z} NVRM: c", st);
  EXPECT_EQ(unknown.shape, LineShape::kUnknown);
  EXPECT_EQ(unknown.message, "node-7 kernel> warning {2026-04-22T21:27:51Z} NVRM: c");
}

TEST(KmsgXidTest, AllVariants) {
  auto n = ParseNvrmLine(
      "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus.");
  ASSERT_EQ(n.type, NvrmLineType::kXid);
  EXPECT_EQ(n.xid.xid, 79);
  EXPECT_FALSE(n.xid.pid);
  EXPECT_EQ(n.xid.process, "");
  EXPECT_EQ(n.xid.text, "GPU has fallen off the bus.");

  auto mig = ParseNvrmLine("NVRM: Xid (PCI:0000:b7:00 GPU-I:02 GPU-CI:01): 13, pid=5, name=a b, x");
  ASSERT_EQ(mig.type, NvrmLineType::kXid);
  EXPECT_EQ(mig.xid.gpu_instance, 2);
  EXPECT_EQ(mig.xid.compute_instance, 1);
  EXPECT_EQ(mig.xid.process, "a b");

  auto old = ParseNvrmLine("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row");
  ASSERT_EQ(old.type, NvrmLineType::kXid);
  EXPECT_EQ(old.xid.pid, 1896);
  EXPECT_EQ(old.xid.text, "Row Remapper: New row");

  auto oldest = ParseNvrmLine("NVRM: Xid (0000:03:00): 14, Channel 00000001");
  ASSERT_EQ(oldest.type, NvrmLineType::kXid);
  EXPECT_EQ(oldest.xid.xid, 14);
  EXPECT_EQ(oldest.xid.pci.bus, 3u);

  auto c = ParseNvrmLine(
      "NVRM: Xid (PCI:0000:18:00): 95, pid=7062, Uncontained: LTC TAG (0x2, "
      "0x1). RST: Yes, D-RST: No");
  EXPECT_EQ(c.xid.reset_required, true);
  EXPECT_EQ(c.xid.drain_reset_required, false);

  auto nv = ParseNvrmLine(
      "NVRM: Xid (PCI:0018:01:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6 "
      "0x00000000 0x0)");
  ASSERT_EQ(nv.type, NvrmLineType::kXid);
  EXPECT_EQ(nv.xid.nvlink_unit, "NETIR_LINK_EVT");
  EXPECT_TRUE(nv.xid.nvlink_fatal);
  EXPECT_EQ(nv.xid.nvlink_link, 8);
  EXPECT_EQ(nv.xid.nvlink_intrinfo, 0x004505c6u);
  EXPECT_EQ(nv.xid.nvlink_errstatus, 0u);
  auto nvpid = ParseNvrmLine(
      "NVRM: Xid (PCI:0018:01:00): 145, pid=7, name=x, RLW_REMAP Nonfatal XC1 i0 Link -1 "
      "(0x00000040 0x00000080)");
  EXPECT_EQ(nvpid.xid.nvlink_unit, "RLW_REMAP");
  EXPECT_FALSE(nvpid.xid.nvlink_fatal);
  EXPECT_EQ(nvpid.xid.nvlink_link, -1);

  auto gsp = ParseNvrmLine(
      "NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, Timeout waiting for RPC "
      "from GSP! Expected function 103 (GSP_RM_ALLOC) (0x80 0x38).");
  EXPECT_EQ(gsp.type, NvrmLineType::kXid);  // an Xid, not a separate GSP timeout event
}

TEST(KmsgXidTest, LookAlikesAndGarbage) {
  EXPECT_EQ(ParseNvrmLine("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal").type,
            NvrmLineType::kNotNvrm);
  EXPECT_EQ(ParseNvrmLine("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08").type,
            NvrmLineType::kOther);
  EXPECT_EQ(ParseNvrmLine("NVRM: Xid (PCI:0000:3b:00): 0, pid=1, x").type, NvrmLineType::kGarbled);
  EXPECT_EQ(ParseNvrmLine("NVRM: Xid (PCI:0000:3b:00): 123456, x").type, NvrmLineType::kGarbled);
  // An absurd pid leaves the pid unknown but keeps the Xid (issue 8 item 19).
  auto odd_pid = ParseNvrmLine("NVRM: Xid (PCI:0000:3b:00): 13, pid=99999999999, name=a, x");
  EXPECT_EQ(odd_pid.type, NvrmLineType::kXid);
  EXPECT_FALSE(odd_pid.xid.pid);
  EXPECT_EQ(odd_pid.xid.process, "a");
  EXPECT_EQ(ParseNvrmLine("NVRM: Xid (PCI:0000:3b:00").type, NvrmLineType::kGarbled);
  EXPECT_EQ(ParseNvrmLine("NVRM: Xid (PCI:0000:3b:00 GPU-I:zz): 13, x").type,
            NvrmLineType::kGarbled);
  // Same words, not the fallen-off-the-bus sequence: "not supported" variant.
  EXPECT_EQ(ParseNvrmLine("NVRM: installed in this system is not supported by the").type,
            NvrmLineType::kOther);
}

TEST(KmsgXidTest, CompanionLines) {
  auto at = ParseNvrmLine("NVRM: GPU at PCI:0000:18:00: GPU-4a1e7b52-3b8c-6f9d-2e17-a0c5d3f81b64");
  ASSERT_EQ(at.type, NvrmLineType::kGpuAt);
  EXPECT_EQ(at.uuid, "GPU-4a1e7b52-3b8c-6f9d-2e17-a0c5d3f81b64");
  EXPECT_EQ(at.pci->bus, 0x18u);
  auto sn = ParseNvrmLine("NVRM: GPU Board Serial Number: 1654123019876");
  EXPECT_EQ(sn.type, NvrmLineType::kBoardSerial);
  EXPECT_EQ(sn.serial, "1654123019876");
  auto lost = ParseNvrmLine("NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.");
  ASSERT_EQ(lost.type, NvrmLineType::kFallenOffBus);
  EXPECT_EQ(lost.pci->bus, 0x2bu);
  EXPECT_EQ(ParseNvrmLine("NVRM: The NVIDIA GPU 0000:b3:00.0").type, NvrmLineType::kTheNvidiaGpu);
  EXPECT_EQ(ParseNvrmLine("NVRM: (PCI ID: 10de:26b5) installed in this system has").type,
            NvrmLineType::kInstalledHas);
  auto init = ParseNvrmLine("NVRM: GPU 0000:04:01.0: RmInitAdapter failed! (0x11:0x45:2525)");
  ASSERT_EQ(init.type, NvrmLineType::kInitFailed);
  EXPECT_EQ(init.code, "0x11:0x45:2525");
  EXPECT_EQ(init.pci->device, 1u);
  auto hb = ParseNvrmLine("NVRM: GPU0 _kgspIsHeartbeatTimedOut: Heartbeat timed out, x");
  ASSERT_EQ(hb.type, NvrmLineType::kGspTimeout);
  EXPECT_EQ(hb.subject, "GPU0");
  // RM status assertions: only the statuses that say the GPU is gone or must be reset.
  auto gone = ParseNvrmLine(
      "NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] "
      "(0x0000000F) returned from rmStatus @ kernel_ce_gv100.c:106");
  ASSERT_EQ(gone.type, NvrmLineType::kStatusAssert);
  EXPECT_EQ(gone.code, "NV_ERR_GPU_IS_LOST");
  EXPECT_EQ(gone.subject, "");
  auto reset = ParseNvrmLine(
      "NVRM: GPU0 nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED]");
  ASSERT_EQ(reset.type, NvrmLineType::kStatusAssert);
  EXPECT_EQ(reset.code, "NV_ERR_RESET_REQUIRED");
  EXPECT_EQ(reset.subject, "GPU0");
  EXPECT_EQ(ParseNvrmLine("NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: (status == NV_OK) || "
                          "(status == NV_ERR_GPU_IN_FULLCHIP_RESET) @ rs_client.c:844")
                .type,
            NvrmLineType::kOther);
  EXPECT_EQ(ParseNvrmLine("NVRM: GPU lost from the bus [NV_ERR_GPU_IS_LOST]").type,
            NvrmLineType::kOther);  // no assertion: not this shape
}

TEST(KmsgSignalsTest, AerHungOomMceNetThermal) {
  auto aer = ParseAerLine(
      "nvidia 0000:04:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction "
      "Layer, (Requester ID)");
  ASSERT_EQ(aer.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(aer.event.aer_severity, AerSeverity::kFatal);
  EXPECT_EQ(aer.event.aer_type, "Transaction Layer");
  EXPECT_EQ(ParseAerLine("pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected, type=Data "
                         "Link Layer, id=0018(Transmitter ID)")
                .event.aer_severity,
            AerSeverity::kCorrected);
  EXPECT_EQ(ParseAerLine("x 0000:00:1c.5: AER: PCIe Bus Error: severity=Uncorrectable "
                         "(Non-Fatal), type=Transaction Layer, (Completer ID)")
                .event.aer_severity,
            AerSeverity::kNonFatal);
  auto dev = ParseAerLine("nvidia 0000:04:00.0: AER:   device [10de:102d] error status/mask=1/0");
  EXPECT_EQ(dev.verdict, SignalVerdict::kAttach);
  EXPECT_EQ(dev.event.vendor_id, 0x10deu);
  // The GPU's driver has no AER recovery: a fatal error of the GPU itself (nvidia only).
  for (const char* line : {"nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)",
                           "nvidia 0000:02:00.0: device has no AER-aware driver"}) {
    auto nr = ParseAerLine(line);
    ASSERT_EQ(nr.verdict, SignalVerdict::kEvent) << line;
    EXPECT_EQ(nr.event.aer_severity, AerSeverity::kFatal);
    EXPECT_EQ(nr.event.aer_type, "not recovered");
    EXPECT_EQ(nr.event.vendor_id, 0x10deu);
  }
  EXPECT_EQ(ParseAerLine("snd_hda_intel 0000:03:00.1: AER: can't recover (no error_detected "
                         "callback)")
                .verdict,
            SignalVerdict::kRecognized);
  EXPECT_EQ(ParseAerLine("nvidia 03:00.x: AER: can't recover (no error_detected callback)").verdict,
            SignalVerdict::kGarbled);
  auto bit = ParseAerLine("nvidia 0000:04:00.0: AER:    [14] CmpltTO                (First)");
  ASSERT_EQ(bit.verdict, SignalVerdict::kAttach);
  EXPECT_EQ(bit.event.error_names.at(0), "CmpltTO");

  auto hung = ParseHungTaskLine("INFO: task kworker/u96:3:812 blocked for more than 122 seconds.");
  ASSERT_EQ(hung.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(hung.event.subject, "kworker/u96:3");
  EXPECT_EQ(hung.event.max_blocked_s, 122);
  EXPECT_FALSE(hung.event.nvidia_related);
  EXPECT_TRUE(ParseHungTaskLine("INFO: task nvidia-smi:3111 blocked for more than 120 seconds.")
                  .event.nvidia_related);
  EXPECT_EQ(ParseHungTaskLine("INFO: task foo:abc blocked for more than 120 seconds.").verdict,
            SignalVerdict::kGarbled);

  // CPU stalls (real lines: NVIDIA/open-gpu-kernel-modules#1177, deepspeedai/DeepSpeed#925,
  // iron-fish/ironfish#701, amazonlinux/amazon-linux-2023#1037).
  auto soft = ParseCpuStallLine(
      "watchdog: BUG: soft lockup - CPU#2 stuck for 104s! [nvidia-modeset/:1314]");
  ASSERT_EQ(soft.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(soft.event.kind, KernelEventKind::kCpuStall);
  EXPECT_EQ(soft.event.subject, "soft lockup");
  EXPECT_EQ(soft.event.max_blocked_s, 104);
  EXPECT_EQ(soft.event.ids, std::vector<int64_t>{2});
  EXPECT_EQ(soft.event.processes, std::vector<std::string>{"nvidia-modeset/[1314]"});
  EXPECT_TRUE(soft.event.nvidia_related);
  EXPECT_TRUE(
      ParseCpuStallLine("watchdog: BUG: soft lockup - CPU#9 stuck for 22s! [irq/162-nvidia:1307]")
          .event.nvidia_related);
  auto pytest =
      ParseCpuStallLine("NMI watchdog: BUG: soft lockup - CPU#7 stuck for 23s! [pytest:25222]");
  ASSERT_EQ(pytest.verdict, SignalVerdict::kEvent);
  EXPECT_FALSE(pytest.event.nvidia_related);
  EXPECT_EQ(ParseCpuStallLine("watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [SCTP timer:2111]")
                .event.processes,
            std::vector<std::string>{"SCTP timer[2111]"});
  auto hard = ParseCpuStallLine("NMI watchdog: Watchdog detected hard LOCKUP on cpu 3");
  ASSERT_EQ(hard.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(hard.event.subject, "hard lockup");
  EXPECT_EQ(hard.event.ids, std::vector<int64_t>{3});
  EXPECT_EQ(ParseCpuStallLine("rcu: INFO: rcu_sched detected stalls on CPUs/tasks:").event.subject,
            "RCU stall (rcu_sched)");
  EXPECT_EQ(ParseCpuStallLine("rcu: INFO: rcu_preempt self-detected stall on CPU").event.subject,
            "RCU stall (rcu_preempt)");
  EXPECT_EQ(ParseCpuStallLine("watchdog: BUG: soft lockup - CPU#x stuck for 22s! [a:1]").verdict,
            SignalVerdict::kGarbled);
  EXPECT_EQ(ParseCpuStallLine("watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [a:b]").verdict,
            SignalVerdict::kGarbled);
  EXPECT_EQ(ParseCpuStallLine("softlockup_panic is 0").verdict, SignalVerdict::kNoMatch);
  EXPECT_EQ(ParseCpuStallLine("rcu: INFO: this is not a stall").verdict, SignalVerdict::kNoMatch);

  // NVSwitch SXids (real lines: leptonai/gpud components/accelerator/nvidia/sxid/README.md,
  // NVIDIA/nvtrust#124, NVIDIA/open-gpu-kernel-modules#446).
  auto sxid = ParseSxidLine(
      "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up");
  ASSERT_EQ(sxid.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(sxid.event.kind, KernelEventKind::kNvswitchSxid);
  EXPECT_EQ(sxid.event.subject, "0000:06:00.0");
  EXPECT_EQ(sxid.event.xid, 20034);
  EXPECT_TRUE(sxid.event.nvlink_fatal);
  EXPECT_EQ(sxid.event.ids, std::vector<int64_t>{48});
  EXPECT_EQ(sxid.event.error_names, std::vector<std::string>{"LTSSM Fault Up"});
  auto nonfatal = ParseSxidLine(
      "nvidia-nvswitch1: SXid (PCI:0000:02:00.0): 22013, Non-fatal, Link 00 Minion Link DLREQ "
      "interrupt (First)");
  ASSERT_EQ(nonfatal.verdict, SignalVerdict::kEvent);
  EXPECT_FALSE(nonfatal.event.nvlink_fatal);
  EXPECT_EQ(nonfatal.event.error_names, std::vector<std::string>{"Minion Link DLREQ interrupt"});
  auto severity = ParseSxidLine(
      "nvidia-nvswitch1: SXid (PCI:0000:aa:00.0): 24007, Severity 1 Engine instance 12 Sub-engine "
      "instance 00");
  ASSERT_EQ(severity.verdict, SignalVerdict::kAttach);
  EXPECT_TRUE(severity.event.nvlink_fatal);
  EXPECT_FALSE(ParseSxidLine("nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Severity 0 Engine "
                             "instance 44 Sub-engine instance 00")
                   .event.nvlink_fatal);
  EXPECT_EQ(ParseSxidLine("nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Data {0x0000002b, "
                          "0x0000002b}")
                .verdict,
            SignalVerdict::kRecognized);
  EXPECT_EQ(ParseSxidLine("nvidia-nvswitch0: SXid (PCI:zz): 1, Fatal").verdict,
            SignalVerdict::kGarbled);
  EXPECT_EQ(ParseSxidLine("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Weird").verdict,
            SignalVerdict::kGarbled);
  EXPECT_EQ(ParseSxidLine("nvidia-nvswitch: Probing device 0000:02:00.0").verdict,
            SignalVerdict::kNoMatch);

  // A GSP-CrashCat report's banner names the GPU for its unprefixed reason line.
  NvrmLine crashcat = ParseNvrmLine(
      "NVRM: GPU0 kgspHealthCheck_TU102: ****************************** GSP-CrashCat Report "
      "*******************************");
  EXPECT_EQ(crashcat.type, NvrmLineType::kGspCrashCat);
  EXPECT_EQ(crashcat.subject, "GPU0");

  auto oom = ParseOomLine(
      "Out of memory: Killed process 1234 (py thon) total-vm:100kB, anon-rss:2048kB, "
      "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:12kB oom_score_adj:0",
      false);
  ASSERT_EQ(oom.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(oom.event.subject, "py thon");
  EXPECT_EQ(oom.event.max_anon_rss_kb, 2048);
  EXPECT_FALSE(oom.event.cgroup_oom);
  EXPECT_TRUE(
      ParseOomLine("Memory cgroup out of memory: Killed process 1 (a) total-vm:1kB, anon-rss:1kB",
                   false)
          .event.cgroup_oom);
  EXPECT_EQ(ParseOomLine("Out of memory: Kill process 4321 (java) score 912", false).verdict,
            SignalVerdict::kNoMatch);

  auto mce = ParseMceLine("mce: [Hardware Error]: CPU 3: Machine Check Exception: 5 Bank 4: b2");
  ASSERT_EQ(mce.verdict, SignalVerdict::kEvent);
  EXPECT_TRUE(mce.event.mce_exception);
  EXPECT_EQ(mce.event.ids.at(0), 3);
  EXPECT_EQ(ParseMceLine("mce: [Hardware Error]: TSC 0 ADDR 1f0b5fc0").verdict,
            SignalVerdict::kRecognized);

  EXPECT_EQ(ParseNetLinkLine("mlx5_core 0000:41:00.0 ibp65s0: Link down").event.subject, "ibp65s0");
  EXPECT_EQ(ParseNetLinkLine("e1000e: eno1 NIC Link is Down").event.subject, "eno1");
  EXPECT_EQ(ParseNetLinkLine("e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps").event.link_up,
            1u);
  EXPECT_EQ(ParseNetLinkLine("mlx5_core 0000:41:00.0 mlx5_0: Port: 1 Link DOWN").event.subject,
            "mlx5_0/1");
  auto wd = ParseNetLinkLine(
      "mlx5_core 0000:41:00.0 ens1np0: NETDEV WATCHDOG: CPU: 3: transmit queue 7 timed out 5372 "
      "ms");
  EXPECT_EQ(wd.event.subject, "ens1np0");
  EXPECT_EQ(wd.event.tx_timeouts, 1u);
  EXPECT_EQ(
      ParseNetLinkLine("NETDEV WATCHDOG: eth0 (e1000e): transmit queue 0 timed out").event.subject,
      "eth0");
  EXPECT_EQ(ParseNetLinkLine("pcieport: Link update pending").verdict, SignalVerdict::kNoMatch);

  auto th = ParseCpuThermalLine(
      "CPU12: Package temperature is above threshold, cpu clock is throttled (total events = 9)");
  ASSERT_EQ(th.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(th.event.subject, "package");
  EXPECT_EQ(th.event.max_total_events, 9);
  EXPECT_EQ(ParseCpuThermalLine("CPU12: Core temperature/speed normal").verdict,
            SignalVerdict::kRecognized);
}

TEST(KmsgXidTableTest, KnownUnknownAndExplain) {
  EXPECT_EQ(LookupXid(79).severity, XidSeverity::kFatal);
  EXPECT_EQ(LookupXid(13).xid_class, XidClass::kApplication);
  EXPECT_EQ(LookupXid(130).mnemonic, "ROBUST_CHANNEL_CE_ERROR");  // range 126-135
  XidInfo unknown = LookupXid(999);
  EXPECT_FALSE(unknown.known);
  EXPECT_EQ(unknown.severity, XidSeverity::kWarn);
  std::string e = ExplainXid(79);
  EXPECT_NE(e.find("ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"), std::string::npos);
  EXPECT_NE(e.find("fatal"), std::string::npos);
  EXPECT_NE(ExplainXid(500).find("look up"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor
