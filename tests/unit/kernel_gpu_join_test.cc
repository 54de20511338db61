// The kernel-log rules joined with the GPU layer's NVML facts: kernel PCI tuples name NVML GPUs,
// NVML Xid events surface when the log lacks them, and a lost GPU is reported once.
#include <gtest/gtest.h>

#include "kmsg/log_scanner.h"
#include "rules/engine.h"
#include "watch/finding_lifecycle.h"

namespace gpudoctor {
namespace {

Snapshot WithLog(std::string_view log) {
  KernelLogScanner scanner;
  scanner.ScanText(log);
  Snapshot snap;
  snap.kernel = scanner.Finish();
  snap.kernel.source = "test";
  return snap;
}

GpuFacts Gpu(int index, std::string bus, std::string uuid, std::string serial) {
  GpuFacts g;
  g.index = index;
  g.pci_bus_id = std::move(bus);
  g.uuid = std::move(uuid);
  g.serial = std::move(serial);
  g.name = "NVIDIA H100 80GB HBM3";
  return g;
}

std::vector<const Finding*> ById(const std::vector<Finding>& fs, std::string_view id) {
  std::vector<const Finding*> out;
  for (const auto& f : fs) {
    if (f.id == id) out.push_back(&f);
  }
  return out;
}

TEST(KernelGpuJoinTest, XidLineNamesTheNvmlGpu) {
  Snapshot snap = WithLog(
      "[ 12.5] NVRM: Xid (PCI:0000:3b:00): 48, pid=4242, name=python, An uncorrectable double "
      "bit error (DBE) has been detected on GPU (0x3b:0x0:0x0)\n");
  snap.gpu.gpus = {Gpu(0, "0000:18:00.0", "GPU-aaa", "S0"),
                   Gpu(3, "0000:3b:00.0", "GPU-ddd", "S3")};
  auto findings = EvaluateRules(snap, Thresholds());
  auto xids = ById(findings, "gpu.xid");
  ASSERT_EQ(xids.size(), 1u);
  ASSERT_TRUE(xids[0]->gpu);
  EXPECT_EQ(xids[0]->gpu->index, 3);
  EXPECT_EQ(xids[0]->gpu->uuid, "GPU-ddd");
  EXPECT_EQ(xids[0]->gpu->serial, "S3");
}

TEST(KernelGpuJoinTest, NvmlXidEventOnUnlistedDeviceMatchesTheLogByCode) {
  Snapshot snap = WithLog("[ 12.5] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=x, DBE\n");
  snap.gpu.gpus = {Gpu(0, "0000:18:00.0", "GPU-aaa", "S0")};
  snap.gpu.nvml_xid_events = {{std::nullopt, 48}, {std::nullopt, 31}};
  auto xids = ById(EvaluateRules(snap, Thresholds()), "gpu.xid");
  ASSERT_EQ(xids.size(), 2u);  // 48 from the log (matched by code), 31 from NVML only
  int from_nvml = 0;
  for (const Finding* f : xids) from_nvml += f->summary.find("(NVML event)") != std::string::npos;
  EXPECT_EQ(from_nvml, 1);
}

TEST(KernelGpuJoinTest, OldLogLineDoesNotHideANewNvmlEvent) {
  Snapshot snap = WithLog("[ 12.5] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=x, DBE\n");
  snap.gpu.gpus = {Gpu(3, "0000:3b:00.0", "GPU-ddd", "S3")};
  snap.gpu.nvml_xid_events = {{3, 48}};
  // The log line is dated an hour before the check.
  for (auto& e : snap.kernel.events) e.last.wall_us = int64_t{1'700'000'000} * 1'000'000;
  snap.time = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'003'600));
  auto xids = ById(EvaluateRules(snap, Thresholds()), "gpu.xid");
  ASSERT_EQ(xids.size(), 2u);
  // Dated during the check: it is the same event, reported once.
  for (auto& e : snap.kernel.events) e.last.wall_us = int64_t{1'700'003'590} * 1'000'000;
  EXPECT_EQ(ById(EvaluateRules(snap, Thresholds()), "gpu.xid").size(), 1u);
}

TEST(KernelGpuJoinTest, NvmlXidEventsAppearOnlyWhenTheLogLacksThem) {
  Snapshot snap = WithLog("[ 12.5] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=x, DBE\n");
  snap.gpu.gpus = {Gpu(0, "0000:18:00.0", "GPU-aaa", "S0"),
                   Gpu(3, "0000:3b:00.0", "GPU-ddd", "S3")};
  snap.gpu.nvml_xid_events = {{3, 48}, {0, 13}, {0, 13}};
  auto findings = EvaluateRules(snap, Thresholds());
  auto xids = ById(findings, "gpu.xid");
  ASSERT_EQ(xids.size(), 2u);  // 48 on GPU 3 from the log, 13 on GPU 0 from NVML only
  const Finding* nvml_only = nullptr;
  for (const Finding* f : xids) {
    if (f->gpu && f->gpu->index == 0) nvml_only = f;
  }
  ASSERT_NE(nvml_only, nullptr);
  bool saw_source = false, saw_count = false;
  for (const auto& e : nvml_only->evidence) {
    if (e.name == "source") saw_source = std::get<std::string>(e.value) == "nvml events";
    if (e.name == "count") saw_count = std::get<int64_t>(e.value) == 2;
  }
  EXPECT_TRUE(saw_source);
  EXPECT_TRUE(saw_count);
}

TEST(KernelGpuJoinTest, LostGpuReportedOnceWhenNvmlAlsoSawIt) {
  const char* log =
      "[ 99.1] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
      "off the bus.\n";
  Snapshot from_log = WithLog(log);
  EXPECT_EQ(ById(EvaluateRules(from_log, Thresholds()), "gpu.lost").size(), 1u);

  Snapshot both = WithLog(log);
  GpuFacts lost = Gpu(3, "0000:3b:00.0", "GPU-ddd", "S3");
  lost.lost = true;
  lost.lost_call = "nvmlDeviceGetTemperature";
  both.gpu.gpus = {lost};
  EXPECT_EQ(ById(EvaluateRules(both, Thresholds()), "gpu.lost").size(), 1u);
}

// The driver's NV_ERR_GPU_IS_LOST assertions name no bus: one gpu.lost without a GPU, unless a
// lost GPU is already named (an Xid 79 line, NVML).
TEST(KernelGpuJoinTest, BuslessLostAssertionIsOneFindingUnlessALostGpuIsNamed) {
  const char* assert_line =
      "[ 98.1] NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus "
      "[NV_ERR_GPU_IS_LOST] (0x0000000F) returned from rmStatus @ kernel_ce_gv100.c:106\n";
  const auto alone_all =
      EvaluateRules(WithLog(std::string(assert_line) + assert_line), Thresholds());
  auto alone = ById(alone_all, "gpu.lost");
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_FALSE(alone[0]->gpu.has_value());
  EXPECT_NE(alone[0]->summary.find("NV_ERR_GPU_IS_LOST"), std::string::npos);

  const std::string with_xid =
      std::string(assert_line) +
      "[ 99.1] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
      "off the bus.\n";
  const auto named_all = EvaluateRules(WithLog(with_xid), Thresholds());
  auto named = ById(named_all, "gpu.lost");
  ASSERT_EQ(named.size(), 1u);
  ASSERT_TRUE(named[0]->gpu.has_value());
  EXPECT_EQ(named[0]->gpu->pci_bus_id, "0000:3b:00.0");

  Snapshot nvml = WithLog(assert_line);
  GpuFacts lost = Gpu(3, "0000:3b:00.0", "GPU-ddd", "S3");
  lost.lost = true;
  lost.lost_call = "nvmlDeviceGetTemperature";
  nvml.gpu.gpus = {lost};
  const auto nvml_all = EvaluateRules(nvml, Thresholds());
  auto by_nvml = ById(nvml_all, "gpu.lost");
  ASSERT_EQ(by_nvml.size(), 1u);
  EXPECT_TRUE(by_nvml[0]->gpu.has_value());
}

// NV_ERR_RESET_REQUIRED without an Xid: gpu.reset_required; with an Xid 154 in the log, that
// finding already names the recovery action and the GPU.
TEST(KernelGpuJoinTest, ResetRequiredAssertionUnlessAnXid154SaysIt) {
  const char* assert_line =
      "[ 98.1] NVRM: GPU0 nvAssertOkFailedNoLog: Assertion failed: Reset required "
      "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874\n";
  const auto reset_all = EvaluateRules(WithLog(assert_line), Thresholds());
  auto alone = ById(reset_all, "gpu.reset_required");
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0]->action, Action::kResetGpu);
  EXPECT_NE(alone[0]->summary.find("GPU0 (the driver's numbering"), std::string::npos);
  const std::string with_154 =
      "[ 97.1] NVRM: Xid (PCI:0000:0d:00): 154, GPU recovery action changed from 0x0 (None) to "
      "0x1 (GPU Reset Required)\n" +
      std::string(assert_line);
  EXPECT_TRUE(ById(EvaluateRules(WithLog(with_154), Thresholds()), "gpu.reset_required").empty());
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

bool HasStep(const Finding& f, std::string_view text) {
  for (const auto& s : f.next_steps) {
    if (s.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(KernelXidStepsTest, NextStepsFitTheXid) {
  Snapshot snap = WithLog(
      "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 31, pid=7, name=python, MMU Fault\n"
      "[ 2.0] NVRM: Xid (PCI:0000:5d:00): 48, pid=8, name=python, DBE\n");
  auto findings = EvaluateRules(snap, Thresholds());
  auto xids = ById(findings, "gpu.xid");
  ASSERT_EQ(xids.size(), 2u);
  for (const Finding* f : xids) {
    bool memory = f->subject.find("5d") != std::string::npos;
    EXPECT_EQ(HasStep(*f, "Memory Xids"), memory) << f->summary;
    EXPECT_TRUE(HasStep(*f, memory ? "Xid 48:" : "Xid 31:")) << f->summary;
    EXPECT_FALSE(HasStep(*f, "Several processes")) << "one process only: " << f->summary;
  }
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// Drivers print "GPU Board Serial Number: 0" (or all zeros) on boards without one: that is no
// serial, so two such cards in one log are two cards in the report and in the watch's episodes.
TEST(KernelGpuJoinTest, PlaceholderSerialsInTheLogNeverMergeCards) {
  Snapshot snap = WithLog(
      "[ 10.0] NVRM: GPU at PCI:0000:18:00: GPU-aaaaaaaa-0000-0000-0000-000000000001\n"
      "[ 10.0] NVRM: GPU Board Serial Number: 0\n"
      "[ 10.1] NVRM: GPU at PCI:0000:3b:00: GPU-bbbbbbbb-0000-0000-0000-000000000002\n"
      "[ 10.1] NVRM: GPU Board Serial Number: 0000000000000\n"
      "[ 12.5] NVRM: Xid (PCI:0000:18:00): 48, pid=1, name=x, DBE\n"
      "[ 12.6] NVRM: Xid (PCI:0000:3b:00): 48, pid=2, name=y, DBE\n");
  for (const auto& g : snap.kernel.gpus) EXPECT_EQ(g.serial, "") << g.uuid;
  std::vector<Finding> findings = EvaluateRules(snap, Thresholds());
  auto xids = ById(findings, "gpu.xid");
  ASSERT_EQ(xids.size(), 2u);
  for (const Finding* f : xids) {
    if (f->gpu) {
      EXPECT_EQ(f->gpu->serial, "");
    }
    for (const auto& e : f->evidence) EXPECT_NE(e.name, "serial") << f->summary;
  }
  EXPECT_NE(FindingKey(*xids[0]), FindingKey(*xids[1]));
}

// A finding built elsewhere with a placeholder serial is keyed by its bus, not by "serial=0".
TEST(KernelGpuJoinTest, LifecycleKeyIgnoresPlaceholderSerials) {
  Finding a, b;
  a.id = b.id = "gpu.xid";
  a.gpu = GpuRef{};
  a.gpu->serial = "0";
  a.gpu->pci_bus_id = "0000:18:00.0";
  b.gpu = a.gpu;
  b.gpu->pci_bus_id = "0000:3b:00.0";
  EXPECT_NE(FindingKey(a), FindingKey(b));
}

}  // namespace
}  // namespace gpudoctor
