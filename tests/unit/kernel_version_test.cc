// Kernel release ordering (dpkg / sort -V) and flavours (src/parsers/kernel_version.h).
#include "parsers/kernel_version.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

TEST(KernelVersionTest, NumericRunsCompareAsNumbers) {
  EXPECT_GT(CompareKernelVersions("6.1.0-27-amd64", "6.1.0-9-amd64"), 0);
  EXPECT_LT(CompareKernelVersions("5.15.0-91-generic", "5.15.0-125-generic"), 0);
  EXPECT_GT(CompareKernelVersions("6.8.0-45-generic", "6.5.0-45-generic"), 0);
  EXPECT_EQ(CompareKernelVersions("6.1.0-27-amd64", "6.1.0-27-amd64"), 0);
  EXPECT_GT(CompareKernelVersions("5.14.0-427.13.1.el9_4.x86_64", "5.14.0-362.8.1.el9_3.x86_64"),
            0);
  EXPECT_GT(CompareKernelVersions("6.10.0", "6.9.12"), 0);
}

TEST(KernelVersionTest, TildeSortsBeforeTheEndAndLettersBeforeSymbols) {
  EXPECT_LT(CompareKernelVersions("6.1~rc1", "6.1"), 0);
  EXPECT_LT(CompareKernelVersions("6.1a", "6.1+"), 0);
  EXPECT_LT(CompareKernelVersions("6.1", "6.1a"), 0);
  EXPECT_EQ(CompareKernelVersions("6.01", "6.1"), 0);
}

TEST(KernelVersionTest, Flavours) {
  EXPECT_EQ(KernelFlavour("6.1.0-27-amd64"), "amd64");
  // A cloud or rt kernel is another flavour: never "newer" than the running generic one.
  EXPECT_EQ(KernelFlavour("6.1.0-27-cloud-amd64"), "cloud-amd64");
  EXPECT_EQ(KernelFlavour("6.1.0-28-rt-amd64"), "rt-amd64");
  EXPECT_EQ(KernelFlavour("5.15.0-125-generic"), "generic");
  EXPECT_EQ(KernelFlavour("6.8.0-45-lowlatency"), "lowlatency");
  EXPECT_EQ(KernelFlavour("5.14.0-427.13.1.el9_4.x86_64"), "x86_64");
  EXPECT_EQ(KernelFlavour("6.6.30"), "");
}

}  // namespace
}  // namespace gpudoctor
