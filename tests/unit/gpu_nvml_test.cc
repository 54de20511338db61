// The NVML sampler, probes and GPU rules against the fake NVML library (tests/fake_nvml) and
// fixture sysfs trees (tests/fixtures/sysfs). No GPU or driver needed.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "finding_test_util.h"
#include "kmsg/log_scanner.h"
#include "nvml/loader.h"
#include "nvml/sampler.h"
#include "nvml/session.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "report/gpu_report.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {

namespace {

using testing::EvidenceOf;

using std::chrono::milliseconds;

GpuLayerFacts Sample(const std::string& scenario, const std::string& lib = testing::FakeNvmlLib(),
                     milliseconds timeout = milliseconds(2000)) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/" + scenario).c_str(), 1);
  NvmlSampleOptions o;
  o.library_path = lib;
  o.window = milliseconds(60);
  o.timeout = timeout;
  o.deadline = SteadyClock::now() + std::chrono::seconds(20);
  return SampleNvml(o);
}

// Snapshot with the NVML facts plus the pci_gpu probe run on a fixture sysfs tree (and a
// fixture procfs tree under tests/fixtures/procfs/, when named).
Snapshot WithSysfs(GpuLayerFacts facts, const std::string& sysfs, const std::string& procfs = "") {
  Snapshot snap;
  snap.gpu = std::move(facts);
  if (!sysfs.empty()) {
    auto settings = std::make_shared<Settings>();
    std::string proc =
        procfs.empty() ? "/nonexistent-proc" : testing::FixturePath("procfs/" + procfs);
    settings->fs = RootFs(proc, testing::FixturePath("sysfs/" + sysfs), "/");
    ProbeContext ctx{settings, SteadyClock::now() + std::chrono::seconds(5)};
    ProbeOutput out = RunPciGpuProbe(ctx);
    EXPECT_EQ(out.state, ProbeState::kOk) << out.reason;
    if (out.apply) out.apply(snap);
  }
  return snap;
}

std::vector<Finding> Judge(const Snapshot& snap) {
  std::vector<Finding> out;
  GpuRules(snap, Thresholds(), out);
  return out;
}

std::vector<Finding> ScenarioFindings(const std::string& scenario,
                                      const std::string& sysfs = "hgx_h100") {
  return Judge(WithSysfs(Sample(scenario), sysfs));
}

const Finding* FindId(const std::vector<Finding>& fs, std::string_view id, int gpu = -1) {
  for (const auto& f : fs) {
    if (f.id != id) continue;
    if (gpu >= 0 && !(f.gpu && f.gpu->index == gpu)) continue;
    return &f;
  }
  return nullptr;
}

std::string Ids(const std::vector<Finding>& fs) {
  std::string s;
  for (const auto& f : fs) {
    s += f.id;
    if (f.gpu && f.gpu->index) s += "@" + std::to_string(*f.gpu->index);
    s += " ";
  }
  return s;
}

TEST(GpuNvmlTest, HealthyNodeIsFullyReportedWithoutFindings) {
  GpuLayerFacts f = Sample("h100_healthy.scenario");
  ASSERT_EQ(f.nvml.state, NvmlState::kOk) << f.nvml.error;
  EXPECT_EQ(f.driver.driver_version, "580.95.05");
  EXPECT_EQ(f.driver.nvml_version, "13.580.95.05");
  EXPECT_EQ(f.driver.cuda_driver_version, 13000);
  ASSERT_EQ(f.gpus.size(), 8u);
  const GpuFacts& g = f.gpus[3];
  EXPECT_EQ(g.index, 3);
  EXPECT_EQ(g.uuid, "GPU-3e6d9f51-8074-4cad-afb1-4d5e6f708193");
  EXPECT_EQ(g.serial, "1654922000013");
  EXPECT_EQ(g.pci_bus_id, "0000:5d:00.0");
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.vbios, "96.00.74.00.0D");
  EXPECT_EQ(g.temp_c, 33);
  EXPECT_EQ(g.temp_slowdown_c, 87);
  EXPECT_EQ(g.temp_shutdown_c, 92);
  EXPECT_EQ(g.temp_memory_max_c, 95);
  EXPECT_EQ(g.memory_temp_c, 38);
  EXPECT_EQ(g.power_mw, 71000u);
  EXPECT_EQ(g.power_limit_mw, 700000u);
  EXPECT_EQ(g.memory_total_bytes, 85520809984u);
  EXPECT_EQ(g.max_sm_clock_mhz, 1980u);
  EXPECT_EQ(g.persistence_on, true);
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.pcie_gen, 5u);
  EXPECT_EQ(g.pcie_max_width, 16u);
  EXPECT_EQ(g.nvlink_count, 18);
  ASSERT_EQ(g.nvlinks.size(), 18u);
  EXPECT_EQ(g.nvlinks[17].active, true);
  EXPECT_EQ(g.remap_failed, false);
  ASSERT_TRUE(g.processes);
  EXPECT_TRUE(g.processes->empty());
  EXPECT_EQ(g.first.ecc_dbe_volatile, 0u);
  EXPECT_EQ(g.second.pcie_replays, 0u);
  ASSERT_TRUE(g.window_s);
  EXPECT_GE(*g.window_s, 0.05);
  EXPECT_FALSE(g.fan_pct);                // SXM boards have no fan: NOT_SUPPORTED
  EXPECT_FALSE(g.retired_pages_pending);  // no page retirement on H100
  EXPECT_FALSE(g.pcie_tx_bytes_per_s);    // idle GPU: throughput not measured
  EXPECT_TRUE(g.errors.empty()) << g.errors[0].call;
  EXPECT_TRUE(f.hangs.empty());

  auto findings = Judge(WithSysfs(f, "hgx_h100"));
  EXPECT_TRUE(findings.empty()) << Ids(findings);
}

TEST(GpuNvmlTest, CallBudgetPerGpu) {
  // At most 30 NVML calls per GPU per check, busy or idle (nvml_call_budget_test.cc: also on an
  // NVML without field values).
  for (const auto& [scenario, budget] :
       {std::pair<const char*, int>{"h100_healthy.scenario", 30}, {"h100_busy.scenario", 30}}) {
    GpuLayerFacts f = Sample(scenario);
    ASSERT_EQ(f.gpus.size(), 8u);
    for (const auto& g : f.gpus) {
      EXPECT_LE(g.nvml_calls, budget) << scenario << " GPU " << g.index;
    }
    // The fake's own counter agrees with ours.
    void* h = dlopen(testing::FakeNvmlLib().c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(h, nullptr);
    auto count = reinterpret_cast<int (*)(int)>(dlsym(h, "fake_nvml_call_count"));
    ASSERT_NE(count, nullptr);
    EXPECT_EQ(count(0), f.gpus[0].nvml_calls);
    int total = f.nvml.system_calls;
    for (const auto& g : f.gpus) total += g.nvml_calls;
    EXPECT_EQ(count(-1), total);
  }
}

TEST(GpuNvmlTest, BusyGpuMeasuresPcieThroughputWithinTheCallBudget) {
  // The throughput reads (TX, RX, 20 ms each) fit in a check's 30 calls and in a watch tick.
  GpuLayerFacts f = Sample("h100_busy.scenario");
  ASSERT_EQ(f.gpus.size(), 8u);
  EXPECT_EQ(f.gpus[0].pcie_tx_bytes_per_s, 1200000u * 1024);
  EXPECT_LE(f.gpus[0].nvml_calls, 30);
  NvmlSampleOptions o;
  o.library_path = testing::FakeNvmlLib();
  o.timeout = milliseconds(2000);
  NvmlSession session(o);
  GpuLayerFacts t = session.Sample(SteadyClock::now() + std::chrono::seconds(10));
  t = session.Sample(SteadyClock::now() + std::chrono::seconds(10));
  ASSERT_EQ(t.gpus.size(), 8u);
  EXPECT_EQ(t.gpus[0].pcie_tx_bytes_per_s, 1200000u * 1024);  // NVML KB/s -> B/s
  EXPECT_EQ(t.gpus[0].pcie_rx_bytes_per_s, 900000u * 1024);
  ASSERT_TRUE(f.gpus[0].processes);
  ASSERT_EQ(f.gpus[0].processes->size(), 1u);
  EXPECT_EQ((*f.gpus[0].processes)[0].pid, 4101u);
  EXPECT_EQ((*f.gpus[0].processes)[0].used_bytes, 70000000000u);
  EXPECT_TRUE(Judge(WithSysfs(f, "hgx_h100")).empty());
}

TEST(GpuNvmlTest, HungCallOnOneGpuIsNamedAndOthersAreReported) {
  TimePoint t0 = SteadyClock::now();
  GpuLayerFacts f = Sample("hang_gpu2.scenario", testing::FakeNvmlLib(), milliseconds(500));
  double s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  EXPECT_LT(s, 2.5);  // the 500 ms call timeout and slack, never the 20 s deadline
  ASSERT_EQ(f.hangs.size(), 1u);
  EXPECT_EQ(f.hangs[0].call, "nvmlDeviceGetTemperature");
  EXPECT_EQ(f.hangs[0].gpu_index, 2);
  EXPECT_EQ(f.hangs[0].uuid, "GPU-2d5c8e40-7f63-4b9c-9ea0-3c4d5e6f7082");
  EXPECT_EQ(f.hangs[0].pci_bus_id, "0000:3a:00.0");
  ASSERT_EQ(f.gpus.size(), 8u);
  EXPECT_TRUE(f.gpus[2].hung);
  EXPECT_EQ(f.gpus[2].serial, "1654922000012");
  for (int i : {0, 1, 3, 4, 5, 6, 7}) {
    EXPECT_FALSE(f.gpus[i].hung);
    EXPECT_EQ(f.gpus[i].temp_c, 33) << i;
    EXPECT_TRUE(f.gpus[i].second.pcie_replays) << i;
  }
  auto findings = Judge(WithSysfs(f, "hgx_h100"));
  const Finding* hang = FindId(findings, "driver.nvml_hang", 2);
  ASSERT_NE(hang, nullptr) << Ids(findings);
  EXPECT_NE(hang->summary.find("nvmlDeviceGetTemperature"), std::string::npos);
  EXPECT_NE(hang->summary.find("GPU 2"), std::string::npos);
  EXPECT_EQ(hang->gpu->serial, "1654922000012");
  EXPECT_FALSE(FindId(findings, "gpu.missing")) << Ids(findings);  // the hung GPU is known
}

TEST(GpuNvmlTest, CheckDeadlineBeforeNvmlTimeoutIsNotAHang) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/slow_handles.scenario").c_str(), 1);
  NvmlSampleOptions o;
  o.library_path = testing::FakeNvmlLib();
  o.window = milliseconds(60);
  o.timeout = milliseconds(5000);                       // --nvml-timeout 5
  o.deadline = SteadyClock::now() + milliseconds(400);  // the check ends long before
  TimePoint t0 = SteadyClock::now();
  GpuLayerFacts f = SampleNvml(o);
  EXPECT_LT(std::chrono::duration<double>(SteadyClock::now() - t0).count(), 1.2);
  ASSERT_EQ(f.nvml.state, NvmlState::kOk) << f.nvml.error;
  ASSERT_EQ(f.gpus.size(), 8u);
  for (const auto& g : f.gpus) {
    EXPECT_FALSE(g.hung) << g.index;
    EXPECT_TRUE(g.unfinished) << g.index;
  }
  ASSERT_EQ(f.hangs.size(), 8u);
  for (const auto& h : f.hangs) EXPECT_TRUE(h.check_deadline);
  auto findings = Judge(WithSysfs(f, "hgx_h100"));
  EXPECT_EQ(FindId(findings, "driver.nvml_hang"), nullptr) << Ids(findings);
  for (const auto& fi : findings) EXPECT_NE(fi.severity, Severity::kCrit) << fi.id;

  // The same slowness against a short NVML timeout is a hang.
  o.timeout = milliseconds(300);
  o.deadline = SteadyClock::now() + std::chrono::seconds(20);
  GpuLayerFacts hung = SampleNvml(o);
  ASSERT_EQ(hung.hangs.size(), 8u);
  EXPECT_FALSE(hung.hangs[0].check_deadline);
  EXPECT_TRUE(hung.gpus[0].hung);
  EXPECT_NE(FindId(Judge(WithSysfs(hung, "hgx_h100")), "driver.nvml_hang"), nullptr);
}

TEST(GpuNvmlTest, InitCutByCheckDeadlineIsUnfinishedNotHung) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/init_hang.scenario").c_str(), 1);
  NvmlSampleOptions o;
  o.library_path = testing::FakeNvmlLib();
  o.timeout = milliseconds(5000);
  o.deadline = SteadyClock::now() + milliseconds(200);
  GpuLayerFacts f = SampleNvml(o);
  EXPECT_EQ(f.nvml.state, NvmlState::kInitUnfinished);
  EXPECT_NE(f.nvml.error.find("not finished in the check's deadline"), std::string::npos);
  auto findings = Judge(WithSysfs(f, "hgx_h100"));
  EXPECT_EQ(FindId(findings, "driver.nvml_hang"), nullptr) << Ids(findings);
}

TEST(GpuNvmlTest, GpusTheDriverRefusesAreFindingsNotOk) {
  GpuLayerFacts f = Sample("gpu_refused.scenario");
  ASSERT_EQ(f.gpus.size(), 8u);
  auto findings = Judge(WithSysfs(f, "hgx_h100"));
  struct Want {
    int gpu;
    const char* id;
    Severity sev;
    int code;
    const char* step_word;  // in the first next step
  };
  for (const Want& w : {Want{1, "gpu.nvml_error", Severity::kCrit, 8, "power cables"},
                        Want{2, "gpu.nvml_error", Severity::kCrit, 11, "interrupt"},
                        Want{3, "gpu.nvml_error", Severity::kCrit, 14, "InfoROM"},
                        Want{4, "gpu.nvml_error", Severity::kCrit, 16, "nvidia-smi -r"},
                        Want{5, "driver.mismatch", Severity::kCrit, 18, "Reboot"},
                        Want{6, "driver.no_permission", Severity::kWarn, 4, "/dev/nvidia"},
                        Want{7, "driver.no_permission", Severity::kWarn, 17, "/dev/nvidia"}}) {
    const Finding* fi = FindId(findings, w.id, w.gpu);
    ASSERT_NE(fi, nullptr) << w.gpu << " " << Ids(findings);
    EXPECT_EQ(fi->severity, w.sev) << w.gpu;
    EXPECT_EQ(EvidenceOf<int64_t>(*fi, "nvml_return"), w.code) << w.gpu;
    EXPECT_EQ(EvidenceOf<std::string>(*fi, "call"), "nvmlDeviceGetHandleByIndex_v2");
    ASSERT_FALSE(fi->next_steps.empty());
    EXPECT_NE(fi->next_steps[0].find(w.step_word), std::string::npos) << fi->next_steps[0];
  }
  for (const auto& fi : findings) {
    EXPECT_FALSE(fi.gpu && fi.gpu->index == 0) << fi.id;  // the healthy GPU stays clean
    EXPECT_NE(fi.id, "gpu.missing");  // refused GPUs have no bus id: not counted as missing
  }
  std::string table = GpuTable(f, findings);
  auto row = [&](int i) {
    size_t at = table.find("\n" + std::to_string(i) + " ");
    return table.substr(at + 1, table.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(row(0).find(" ok"), std::string::npos) << table;
  for (int i = 1; i < 8; ++i) EXPECT_NE(row(i).find("ERROR"), std::string::npos) << table;
}

TEST(GpuNvmlTest, GpusHiddenByTheContainerToolkitAreNotMissing) {
  // A 1-GPU pod on the 8-GPU node: sysfs lists eight cards, the driver's procfs (masked by the
  // toolkit) and NVML only the one given to the container.
  Snapshot pod = WithSysfs(Sample("container_1gpu.scenario"), "hgx_h100", "nvidia_container_1gpu");
  ASSERT_TRUE(pod.gpu.driver_proc_gpus);
  EXPECT_EQ(*pod.gpu.driver_proc_gpus, std::vector<std::string>{"0000:18:00.0"});
  auto findings = Judge(pod);
  EXPECT_EQ(FindId(findings, "gpu.missing"), nullptr) << Ids(findings);
  int hidden = 0;
  for (const auto& f : findings) {
    if (f.id != "gpu.not_in_container") continue;
    ++hidden;
    EXPECT_EQ(f.severity, Severity::kInfo);
    EXPECT_NE(f.summary.find("not visible to NVML in this container"), std::string::npos);
  }
  EXPECT_EQ(hidden, 7) << Ids(findings);

  // On the host the driver's procfs lists the card NVML lost: that is missing.
  auto host = Judge(WithSysfs(Sample("gpu_missing.scenario"), "hgx_h100", "nvidia_host_8gpu"));
  const Finding* missing = FindId(host, "gpu.missing");
  ASSERT_NE(missing, nullptr) << Ids(host);
  EXPECT_EQ(EvidenceOf<std::string>(*missing, "pci_bus_id"), "0000:db:00.0");
  EXPECT_EQ(FindId(host, "gpu.not_in_container"), nullptr) << Ids(host);

  // No driver procfs at all: judged as before (missing).
  auto bare = ScenarioFindings("container_1gpu.scenario");
  int crit = 0;
  for (const auto& f : bare) crit += f.id == "gpu.missing";
  EXPECT_EQ(crit, 7) << Ids(bare);
}

TEST(GpuNvmlTest, AllNvLinksDownOnAnHgxNodeIsCritical) {
  // hgx_h100 has an NVSwitch (10de:22a3, class 0x068000) on the bus: the links must be up.
  Snapshot hgx = WithSysfs(Sample("nvlink_all_down.scenario"), "hgx_h100");
  EXPECT_EQ(hgx.gpu.pci_nvswitches, 1);
  auto findings = Judge(hgx);
  for (int i = 0; i < 8; ++i) {
    const Finding* f = FindId(findings, "gpu.nvlink.down", i);
    ASSERT_NE(f, nullptr) << i << " " << Ids(findings);
    EXPECT_EQ(f->severity, Severity::kCrit);
    EXPECT_EQ(EvidenceOf<int64_t>(*f, "nvlinks_active"), 0);
    EXPECT_EQ(EvidenceOf<int64_t>(*f, "pci_nvswitches"), 1);
    EXPECT_NE(f->next_steps[0].find("fabric manager"), std::string::npos);
  }
  // The same facts without the sysfs scan (no NVSwitch known, PCIe-card names): not judged.
  auto pcie = Judge(WithSysfs(Sample("nvlink_all_down.scenario"), ""));
  EXPECT_EQ(FindId(pcie, "gpu.nvlink.down"), nullptr) << Ids(pcie);
}

TEST(GpuNvmlTest, GpuLostAtHandleLookupAndInTheLogIsOneFinding) {
  // GPU 3 (0000:5d:00.0) is lost at the handle lookup, so NVML has no bus id for it; the log's
  // Xid 79 names the slot. GPU 5 is lost mid-sample (bus id known) and not in the log.
  Snapshot snap = WithSysfs(Sample("gpu_lost.scenario"), "hgx_h100");
  ASSERT_TRUE(snap.gpu.gpus[3].lost);
  ASSERT_TRUE(snap.gpu.gpus[3].pci_bus_id.empty());
  KernelLogScanner scanner;
  scanner.ScanText(
      "[ 88.1] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
      "off the bus.\n");
  snap.kernel = scanner.Finish();
  snap.kernel.source = "test";
  auto findings = EvaluateRules(snap, Thresholds());
  std::vector<const Finding*> lost;
  for (const auto& f : findings) {
    if (f.id == "gpu.lost") lost.push_back(&f);
  }
  ASSERT_EQ(lost.size(), 2u) << Ids(findings);
  const Finding* merged = FindId(findings, "gpu.lost", 3);
  ASSERT_NE(merged, nullptr) << Ids(findings);
  EXPECT_EQ(merged->gpu->pci_bus_id, "0000:5d:00.0");
  EXPECT_EQ(EvidenceOf<std::string>(*merged, "source"), "xid 79");
  EXPECT_NE(merged->summary.find("GPU 3"), std::string::npos) << merged->summary;
  EXPECT_NE(FindId(findings, "gpu.lost", 5), nullptr) << Ids(findings);
}

TEST(GpuNvmlTest, InitThatBlocksIsAbandonedOnTime) {
  TimePoint t0 = SteadyClock::now();
  GpuLayerFacts f = Sample("init_hang.scenario", testing::FakeNvmlLib(), milliseconds(300));
  EXPECT_LT(std::chrono::duration<double>(SteadyClock::now() - t0).count(), 1.0);
  EXPECT_EQ(f.nvml.state, NvmlState::kInitHung);
  ASSERT_EQ(f.hangs.size(), 1u);
  EXPECT_EQ(f.hangs[0].call, "nvmlInit_v2");
  auto findings = Judge(WithSysfs(f, "hgx_h100"));
  ASSERT_NE(FindId(findings, "driver.nvml_hang"), nullptr) << Ids(findings);
}

TEST(GpuNvmlTest, InitFailuresBecomeClearFindings) {
  auto mismatch = ScenarioFindings("init_mismatch.scenario", "hgx_h100_module_570");
  const Finding* m = FindId(mismatch, "driver.mismatch");
  ASSERT_NE(m, nullptr) << Ids(mismatch);
  EXPECT_EQ(m->severity, Severity::kCrit);
  EXPECT_EQ(EvidenceOf<std::string>(*m, "kernel_module_version"), "570.124.06");

  auto perm = ScenarioFindings("init_no_permission.scenario");
  ASSERT_NE(FindId(perm, "driver.no_permission"), nullptr) << Ids(perm);

  auto not_loaded = ScenarioFindings("driver_not_loaded.scenario");
  const Finding* nl = FindId(not_loaded, "driver.not_loaded");
  ASSERT_NE(nl, nullptr) << Ids(not_loaded);
  EXPECT_EQ(nl->severity, Severity::kCrit);
  EXPECT_EQ(EvidenceOf<int64_t>(*nl, "pci_nvidia_gpus"), 8);

  auto nogpu = ScenarioFindings("driver_not_loaded.scenario", "nogpu");
  ASSERT_NE(FindId(nogpu, "gpu.none"), nullptr) << Ids(nogpu);
}

TEST(GpuNvmlTest, NoLibraryMeansNoGpuOrDriverNotLoaded) {
  GpuLayerFacts f = Sample("h100_healthy.scenario", "/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(f.nvml.state, NvmlState::kLibraryMissing);
  auto plain = Judge(WithSysfs(f, "nogpu"));
  ASSERT_EQ(plain.size(), 1u) << Ids(plain);
  EXPECT_EQ(plain[0].id, "gpu.none");
  EXPECT_EQ(plain[0].severity, Severity::kInfo);
  auto cards = Judge(WithSysfs(f, "hgx_h100"));
  ASSERT_NE(FindId(cards, "driver.not_loaded"), nullptr) << Ids(cards);
}

TEST(GpuNvmlTest, LostGpus) {
  GpuLayerFacts f = Sample("gpu_lost.scenario");
  ASSERT_EQ(f.gpus.size(), 8u);
  EXPECT_TRUE(f.gpus[3].lost);
  EXPECT_EQ(f.gpus[3].lost_call, "nvmlDeviceGetHandleByIndex_v2");
  EXPECT_TRUE(f.gpus[5].lost);
  EXPECT_EQ(f.gpus[5].lost_call, "nvmlDeviceGetClockInfo");
  EXPECT_EQ(f.gpus[5].temp_c, 33);  // read before the loss
  auto findings = Judge(WithSysfs(f, "hgx_h100"));
  ASSERT_NE(FindId(findings, "gpu.lost", 3), nullptr) << Ids(findings);
  ASSERT_NE(FindId(findings, "gpu.lost", 5), nullptr) << Ids(findings);
  // GPU 3's bus id is unknown to NVML, so the PCI cross-check cannot blame a card.
  EXPECT_EQ(FindId(findings, "gpu.missing"), nullptr) << Ids(findings);
}

struct Expect {
  const char* scenario;
  const char* id;
  int gpu;  // -1: node-level
  Severity severity;
};

class GpuScenarioTest : public ::testing::TestWithParam<Expect> {};

TEST_P(GpuScenarioTest, ProducesTheFinding) {
  const Expect& e = GetParam();
  auto findings = ScenarioFindings(e.scenario);
  const Finding* f = FindId(findings, e.id, e.gpu);
  ASSERT_NE(f, nullptr) << e.scenario << ": " << Ids(findings);
  EXPECT_EQ(f->severity, e.severity) << f->summary;
  EXPECT_FALSE(f->evidence.empty());
  EXPECT_FALSE(f->next_steps.empty());
  if (e.gpu >= 0) {
    EXPECT_FALSE(f->gpu->serial.empty());
    EXPECT_FALSE(f->gpu->pci_bus_id.empty());
  }
  // Nothing else is wrong on these nodes.
  for (const auto& other : findings) {
    bool expected = other.id == e.id;
    EXPECT_TRUE(expected || other.severity == Severity::kInfo ||
                std::string(e.scenario) == "thermal.scenario")
        << e.scenario << ": unexpected " << other.id << ": " << other.summary;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Findings, GpuScenarioTest,
    ::testing::Values(Expect{"ecc_dbe.scenario", "gpu.ecc.dbe", 1, Severity::kCrit},
                      Expect{"ecc_sbe_rate.scenario", "gpu.ecc.sbe_rate", 4, Severity::kWarn},
                      Expect{"retired_pages.scenario", "gpu.retired_pages", 0, Severity::kCrit},
                      Expect{"remap_pending.scenario", "gpu.remap.pending", 6, Severity::kWarn},
                      Expect{"remap_failed.scenario", "gpu.remap.failed", 6, Severity::kCrit},
                      Expect{"thermal.scenario", "gpu.thermal", 2, Severity::kWarn},
                      Expect{"thermal.scenario", "gpu.thermal", 3, Severity::kCrit},
                      Expect{"power_brake.scenario", "gpu.power.brake", 5, Severity::kCrit},
                      Expect{"power_cap.scenario", "gpu.power.cap", 0, Severity::kInfo},
                      Expect{"hw_slowdown.scenario", "gpu.hw_slowdown", 4, Severity::kCrit},
                      Expect{"clocks_low.scenario", "gpu.clocks.low", 7, Severity::kWarn},
                      Expect{"pcie_degraded.scenario", "gpu.pcie.degraded", 1, Severity::kWarn},
                      Expect{"pcie_replays.scenario", "gpu.pcie.replays", 0, Severity::kWarn},
                      Expect{"nvlink_down.scenario", "gpu.nvlink.down", 7, Severity::kCrit},
                      Expect{"nvlink_errors.scenario", "gpu.nvlink.errors", 7, Severity::kCrit},
                      Expect{"persistence_off.scenario", "driver.persistence_off", -1,
                             Severity::kWarn},
                      Expect{"memory_full.scenario", "gpu.memory.full", 0, Severity::kWarn},
                      Expect{"util_low.scenario", "gpu.util.low", 3, Severity::kInfo},
                      Expect{"util_imbalance.scenario", "gpu.util.imbalance", -1, Severity::kWarn},
                      Expect{"driver_version.scenario", "driver.version", -1, Severity::kWarn},
                      Expect{"gpu_missing.scenario", "gpu.missing", -1, Severity::kCrit}));

TEST(GpuNvmlTest, PcieDegradedOnlyJudgesBusyGpus) {
  auto findings = ScenarioFindings("pcie_degraded.scenario");
  EXPECT_NE(FindId(findings, "gpu.pcie.degraded", 1), nullptr);
  EXPECT_EQ(FindId(findings, "gpu.pcie.degraded", 2), nullptr) << Ids(findings);
}

TEST(GpuNvmlTest, MissingCardIsNamedBySlot) {
  auto findings = ScenarioFindings("gpu_missing.scenario");
  const Finding* f = FindId(findings, "gpu.missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->gpu->pci_bus_id, "0000:db:00.0");
  EXPECT_EQ(EvidenceOf<std::string>(*f, "bound_driver"), "nvidia");
  auto unbound = ScenarioFindings("gpu_missing.scenario", "hgx_h100_unbound");
  const Finding* u = FindId(unbound, "gpu.missing");
  ASSERT_NE(u, nullptr) << Ids(unbound);
  EXPECT_EQ(EvidenceOf<std::string>(*u, "bound_driver"), "(none)");
}

TEST(GpuNvmlTest, FanScenario) {
  auto findings = ScenarioFindings("l40s_fan.scenario", "");
  const Finding* stopped = FindId(findings, "gpu.fan", 0);
  ASSERT_NE(stopped, nullptr) << Ids(findings);
  EXPECT_EQ(stopped->severity, Severity::kCrit);
  const Finding* full = FindId(findings, "gpu.fan", 1);
  ASSERT_NE(full, nullptr) << Ids(findings);
  EXPECT_EQ(full->severity, Severity::kWarn);
}

TEST(GpuNvmlTest, GarbageIsSkippedNeverAFault) {
  GpuLayerFacts f = Sample("garbage.scenario");
  ASSERT_EQ(f.gpus.size(), 8u);
  EXPECT_EQ(f.gpus[0].name, "");  // unterminated: dropped
  EXPECT_EQ(f.gpus[0].serial, "");
  EXPECT_EQ(f.gpus[0].uuid, "GPU-0b3a6c2e-5d41-4f7a-9c8e-1a2b3c4d5e60");
  EXPECT_FALSE(f.gpus[1].temp_c);
  ASSERT_FALSE(f.gpus[1].errors.empty());
  bool saw_unknown = false;
  for (const auto& e : f.gpus[1].errors) {
    saw_unknown |= e.text.find("unknown NVML error 12345") != std::string::npos;
  }
  EXPECT_TRUE(saw_unknown);
  EXPECT_FALSE(f.gpus[2].temp_c);
  EXPECT_FALSE(f.gpus[2].temp_slowdown_c);
  EXPECT_FALSE(f.gpus[3].util_gpu_pct);
  EXPECT_FALSE(f.gpus[3].memory_used_bytes);
  EXPECT_FALSE(f.gpus[4].first.clock_event_reasons);
  EXPECT_FALSE(f.gpus[4].sm_clock_mhz);
  EXPECT_FALSE(f.gpus[5].first.ecc_dbe_volatile);
  EXPECT_FALSE(f.gpus[5].first.ecc_sbe_volatile);
  EXPECT_FALSE(f.gpus[5].first.pcie_replays);
  EXPECT_FALSE(f.gpus[6].pcie_width);
  EXPECT_FALSE(f.gpus[6].pcie_gen);
  EXPECT_FALSE(f.gpus[6].power_mw);
  EXPECT_TRUE(f.gpus[7].pci_bus_id.empty());
  EXPECT_FALSE(f.gpus[7].nvlink_count);
  ASSERT_TRUE(f.gpus[7].processes);
  ASSERT_EQ(f.gpus[7].processes->size(), 1u);  // pid 0 dropped
  EXPECT_FALSE((*f.gpus[7].processes)[0].used_bytes);

  // GPU 1's utilisation answers NVML_ERROR_UNKNOWN (999), a real error code (nvidia-smi's ERR!):
  // that one is a finding; its temperature's code 12345 is outside NVML's enum, garbage.
  auto findings = Judge(WithSysfs(f, "hgx_h100"));
  for (const auto& x : findings) {
    if (x.id == "gpu.readings_failed" && x.gpu && x.gpu->index == 1) {
      EXPECT_EQ(x.summary.find("nvmlDeviceGetTemperature"), std::string::npos) << x.summary;
      continue;
    }
    ADD_FAILURE() << "false finding from garbage: " << x.id << ": " << x.summary;
  }
  EXPECT_NE(FindId(findings, "gpu.readings_failed", 1), nullptr);
}

TEST(GpuNvmlTest, MissingOptionalSymbolsSkipOnlyThoseFields) {
  GpuLayerFacts f = Sample("h100_healthy.scenario", testing::FakeNvmlLib(/*minimal=*/true));
  ASSERT_EQ(f.nvml.state, NvmlState::kOk) << f.nvml.error;
  ASSERT_EQ(f.gpus.size(), 8u);
  const GpuFacts& g = f.gpus[0];
  EXPECT_EQ(g.temp_c, 33);                       // nvmlDeviceGetTemperatureV
  EXPECT_EQ(g.memory_used_bytes, 579928064u);    // v1 memory struct
  EXPECT_EQ(g.first.clock_event_reasons, 0x1u);  // ...ThrottleReasons fallback
  EXPECT_EQ(g.first.ecc_dbe_volatile, 0u);       // nvmlDeviceGetTotalEccErrors
  EXPECT_EQ(g.first.pcie_replays, 0u);           // nvmlDeviceGetPcieReplayCounter
  EXPECT_EQ(g.remap_failed, false);              // nvmlDeviceGetRemappedRows
  EXPECT_EQ(g.power_mw, 71000u);                 // nvmlDeviceGetPowerUsage
  ASSERT_TRUE(g.processes);                      // v1 process struct
  EXPECT_EQ(g.ecc_enabled, true);                // nvmlDeviceGetEccMode
  // The per-link NVLink calls do not fit in a check's 30 calls: left out (a watch reads them at
  // the slow cadence, nvml_call_budget_test.cc).
  EXPECT_FALSE(g.nvlink_count);
  EXPECT_GT(g.reads_deferred, 0);
  EXPECT_FALSE(g.fan_pct);
  EXPECT_TRUE(g.errors.empty());
  auto findings = Judge(WithSysfs(f, "hgx_h100"));
  EXPECT_TRUE(findings.empty()) << Ids(findings);
}

TEST(GpuNvmlTest, XidEventsThroughTheEventApi) {
  GpuLayerFacts f = Sample("xid_events.scenario");
  ASSERT_EQ(f.nvml_xid_events.size(), 2u);
  EXPECT_EQ(f.nvml_xid_events[0].gpu_index, 2);
  EXPECT_EQ(f.nvml_xid_events[0].xid, 79u);
  EXPECT_EQ(f.nvml_xid_events[1].xid, 48u);
}

TEST(GpuLoaderTest, RequiredSymbolMissingFailsTheLoad) {
  auto r = nvml::LoadNvml("libm.so.6");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("'Init'"), std::string::npos) << r.status().message();
  auto missing = nvml::LoadNvml("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(GpuLoaderTest, VersionedSymbolsAndFallbacks) {
  auto full = nvml::LoadNvml(testing::FakeNvmlLib());
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ((*full)->names.DeviceGetPciInfo, "nvmlDeviceGetPciInfo_v3");
  EXPECT_EQ((*full)->names.DeviceGetComputeRunningProcesses,
            "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_EQ((*full)->names.DeviceGetCurrentClocksEventReasons,
            "nvmlDeviceGetCurrentClocksEventReasons");
  auto minimal = nvml::LoadNvml(testing::FakeNvmlLib(/*minimal=*/true));
  ASSERT_TRUE(minimal.ok());
  EXPECT_EQ((*minimal)->names.DeviceGetCurrentClocksEventReasons,
            "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_EQ((*minimal)->api.DeviceGetFieldValues, nullptr);
  EXPECT_EQ((*minimal)->api.DeviceGetComputeRunningProcesses, nullptr);
  EXPECT_NE((*minimal)->api.DeviceGetComputeRunningProcessesV1, nullptr);
}

TEST(GpuLoaderTest, ReturnCodeNames) {
  EXPECT_EQ(nvml::ReturnCodeName(15), "NVML_ERROR_GPU_IS_LOST");
  EXPECT_EQ(nvml::ReturnCodeName(30), "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED");
  EXPECT_EQ(nvml::ReturnCodeName(12345), "unknown NVML error 12345");
  EXPECT_EQ(nvml::ReturnCodeName(-7), "unknown NVML error -7");
}

}  // namespace
}  // namespace gpudoctor
