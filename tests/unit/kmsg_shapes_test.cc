// Line shapes the real-log corpus brought in: journalctl stamps in other LC_TIME locales, the
// "API mismatch" report as one journal message, the older "GPU at ... has fallen off the bus."
// form, the bonding driver's link lines, and the PRINTK_CALLER id after a dmesg stamp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "kmsg/kernel_signals.h"
#include "kmsg/line_format.h"
#include "kmsg/log_scanner.h"
#include "kmsg/xid_parser.h"

namespace gpudoctor {
namespace {

class KmsgShapesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

TEST_F(KmsgShapesTest, JournalStampsInOtherLocales) {
  LineFormatState st;
  st.now_unix_s = 1797292800;  // 2026-12-15
  // 2026-03-04T12:34:56Z
  constexpr int64_t kMar4 = int64_t{1772627696} * 1000000;
  const char* march[] = {
      "mars 04 12:34:56 h kernel: NVRM: x",                // fr
      "M\u00e4r 04 12:34:56 h kernel: NVRM: x",            // de
      "mar 04 12:34:56 h kernel: NVRM: x",                 // es
      "\u043c\u0430\u0440 04 12:34:56 h kernel: NVRM: x",  // ru
      "3\u6708 04 12:34:56 h kernel: NVRM: x",             // zh
      " 3\u6708 04 12:34:56 h kernel: NVRM: x",            // ja
      "Mar  4 12:34:56 h kernel: NVRM: x",                 // C
      "mrt 04 12:34:56 h kernel: NVRM: x",                 // nl
      "b\u0159e 04 12:34:56 h kernel: NVRM: x",            // cs
      "maalis 04 12:34:56 h kernel: NVRM: x",              // fi
      "m\u00e1rc 04 12:34:56 h kernel: NVRM: x",           // hu
      "\u0431\u0435\u0440 04 12:34:56 h kernel: NVRM: x",  // uk
      " 3\uc6d4 04 12:34:56 h kernel: NVRM: x",            // ko
  };
  for (const char* line : march) {
    ParsedLine p = ParseLinePrefix(line, st);
    EXPECT_EQ(p.shape, LineShape::kSyslog) << line;
    ASSERT_TRUE(p.time.wall_us) << line;
    EXPECT_EQ(*p.time.wall_us, kMar4) << line;
    EXPECT_EQ(p.message, "NVRM: x") << line;
  }
  EXPECT_EQ(ParseLinePrefix("f\u00e9vr. 04 12:34:56 h kernel: x", st).shape, LineShape::kSyslog);
  EXPECT_EQ(ParseLinePrefix("d\u00e9c. 04 12:34:56 h kernel: x", st).shape, LineShape::kSyslog);
  EXPECT_EQ(ParseLinePrefix("12\u6708 04 12:34:56 h kernel: x", st).shape, LineShape::kSyslog);
  // Every month of a locale that abbreviates with a period and spells some months out (nb/nn).
  const char* nb[] = {"jan.", "feb.", "mars", "april", "mai",  "juni",
                      "juli", "aug.", "sep.", "okt.",  "nov.", "des."};
  for (int m = 0; m < 12; ++m) {
    std::string line = std::string(nb[m]) + " 04 12:34:56 h kernel: x";
    ParsedLine p = ParseLinePrefix(line, st);
    ASSERT_TRUE(p.time.wall_us) << line;
    time_t secs = static_cast<time_t>(*p.time.wall_us / 1000000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    EXPECT_EQ(tm.tm_mon, m) << line;
  }
  // Look-alikes stay unknown: no month, a month without a day, 13月.
  EXPECT_EQ(ParseLinePrefix("mars attacks 12:34:56", st).shape, LineShape::kUnknown);
  EXPECT_EQ(ParseLinePrefix("13\u6708 04 12:34:56 h kernel: x", st).shape, LineShape::kUnknown);
  EXPECT_EQ(ParseLinePrefix("   NVRM: this kernel module has", st).shape, LineShape::kUnknown);
}

// talosctl dmesg: "NODE: FACILITY: LEVEL: [RFC 3339]: message", the level right-aligned, NODE
// optional; a user-space facility is not kernel text.
TEST_F(KmsgShapesTest, TalosDmesgLines) {
  LineFormatState st;
  ParsedLine p = ParseLinePrefix(
      "192.168.11.119: kern: warning: [2026-04-22T21:26:20.599716692Z]: NVRM: Xid "
      "(PCI:0000:48:00): "
      "74, x",
      st);
  EXPECT_EQ(p.shape, LineShape::kTalos);
  ASSERT_TRUE(p.time.wall_us);
  EXPECT_EQ(*p.time.wall_us, int64_t{1776893180} * 1000000 + 599716);  // ns cut to us
  EXPECT_EQ(p.message, "NVRM: Xid (PCI:0000:48:00): 74, x");
  EXPECT_TRUE(p.kernel);
  p = ParseLinePrefix(
      "node-3.example: kern:     err: [2021-11-10T10:09:37.6Z]: nvidia-nvswitch1: SXid", st);
  EXPECT_EQ(p.shape, LineShape::kTalos);
  EXPECT_EQ(p.message, "nvidia-nvswitch1: SXid");
  p = ParseLinePrefix("kern:    info: [2021-11-10T10:09:37.662764956Z]: Command line: x", st);
  EXPECT_EQ(p.shape, LineShape::kTalos);
  EXPECT_EQ(p.message, "Command line: x");
  p = ParseLinePrefix("172.20.1.2: user: warning: [2021-11-10T10:09:37Z]: [talos] hello", st);
  EXPECT_EQ(p.shape, LineShape::kTalos);
  EXPECT_FALSE(p.kernel);
  // Look-alikes: no stamp, a space in the node, a bad date.
  EXPECT_NE(ParseLinePrefix("172.20.1.2: [talos] task setupLogger (1/1): done", st).shape,
            LineShape::kTalos);
  EXPECT_NE(ParseLinePrefix("a b: kern: warning: [2021-11-10T10:09:37Z]: x", st).shape,
            LineShape::kTalos);
  EXPECT_NE(ParseLinePrefix("n: kern: warning: [2021-13-10T10:09:37Z]: x", st).shape,
            LineShape::kTalos);
}

TEST_F(KmsgShapesTest, ApiMismatchAsOneJournalMessage) {
  KernelLogScanner s;
  LogTime t;
  t.wall_us = int64_t{1700000000} * 1000000;
  // The journal keeps the printk as one message with its newlines.
  s.ScanMessage(
      "NVRM: API mismatch: the client 'nvidia-powerd' (pid 849)\nNVRM: has the version "
      "570.133.07, but this kernel module has\nNVRM: the version 575.51.02.  Please make sure "
      "that this\nNVRM: kernel module and all NVIDIA driver components\nNVRM: have the same "
      "version.",
      t);
  KernelLogFacts f = s.Finish();
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].kind, KernelEventKind::kDriverMismatch);
  EXPECT_EQ(f.events[0].client_version, "570.133.07");
  EXPECT_EQ(f.events[0].module_version, "575.51.02");
  ASSERT_EQ(f.events[0].processes.size(), 1u);
  EXPECT_EQ(f.events[0].processes[0], "nvidia-powerd[849]");
}

TEST_F(KmsgShapesTest, ApiMismatchCutShortStillReported) {
  KernelLogScanner s;
  s.ScanText(
      "[ 1.0] NVRM: API mismatch: the client has the version 535.54.03, but\n"
      "[ 2.0] usb 1-1: Link is up\n");  // another anchored line ends the report
  KernelLogFacts f = s.Finish();
  ASSERT_FALSE(f.events.empty());
  EXPECT_EQ(f.events[0].kind, KernelEventKind::kDriverMismatch);
  EXPECT_EQ(f.events[0].client_version, "535.54.03");
  EXPECT_EQ(f.events[0].module_version, "");
}

TEST_F(KmsgShapesTest, OlderFallenOffTheBusForm) {
  NvrmLine n = ParseNvrmLine("NVRM: GPU at 0000:01:00.0 has fallen off the bus.");
  EXPECT_EQ(n.type, NvrmLineType::kFallenOffBus);
  ASSERT_TRUE(n.pci);
  EXPECT_EQ(n.pci->ToString(), "0000:01:00.0");
  // The scheduler banner shares the prefix but is not a lost GPU.
  EXPECT_EQ(ParseNvrmLine("NVRM: GPU at 0000:01:00.0 has software scheduler ENABLED with policy "
                          "BEST_EFFORT.")
                .type,
            NvrmLineType::kOther);
  EXPECT_EQ(
      ParseNvrmLine("NVRM: GPU at PCI:0000:01:00: GPU-435cb66f-d89f-a234-9414-70b032521666").type,
      NvrmLineType::kGpuAt);
}

TEST_F(KmsgShapesTest, Xid154RecoveryActionParsed) {
  NvrmLine n = ParseNvrmLine(
      "NVRM: Xid (PCI:0000:02:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 "
      "(Node Reboot Required)");
  ASSERT_EQ(n.type, NvrmLineType::kXid);
  EXPECT_EQ(n.xid.recovery_action, "Node Reboot Required");
}

TEST_F(KmsgShapesTest, BondingLinkLines) {
  auto a =
      ParseNetLinkLine("internet: link status down for interface eno4, disabling it in 200 ms");
  ASSERT_EQ(a.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(a.event.subject, "eno4");
  EXPECT_EQ(a.event.link_down, 1u);
  auto b = ParseNetLinkLine(
      "bond0: link status definitely up for interface eno1, 10000 Mbps full "
      "duplex");
  ASSERT_EQ(b.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(b.event.subject, "eno1");
  EXPECT_EQ(b.event.link_up, 1u);
  auto c = ParseNetLinkLine("bond0: (slave eth1): link status definitely down, disabling slave");
  ASSERT_EQ(c.verdict, SignalVerdict::kEvent);
  EXPECT_EQ(c.event.subject, "eth1");
  EXPECT_EQ(c.event.link_down, 1u);
  // Through the scanner (its own anchor: "link status" is lower case).
  KernelLogScanner s;
  s.ScanText("[ 131.5] bonding: link status down for interface eno2, disabling it in 200 ms\n");
  KernelLogFacts f = s.Finish();
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].kind, KernelEventKind::kNetLink);
  EXPECT_EQ(f.events[0].subject, "eno2");
}

}  // namespace
// CONFIG_PRINTK_CALLER adds the caller's id after the stamp: "[    T1]" (a task) or "[    C3]" (a
// CPU). The kernel's own text (syslog(2), consoles, syzbot reports) has it right after the stamp,
// "[    7.634517][    T1] usbcore: ..."; util-linux dmesg >= 2.40 prints it after a space,
// "[    1.791786] [    T1] firefly spi demo", also raw ("<1>[    1.000000] [    T1] example[1]",
// util-linux tests/ts/dmesg/cid-input) and with -T or --time-format=iso. Before, the id stayed in
// the message and every NVRM line behind it was missed: "gpudoctor logs" found no Xid at all.
TEST_F(KmsgShapesTest, CallerIdAfterTheStampIsSkipped) {
  LineFormatState st;
  st.now_unix_s = 1797292800;
  struct Case {
    const char* line;
    LineShape shape;
  } cases[] = {
      {"[    7.634517][    T1] NVRM: x", LineShape::kDmesg},
      {"[    1.791786] [    T1] NVRM: x", LineShape::kDmesg},
      {"<1>[    1.000000] [    T1] NVRM: x", LineShape::kDmesg},
      {"<3>[ 1014.0][    C3] NVRM: x", LineShape::kDmesg},
      {"[ 1014.0][T1234567] NVRM: x", LineShape::kDmesg},
      {"[Mon Mar  4 12:34:56 2024] [  T4321] NVRM: x", LineShape::kDmesgCtime},
      {"2024-03-04T12:34:56,123456+00:00 [  T4321] NVRM: x", LineShape::kDmesgIso},
      {"Mar  4 12:34:56 h kernel: [ 12.3][    T1] NVRM: x", LineShape::kSyslog},
  };
  for (const Case& c : cases) {
    ParsedLine p = ParseLinePrefix(c.line, st);
    EXPECT_EQ(p.shape, c.shape) << c.line;
    EXPECT_EQ(p.message, "NVRM: x") << c.line;
  }
  EXPECT_EQ(*ParseLinePrefix("[    7.634517][    T1] x", st).time.boot_us, 7634517);
  // Brackets that are not a caller id stay in the message.
  EXPECT_EQ(ParseLinePrefix("[ 1.0] [T] x", st).message, "[T] x");
  EXPECT_EQ(ParseLinePrefix("[ 1.0] [ X1] x", st).message, "[ X1] x");
  EXPECT_EQ(ParseLinePrefix("[ 1.0] [T12 x", st).message, "[T12 x");
  EXPECT_EQ(ParseLinePrefix("[ 1.0] [drm] T1 x", st).message, "[drm] T1 x");

  // Through the scanner: the Xids are found behind either form.
  KernelLogScanner s;
  s.ScanText(
      "[ 1012.345678][  T4321] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has "
      "fallen off the bus.\n"
      "[ 1013.345678] [  T4321] NVRM: Xid (PCI:0000:3c:00): 48, pid=1234, name=python, An "
      "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
      "partition 0, subpartition 0.\n");
  KernelLogFacts f = s.Finish();
  std::vector<int> xids;
  for (const KernelEvent& e : f.events) {
    if (e.kind == KernelEventKind::kXid) xids.push_back(e.xid);
  }
  EXPECT_EQ(xids, (std::vector<int>{79, 48}));
}

}  // namespace gpudoctor
