// GPU processes under `watch`: names and owners come from /proc once per process (kept for 10 s),
// and a pid /proc does not have (a process of another PID namespace: NVML names host pids) is not
// looked for again every tick, neither for its name nor for its CUDA runtime (maps).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "probes/cuda_runtime_scan.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

std::string Stat(int pid, const std::string& comm) {
  return std::to_string(pid) + " (" + comm +
         ") S 1 1 1 0 -1 4194560 0 0 0 0 10 5 0 0 20 0 1 0 100 0 0 18446744073709551615 0 0 0 0 "
         "0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
}

// A /proc with GPU process 4101 only (h100_busy lists 4101..4108, one per GPU).
struct ProcTree {
  testing::TempDir dir;
  ProcTree() {
    dir.Write("proc/4101/comm", "trainer\n");
    dir.Write("proc/4101/task/4101/stat", Stat(4101, "trainer"));
    dir.Write("proc/4101/maps", "7f-80 r-xp 0 0:0 1 /opt/conda/lib/libcudart.so.12.4.127\n");
    dir.Write("root/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n");
  }
  std::shared_ptr<Settings> WatchSettings() const {
    auto s = std::make_shared<Settings>();
    s->nvml_lib = testing::FakeNvmlLib();
    s->sample_ms = 50;
    s->fs = RootFs(dir.path() + "/proc", dir.path() + "/sys", dir.path() + "/root");
    return s;
  }
};

Snapshot Tick(const std::shared_ptr<Settings>& settings, std::shared_ptr<ProbeCarry>& carry) {
  ProbeContext ctx{settings, SteadyClock::now() + std::chrono::seconds(5)};
  ctx.continuous = true;
  ctx.previous = carry;
  ProbeOutput out = RunNvmlProbe(ctx);
  carry = out.next;
  Snapshot snap;
  if (out.apply) out.apply(snap);
  return snap;
}

const GpuProcess* Process(const Snapshot& snap, uint32_t pid) {
  for (const auto& g : snap.gpu.gpus) {
    if (!g.processes) continue;
    for (const auto& p : *g.processes) {
      if (p.pid == pid) return &p;
    }
  }
  return nullptr;
}

TEST(GpuProcessNamesTest, WatchNamesEachProcessOnceAndDoesNotLookForMissingPidsEveryTick) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/h100_busy.scenario").c_str(), 1);
  ProcTree proc;
  auto settings = proc.WatchSettings();
  std::shared_ptr<ProbeCarry> carry;
  Snapshot first = Tick(settings, carry);
  ASSERT_NE(carry, nullptr);
  const GpuProcess* named = Process(first, 4101);
  ASSERT_NE(named, nullptr);
  EXPECT_EQ(named->comm, "trainer");
  EXPECT_FALSE(named->user.empty());
  EXPECT_EQ(named->cuda_runtime, "12.4");
  const GpuProcess* missing = Process(first, 4102);
  ASSERT_NE(missing, nullptr);
  EXPECT_TRUE(missing->comm.empty());
  EXPECT_NE(missing->maps_note.find("no such process"), std::string::npos) << missing->maps_note;

  // /proc changes under the watch: 4101 renames itself, 4102 appears. Within the refresh time the
  // next tick answers from what it kept (no /proc read for either)...
  proc.dir.Write("proc/4101/comm", "renamed\n");
  proc.dir.Write("proc/4102/comm", "late\n");
  proc.dir.Write("proc/4102/task/4102/stat", Stat(4102, "late"));
  proc.dir.Write("proc/4102/maps", "7f-80 r-xp 0 0:0 1 /opt/conda/lib/libcudart.so.12.8.90\n");
  Snapshot second = Tick(settings, carry);
  EXPECT_EQ(Process(second, 4101)->comm, "trainer");
  EXPECT_EQ(Process(second, 4101)->cuda_runtime, "12.4");
  EXPECT_TRUE(Process(second, 4102)->comm.empty());
  EXPECT_TRUE(Process(second, 4102)->cuda_runtime.empty());

  // ...while a watch that kept nothing (and a check) reads /proc.
  std::shared_ptr<ProbeCarry> none;
  Snapshot fresh = Tick(settings, none);
  EXPECT_EQ(Process(fresh, 4101)->comm, "renamed");
  EXPECT_EQ(Process(fresh, 4102)->comm, "late");
  EXPECT_EQ(Process(fresh, 4102)->cuda_runtime, "12.8");
}

TEST(GpuProcessNamesTest, CudaRuntimeCacheRemembersAPidProcDoesNotHave) {
  testing::TempDir d;
  RootFs fs(d.path() + "/proc", d.path() + "/sys", d.path() + "/root");
  GpuLayerFacts facts;
  facts.driver.cuda_driver_version = 12080;
  GpuFacts g;
  g.processes = std::vector<GpuProcess>{{777, {}, "", ""}};
  facts.gpus.push_back(g);
  CudaRuntimeCache cache;
  ReadCudaRuntimes(fs, facts, SteadyClock::now() + std::chrono::seconds(5), &cache);
  EXPECT_NE((*facts.gpus[0].processes)[0].maps_note.find("no such process"), std::string::npos);
  ASSERT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.begin()->second.no_such_process);

  // Kept while NVML lists the pid with the same name: not looked for again.
  d.Write("proc/777/task/777/stat", Stat(777, "x"));
  d.Write("proc/777/maps", "7f-80 r-xp 0 0:0 1 /usr/lib/libcudart.so.12.2.140\n");
  (*facts.gpus[0].processes)[0] = GpuProcess{777, {}, "", ""};
  ReadCudaRuntimes(fs, facts, SteadyClock::now() + std::chrono::seconds(5), &cache);
  EXPECT_TRUE((*facts.gpus[0].processes)[0].cuda_runtime.empty());
  // Named now (its comm came back): another key, read afresh.
  (*facts.gpus[0].processes)[0] = GpuProcess{777, {}, "x", "root"};
  ReadCudaRuntimes(fs, facts, SteadyClock::now() + std::chrono::seconds(5), &cache);
  EXPECT_EQ((*facts.gpus[0].processes)[0].cuda_runtime, "12.2");
  EXPECT_TRUE((*facts.gpus[0].processes)[0].maps_note.empty());
  // A process that exits and leaves NVML's list leaves the cache.
  facts.gpus[0].processes->clear();
  ReadCudaRuntimes(fs, facts, SteadyClock::now() + std::chrono::seconds(5), &cache);
  EXPECT_TRUE(cache.empty());
}

}  // namespace
}  // namespace gpudoctor
