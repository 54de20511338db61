#include <gtest/gtest.h>

#include "facts/pci_bus_id.h"
#include "parsers/gpu_sysfs.h"

namespace gpudoctor {
namespace {

TEST(GpuParsersTest, PciBusIdFormsCompareAsTuples) {
  auto nvml = ParsePciBusId("00000000:3B:00.0");
  auto legacy = ParsePciBusId("0000:3B:00.0");
  auto xid = ParsePciBusId("0000:3b:00");
  auto shortform = ParsePciBusId("3b:00.0");
  ASSERT_TRUE(nvml && legacy && xid && shortform);
  EXPECT_EQ(*nvml, *legacy);
  EXPECT_EQ(*nvml, *xid);
  EXPECT_EQ(*nvml, *shortform);
  EXPECT_EQ(FormatPciBusId(*nvml), "0000:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("0018:01:00.0"), "0018:01:00.0");    // Grace domain
  EXPECT_EQ(NormalizePciBusId("1a2b3:ff:1f.7"), "1a2b3:ff:1f.7");  // wide domain, every maximum
  EXPECT_EQ(NormalizePciBusId("0:0:0.0"), "0000:00:00.0");         // padded
  EXPECT_EQ(NormalizePciBusId("123456789:00:00.0"), "");           // domain over 8 digits
  EXPECT_EQ(NormalizePciBusId("0000:3b:20.0"), "");                // device > 0x1f
  EXPECT_EQ(NormalizePciBusId("0000:3b:00.8"), "");                // function > 7
  EXPECT_EQ(NormalizePciBusId("0000:3g:00.0"), "");
  EXPECT_EQ(NormalizePciBusId("0000::00.0"), "");
  EXPECT_EQ(NormalizePciBusId("1:2:3:4"), "");
  EXPECT_EQ(NormalizePciBusId(""), "");
}

TEST(GpuParsersTest, SysfsPciIdsAndClass) {
  auto gpu = ParsePciIds("0x10de\n", "0x2330\n", "0x030200\n");
  ASSERT_TRUE(gpu);
  EXPECT_TRUE(IsNvidiaGpu(*gpu));
  auto nvswitch = ParsePciIds("0x10de", "0x22a3", "0x068000");
  ASSERT_TRUE(nvswitch);
  EXPECT_FALSE(IsNvidiaGpu(*nvswitch));
  auto intel_vga = ParsePciIds("0x8086", "0x4680", "0x030000");
  ASSERT_TRUE(intel_vga);
  EXPECT_FALSE(IsNvidiaGpu(*intel_vga));
  EXPECT_FALSE(ParsePciIds("nvidia", "0x2330", "0x030200"));
  EXPECT_FALSE(ParsePciIds("0x10de", "0x2330", "0x1030200"));
}

TEST(GpuParsersTest, ModuleVersionUidAndPasswd) {
  EXPECT_EQ(ParseModuleVersion("550.54.15\n"), "550.54.15");
  EXPECT_EQ(ParseModuleVersion("550 54"), "");
  EXPECT_EQ(ParseModuleVersion(""), "");
  EXPECT_EQ(ParseStatusUid("Name:\tpython\nUid:\t1000\t1000\t1000\t1000\nGid:\t1\n"), 1000u);
  EXPECT_FALSE(ParseStatusUid("Name:\tx\nUid:\tabc\n"));
  EXPECT_FALSE(ParseStatusUid("Name:\tx\n"));
  const char* passwd =
      "root:x:0:0:root:/root:/bin/bash\nbroken line\nalice:x:1000:1000::/h:/bin/sh\n";
  EXPECT_EQ(PasswdUserName(passwd, 1000), "alice");
  EXPECT_EQ(PasswdUserName(passwd, 0), "root");
  EXPECT_EQ(PasswdUserName(passwd, 42), "");
}

}  // namespace
}  // namespace gpudoctor
