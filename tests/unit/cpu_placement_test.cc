#include "watch/cpu_placement.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/strings.h"

namespace gpudoctor {
namespace {

cpu_set_t Cpus(std::initializer_list<int> cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  return set;
}

std::vector<int> Members(const cpu_set_t& set) {
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

// Records every set applied; answers `ok`.
struct FakeApply {
  std::vector<std::vector<int>> applied;
  bool ok = true;
  CpuPlacement::Apply fn() {
    return [this](const cpu_set_t& set) {
      applied.push_back(Members(set));
      return ok || CPU_COUNT(&set) > 1;  // refuses one CPU only when !ok
    };
  }
};

TEST(CpuPlacementTest, FirstTickKeepsTheThreadsOnTheCpuItRunsOn) {
  FakeApply a;
  CpuPlacement p(true, Cpus({0, 1, 2, 3}), {}, a.fn(), [] { return 2; });
  EXPECT_EQ(p.pinned_cpu(), -1);
  std::string line = p.OnTick(0);
  EXPECT_NE(line.find("CPU 2"), std::string::npos) << line;
  ASSERT_EQ(a.applied.size(), 1u);
  EXPECT_EQ(a.applied[0], std::vector<int>({2}));
  EXPECT_EQ(p.pinned_cpu(), 2);
  // On-time ticks change nothing.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(p.OnTick(0.001), "");
  EXPECT_EQ(a.applied.size(), 1u);
}

TEST(CpuPlacementTest, ACpuOutsideTheAllowedOnesIsNeverChosen) {
  FakeApply a;
  CpuPlacement p(true, Cpus({1, 3}), {}, a.fn(), [] { return 0; });
  p.OnTick(0);
  ASSERT_EQ(a.applied.size(), 1u);
  EXPECT_EQ(a.applied[0], std::vector<int>({1}));
  FakeApply b;
  CpuPlacement unknown(true, Cpus({5, 7}), {}, b.fn(), [] { return -1; });
  unknown.OnTick(0);
  ASSERT_EQ(b.applied.size(), 1u);
  EXPECT_EQ(b.applied[0], std::vector<int>({5}));
}

TEST(CpuPlacementTest, LateTicksInARowLetTheThreadsRunOnEveryAllowedCpu) {
  FakeApply a;
  CpuPlacementPolicy policy;  // 50 ms late, 2 ticks in a row
  CpuPlacement p(true, Cpus({0, 1, 2}), policy, a.fn(), [] { return 1; });
  p.OnTick(0);
  // One late tick between on-time ones: still one CPU.
  EXPECT_EQ(p.OnTick(0.2), "");
  EXPECT_EQ(p.OnTick(0.0), "");
  EXPECT_EQ(p.OnTick(0.2), "");
  EXPECT_EQ(p.OnTick(0.049), "");  // just under the bar: on time
  EXPECT_EQ(p.pinned_cpu(), 1);
  EXPECT_EQ(a.applied.size(), 1u);
  EXPECT_EQ(p.OnTick(0.05), "");
  std::string line = p.OnTick(0.3);
  EXPECT_NE(line.find("late"), std::string::npos) << line;
  EXPECT_EQ(p.pinned_cpu(), -1);
  ASSERT_EQ(a.applied.size(), 2u);
  EXPECT_EQ(a.applied[1], std::vector<int>({0, 1, 2}));
}

TEST(CpuPlacementTest, OnTimeTicksAfterWideningKeepTheThreadsOnOneCpuAgain) {
  FakeApply a;
  CpuPlacementPolicy policy;
  policy.on_time_ticks_to_pin = 3;
  int cpu = 0;
  CpuPlacement p(true, Cpus({0, 1}), policy, a.fn(), [&cpu] { return cpu; });
  p.OnTick(0);
  p.OnTick(1);
  p.OnTick(1);
  ASSERT_EQ(p.pinned_cpu(), -1);
  cpu = 1;  // the scheduler moved the loop's thread meanwhile
  EXPECT_EQ(p.OnTick(0), "");
  EXPECT_EQ(p.OnTick(0), "");
  EXPECT_EQ(p.OnTick(0.5), "");  // a late tick starts the count again
  EXPECT_EQ(p.OnTick(0), "");
  EXPECT_EQ(p.OnTick(0), "");
  EXPECT_EQ(p.pinned_cpu(), -1);
  EXPECT_NE(p.OnTick(0), "");
  EXPECT_EQ(p.pinned_cpu(), 1);
  EXPECT_EQ(a.applied.back(), std::vector<int>({1}));
}

TEST(CpuPlacementTest, DisabledOrASingleAllowedCpuNeverChangesAnything) {
  FakeApply a;
  CpuPlacement off(false, Cpus({0, 1}), {}, a.fn(), [] { return 0; });
  CpuPlacement single(true, Cpus({3}), {}, a.fn(), [] { return 3; });
  for (double late : {0.0, 1.0, 1.0, 1.0, 0.0}) {
    EXPECT_EQ(off.OnTick(late), "");
    EXPECT_EQ(single.OnTick(late), "");
  }
  EXPECT_TRUE(a.applied.empty());
  EXPECT_EQ(off.pinned_cpu(), -1);
  EXPECT_EQ(single.pinned_cpu(), -1);
}

TEST(CpuPlacementTest, AReloadThatTurnsItOffWidensAtOnceAndOnPinsAtTheNextTick) {
  FakeApply a;
  CpuPlacement p(true, Cpus({0, 1}), {}, a.fn(), [] { return 0; });
  p.OnTick(0);
  ASSERT_EQ(p.pinned_cpu(), 0);
  p.SetEnabled(false);
  EXPECT_EQ(p.pinned_cpu(), -1);
  ASSERT_EQ(a.applied.size(), 2u);
  EXPECT_EQ(a.applied[1], std::vector<int>({0, 1}));
  EXPECT_EQ(p.OnTick(0), "");
  p.SetEnabled(true);
  EXPECT_NE(p.OnTick(0), "");
  EXPECT_EQ(p.pinned_cpu(), 0);
}

TEST(CpuPlacementTest, AThreadThatRefusesOneCpuLeavesEveryThreadOnTheAllowedCpus) {
  FakeApply a;
  a.ok = false;
  CpuPlacement p(true, Cpus({0, 1}), {}, a.fn(), [] { return 1; });
  std::string line = p.OnTick(0);
  EXPECT_NE(line.find("any allowed CPU"), std::string::npos) << line;
  EXPECT_EQ(p.pinned_cpu(), -1);
  ASSERT_EQ(a.applied.size(), 2u);
  EXPECT_EQ(a.applied[1], std::vector<int>({0, 1}));
}

// Every thread of this process, as the kernel lists them, with the CPUs each may run on.
std::vector<std::vector<int>> ThreadCpus() {
  std::vector<std::vector<int>> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (const dirent* e = readdir(dir)) {
    auto tid = ParseInt64(e->d_name);
    if (!tid) continue;
    cpu_set_t set;
    if (sched_getaffinity(static_cast<pid_t>(*tid), sizeof set, &set) == 0) {
      out.push_back(Members(set));
    }
  }
  closedir(dir);
  return out;
}

TEST(CpuPlacementTest, EveryThreadOfTheProcessFollowsAndNewThreadsInheritTheCpu) {
  const cpu_set_t allowed = CpuPlacement::AllowedCpus();
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "needs two CPUs";
  // Whatever happens below, every thread may use every allowed CPU again afterwards.
  struct Restore {
    cpu_set_t set;
    ~Restore() { CpuPlacement::ApplyToAllThreads(set); }
  } restore{allowed};

  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::vector<std::thread> threads;
  auto park = [&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
  };
  for (int i = 0; i < 3; ++i) threads.emplace_back(park);

  CpuPlacementPolicy policy;
  policy.late_ticks_to_widen = 1;
  CpuPlacement p(true, allowed, policy);
  p.OnTick(0);
  const int cpu = p.pinned_cpu();
  ASSERT_GE(cpu, 0);
  std::thread later(park);  // started by a thread kept on one CPU: it inherits that CPU
  std::vector<std::vector<int>> pinned = ThreadCpus();
  ASSERT_GE(pinned.size(), 5u);  // this one, three parked, the later one
  for (const auto& cpus : pinned) EXPECT_EQ(cpus, std::vector<int>({cpu}));

  p.OnTick(1.0);
  EXPECT_EQ(p.pinned_cpu(), -1);
  for (const auto& cpus : ThreadCpus()) EXPECT_EQ(cpus, Members(allowed));

  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  later.join();
}

}  // namespace
}  // namespace gpudoctor
