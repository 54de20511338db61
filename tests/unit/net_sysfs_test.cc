// NIC and InfiniBand sysfs readers and the rules that judge them, on two fixture states of a
// sysfs tree (tests/fixtures/net/sysfs_t0 → sysfs_t1, one second apart):
// eth0 sends 1.2 GB in the second on a 10 Gb/s link (96%), eth1 gains 5 rx errors and flaps
// twice, eth2 is up without carrier, veth0 is virtual (speed -1), lo is ignored;
// mlx5_0/1 is ACTIVE with symbol errors rising, mlx5_1/1 is stuck in INIT.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/root_fs.h"
#include "core/settings.h"
#include "core/strings.h"
#include "net/infiniband_sysfs.h"
#include "net/nic_sysfs.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {

namespace {

RootFs FixtureFs(const char* state) {
  std::string sys = testing::FixturePath(std::string("net/sysfs_") + state);
  return RootFs("/nonexistent-proc", sys, "/nonexistent-root");
}

std::vector<NicFacts> FixtureNics() {
  auto a = ReadNicSamples(FixtureFs("t0"));
  auto b = ReadNicSamples(FixtureFs("t1"));
  EXPECT_TRUE(a.ok() && b.ok());
  return NicFactsBetween(*a, *b, 1.0);
}

const NicFacts& Nic(const std::vector<NicFacts>& nics, const std::string& name) {
  for (const auto& n : nics) {
    if (n.name == name) return n;
  }
  ADD_FAILURE() << "no " << name;
  return nics.front();
}

std::vector<const Finding*> WithId(const std::vector<Finding>& all, const std::string& id) {
  std::vector<const Finding*> out;
  for (const auto& f : all) {
    if (f.id == id) out.push_back(&f);
  }
  return out;
}

TEST(NicSysfsTest, ReadsStateCountersAndRates) {
  auto nics = FixtureNics();
  ASSERT_EQ(nics.size(), 5u);
  const NicFacts& eth0 = Nic(nics, "eth0");
  EXPECT_TRUE(eth0.physical);
  EXPECT_EQ(*eth0.admin_up, true);
  EXPECT_EQ(*eth0.speed_mbps, 10000);
  EXPECT_DOUBLE_EQ(*eth0.tx_bytes_per_s, 1.2e9);
  EXPECT_DOUBLE_EQ(*eth0.rx_bytes_per_s, 1000);
  EXPECT_EQ(*eth0.carrier_changes_delta, 0u);
  const NicFacts& eth1 = Nic(nics, "eth1");
  EXPECT_EQ(*eth1.rx_errors_delta, 5u);
  EXPECT_EQ(*eth1.rx_dropped_delta, 0u);
  EXPECT_EQ(*eth1.carrier_changes_delta, 2u);
  const NicFacts& eth2 = Nic(nics, "eth2");
  EXPECT_EQ(eth2.operstate, "down");
  EXPECT_EQ(*eth2.carrier, false);
  const NicFacts& veth = Nic(nics, "veth0");
  EXPECT_FALSE(veth.physical);
  EXPECT_FALSE(veth.speed_mbps);  // -1 means unknown, never a number
}

TEST(NicSysfsTest, CountersGoingBackwardsGiveNoDelta) {
  NicSample a, b;
  a.name = b.name = "eth9";
  a.stats[kRxBytes] = 100;
  b.stats[kRxBytes] = 10;  // driver reset
  a.stats[kRxErrors] = 5;
  b.stats[kRxErrors] = 1;
  auto f = NicFactsBetween({a}, {b}, 1.0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0].rx_bytes_per_s);
  EXPECT_FALSE(f[0].rx_errors_delta);
  auto first = NicFactsBetween({}, {b}, 1.0);  // no first sample: no rates at all
  EXPECT_FALSE(first[0].rx_bytes_per_s);
}

// Under watch the NIC probe keeps one NicReader: its files stay open and read fresh values,
// interfaces come and go, and the speed is read again only when the link state moved or 30 s
// passed.
TEST(NicSysfsTest, KeptReaderReadsFreshValuesAndTheSpeedOnLinkChangesOnly) {
  testing::TempDir dir;
  std::filesystem::copy(testing::FixturePath("net/sysfs_t1"), dir.path() + "/sys",
                        std::filesystem::copy_options::recursive);
  RootFs fs("/nonexistent-proc", dir.path() + "/sys", "/nonexistent-root");
  NicReader reader;
  const TimePoint t0 = SteadyClock::now();
  auto a = reader.Read(fs, t0);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->size(), 5u);
  EXPECT_EQ(reader.speed_reads(), 5u);
  // The same facts as a one-off read.
  auto once = ReadNicSamples(fs);
  ASSERT_TRUE(once.ok());
  auto facts = NicFactsBetween({}, *a, 0), once_facts = NicFactsBetween({}, *once, 0);
  ASSERT_EQ(facts.size(), once_facts.size());
  for (size_t i = 0; i < facts.size(); ++i) {
    EXPECT_EQ(facts[i].name, once_facts[i].name);
    EXPECT_EQ(facts[i].physical, once_facts[i].physical);
    EXPECT_EQ(facts[i].operstate, once_facts[i].operstate);
    EXPECT_EQ(facts[i].carrier, once_facts[i].carrier);
    EXPECT_EQ(facts[i].speed_mbps, once_facts[i].speed_mbps);
    EXPECT_EQ(facts[i].rx_bytes, once_facts[i].rx_bytes);
    EXPECT_EQ(facts[i].carrier_changes, once_facts[i].carrier_changes);
  }

  // Counters rewritten in place are read anew; the speed is not read again.
  dir.Write("sys/class/net/eth0/statistics/rx_bytes", "999\n");
  dir.Write("sys/class/net/eth0/speed", "25000\n");
  auto b = reader.Read(fs, t0 + std::chrono::seconds(1));
  ASSERT_TRUE(b.ok());
  const NicSample* eth0 = nullptr;
  for (const auto& n : *b) {
    if (n.name == "eth0") eth0 = &n;
  }
  ASSERT_NE(eth0, nullptr);
  EXPECT_EQ(eth0->stats.at(kRxBytes), 999u);
  EXPECT_EQ(*eth0->speed_mbps, 10000);
  EXPECT_EQ(reader.speed_reads(), 5u);

  // A carrier flap on eth1 re-reads eth1's speed only.
  dir.Write("sys/class/net/eth1/carrier_changes", "8\n");
  ASSERT_TRUE(reader.Read(fs, t0 + std::chrono::seconds(2)).ok());
  EXPECT_EQ(reader.speed_reads(), 6u);

  // 30 s on, every speed is read again: eth0's new one shows.
  auto c = reader.Read(fs, t0 + std::chrono::seconds(32));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(reader.speed_reads(), 11u);
  for (const auto& n : *c) {
    if (n.name == "eth0") {
      EXPECT_EQ(*n.speed_mbps, 25000);
    }
  }

  // An interface that goes away leaves the samples; a new one joins them.
  std::filesystem::remove_all(dir.path() + "/sys/class/net/veth0");
  dir.Write("sys/class/net/veth9/operstate", "up\n");
  dir.Write("sys/class/net/veth9/statistics/tx_bytes", "5\n");
  auto d = reader.Read(fs, t0 + std::chrono::seconds(33));
  ASSERT_TRUE(d.ok());
  std::vector<std::string> names;
  for (const auto& n : *d) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"eth0", "eth1", "eth2", "lo", "veth9"}));
  EXPECT_EQ(d->back().stats.at(kTxBytes), 5u);
  EXPECT_EQ(d->back().operstate, "up");
}

TEST(NicSysfsTest, LinkSpeedParsing) {
  EXPECT_EQ(*ParseLinkSpeedMbps("25000\n"), 25000);
  EXPECT_FALSE(ParseLinkSpeedMbps("-1"));
  EXPECT_FALSE(ParseLinkSpeedMbps("0"));
  EXPECT_FALSE(ParseLinkSpeedMbps("4294967295000"));
  EXPECT_FALSE(ParseLinkSpeedMbps("fast"));
}

// The first run of a watch has no previous sample: link state, speed and totals now (eth2's
// missing carrier is a finding from the first tick), no rates or deltas until the next run.
TEST(NicProbeTest, FirstWatchRunReportsLevelsWithoutRates) {
  auto settings = std::make_shared<Settings>();
  settings->fs = FixtureFs("t1");
  ProbeContext ctx{settings, SteadyClock::now() + std::chrono::seconds(5)};
  ctx.continuous = true;
  ProbeOutput out = RunNicProbe(ctx);
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  EXPECT_NE(out.next, nullptr);
  Snapshot snap;
  out.apply(snap);
  ASSERT_TRUE(snap.network.nics.has_value());
  for (const NicFacts& n : *snap.network.nics) {
    EXPECT_FALSE(n.rx_bytes_per_s) << n.name;
    EXPECT_FALSE(n.carrier_changes_delta) << n.name;
  }
  auto findings = EvaluateRules(snap, Thresholds());
  auto link = WithId(findings, "net.link");
  ASSERT_EQ(link.size(), 1u);
  EXPECT_EQ(link[0]->subject, "eth2");
  EXPECT_TRUE(WithId(findings, "net.nic.saturated").empty());
}

TEST(NicRulesTest, SaturatedErrorsAndLinkFindings) {
  Snapshot snap;
  snap.network.nics = FixtureNics();
  auto findings = EvaluateRules(snap, Thresholds());
  auto sat = WithId(findings, "net.nic.saturated");
  ASSERT_EQ(sat.size(), 1u);
  EXPECT_EQ(sat[0]->subject, "eth0");
  EXPECT_EQ(sat[0]->severity, Severity::kWarn);  // 96%: above 90, below 98
  auto err = WithId(findings, "net.nic.errors");
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(err[0]->subject, "eth1");
  auto link = WithId(findings, "net.link");
  ASSERT_EQ(link.size(), 2u);
  EXPECT_EQ(link[0]->subject, "eth1");
  EXPECT_EQ(link[0]->severity, Severity::kWarn);  // flapping
  EXPECT_EQ(link[1]->subject, "eth2");
  EXPECT_EQ(link[1]->severity, Severity::kCrit);  // down
  // The saturated NIC makes the localisation verdict "bandwidth".
  auto loc = WithId(findings, "net.localize");
  ASSERT_EQ(loc.size(), 1u);
  EXPECT_EQ(std::get<std::string>(loc[0]->evidence[0].value), "bandwidth");
  // Raising the threshold above 96% silences saturation and the verdict.
  Thresholds t;
  t.Set("net.nic.saturated", "warn_util_pct", 97);
  auto quiet = EvaluateRules(snap, t);
  EXPECT_TRUE(WithId(quiet, "net.nic.saturated").empty());
  EXPECT_TRUE(WithId(quiet, "net.localize").empty());
}

TEST(InfinibandSysfsTest, PortsCountersAndRules) {
  auto a = ReadIbPorts(FixtureFs("t0"));
  auto b = ReadIbPorts(FixtureFs("t1"));
  ASSERT_TRUE(a.ok() && b.ok());
  auto ports = IbPortFactsBetween(*a, *b, 1.0);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].device, "mlx5_0");
  EXPECT_EQ(ports[0].state, "ACTIVE");
  EXPECT_EQ(ports[0].phys_state, "LinkUp");
  EXPECT_DOUBLE_EQ(*ports[0].rate_gbps, 200);
  EXPECT_EQ(ports[0].counters_delta.at("symbol_error"), 4u);
  EXPECT_EQ(ports[0].counters.count("port_rcv_errors"), 0u);  // garbage is absent, not 0
  EXPECT_EQ(ports[1].state, "INIT");

  Snapshot snap;
  snap.network.ib_ports = ports;
  auto findings = EvaluateRules(snap, Thresholds());
  auto port = WithId(findings, "net.ib.port");
  ASSERT_EQ(port.size(), 1u);
  EXPECT_EQ(port[0]->subject, "mlx5_1/1");
  EXPECT_EQ(port[0]->severity, Severity::kCrit);
  auto errors = WithId(findings, "net.ib.errors");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]->subject, "mlx5_0/1");
  EXPECT_EQ(errors[0]->severity, Severity::kWarn);
}

// Under watch the port files stay open: a counter on sysfs (here a real sysfs attribute the fixture
// links to, /sys/class/net/lo/mtu, which reads one number) is read through the kept descriptor,
// with the file's current content each time; the fixture's regular files are opened afresh (a
// test replaces them), and a check keeps nothing.
TEST(IbReaderTest, KeepsSysfsPortFilesOpenUnderWatch) {
  auto mtu = RootFs::ReadFile("/sys/class/net/lo/mtu", 64);
  ASSERT_TRUE(mtu.ok()) << mtu.status().ToString();
  const uint64_t lo_mtu = *ParseUint64(Trim(*mtu));
  testing::TempDir dir;
  dir.Write("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  dir.Write("class/infiniband/mlx5_0/ports/1/counters/link_downed", "3\n");
  dir.Symlink("/sys/class/net/lo/mtu", "class/infiniband/mlx5_0/ports/1/counters/symbol_error");
  RootFs fs("/nonexistent-proc", dir.path(), "/nonexistent-root");

  IbReader watch(/*keep_files=*/true);
  for (int i = 0; i < 2; ++i) {
    auto ports = watch.Read(fs);
    ASSERT_TRUE(ports.ok()) << ports.status().ToString();
    ASSERT_EQ(ports->size(), 1u);
    EXPECT_EQ((*ports)[0].state, "ACTIVE");
    EXPECT_EQ((*ports)[0].counters.at("symbol_error"), lo_mtu);
    EXPECT_EQ((*ports)[0].counters.at("link_downed"), 3u + i);
    EXPECT_FALSE((*ports)[0].rate_gbps);  // no rate file: absent, as before
    EXPECT_EQ(watch.open_files(), 1u);    // the sysfs counter only
    dir.Write("class/infiniband/mlx5_0/ports/1/counters/link_downed", "4\n");
  }
  IbReader check(/*keep_files=*/false);
  ASSERT_TRUE(check.Read(fs).ok());
  EXPECT_EQ(check.open_files(), 0u);
}

// The kept listing follows the tree: a device that appears is read on the next Read, a port whose
// files are gone under an unchanged device list is listed again in the same Read (no stale port),
// and a host whose devices all went is not_found again.
TEST(IbReaderTest, SeesDevicesAndPortsComeAndGo) {
  testing::TempDir dir;
  dir.Write("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  dir.Write("class/infiniband/mlx5_0/ports/1/counters/symbol_error", "1\n");
  RootFs fs("/nonexistent-proc", dir.path(), "/nonexistent-root");
  IbReader reader(/*keep_files=*/true);
  auto first = reader.Read(fs);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);

  dir.Write("class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n");
  dir.Write("class/infiniband/mlx5_0/ports/2/state", "4: ACTIVE\n");  // same device list
  auto second = reader.Read(fs);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 3u);  // the device list changed: everything listed again
  EXPECT_EQ((*second)[2].device, "mlx5_1");
  EXPECT_EQ((*second)[2].state, "DOWN");

  std::filesystem::remove_all(dir.path() + "/class/infiniband/mlx5_0/ports/1");
  auto third = reader.Read(fs);
  ASSERT_TRUE(third.ok());
  ASSERT_EQ(third->size(), 2u);
  EXPECT_EQ((*third)[0].port, 2);
  EXPECT_EQ((*third)[1].device, "mlx5_1");
  EXPECT_EQ(ReadIbPorts(fs)->size(), 2u);  // what a fresh read sees

  std::filesystem::remove_all(dir.path() + "/class/infiniband");
  auto gone = reader.Read(fs);
  EXPECT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
}

// Under `watch` a host without InfiniBand is looked at once per kAbsentSourceRecheck: the runs in
// between report the same skip from the carry without reading sysfs (a device created meanwhile
// is not seen yet); the first run after the recheck time sees it (its first sample), and a
// `check` never carries the absence.
TEST(InfinibandProbeTest, WatchLooksForAbsentDevicesAgainOnlyAfterTheRecheckTime) {
  testing::TempDir dir;
  dir.Write("class/net/lo/operstate", "unknown\n");
  auto settings = std::make_shared<Settings>();
  settings->fs = RootFs("/nonexistent-proc", dir.path(), "/nonexistent-root");
  ProbeContext ctx{settings, SteadyClock::now() + std::chrono::seconds(5)};
  ctx.continuous = true;
  ProbeOutput absent = RunInfinibandProbe(ctx);
  ASSERT_EQ(absent.state, ProbeState::kSkipped);
  EXPECT_NE(absent.reason.find("no InfiniBand/RDMA devices"), std::string::npos) << absent.reason;
  auto* carry = dynamic_cast<AbsentSourceCarry*>(absent.next.get());
  ASSERT_NE(carry, nullptr);

  dir.Write("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  dir.Write("class/infiniband/mlx5_0/ports/1/counters/symbol_error", "1\n");
  ctx.previous = absent.next;
  ProbeOutput again = RunInfinibandProbe(ctx);
  EXPECT_EQ(again.state, ProbeState::kSkipped);
  EXPECT_EQ(again.reason, absent.reason);
  EXPECT_EQ(again.next, absent.next);  // the same carry: not looked at

  carry->looked_at = SteadyClock::now() - kAbsentSourceRecheck;
  ProbeOutput seen = RunInfinibandProbe(ctx);
  EXPECT_EQ(seen.reason, "first sample of a watch: rates from the next tick");
  EXPECT_EQ(dynamic_cast<AbsentSourceCarry*>(seen.next.get()), nullptr);
  ctx.previous = seen.next;
  ProbeOutput rates = RunInfinibandProbe(ctx);
  ASSERT_EQ(rates.state, ProbeState::kOk) << rates.reason;
  Snapshot snap;
  rates.apply(snap);
  ASSERT_TRUE(snap.network.ib_ports.has_value());
  EXPECT_EQ(snap.network.ib_ports->size(), 1u);

  // The devices go: absent again, carried again.
  std::filesystem::remove_all(dir.path() + "/class/infiniband");
  ctx.previous = rates.next;
  EXPECT_NE(dynamic_cast<AbsentSourceCarry*>(RunInfinibandProbe(ctx).next.get()), nullptr);

  ProbeContext check{settings, SteadyClock::now() + std::chrono::seconds(5)};
  settings->sample_ms = 1;
  ProbeOutput once = RunInfinibandProbe(check);
  EXPECT_EQ(once.state, ProbeState::kSkipped);
  EXPECT_EQ(once.next, nullptr);
}

TEST(InfinibandSysfsTest, NoDevicesIsNotFound) {
  auto r = ReadIbPorts(RootFs("/p", "/nonexistent-sys", "/r"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(InfinibandSysfsTest, StateAndRateParsing) {
  EXPECT_EQ(ParseIbStateName("4: ACTIVE\n"), "ACTIVE");
  EXPECT_EQ(ParseIbStateName("3: Disabled"), "Disabled");
  EXPECT_EQ(ParseIbStateName("x: ACTIVE"), "");
  EXPECT_EQ(ParseIbStateName("1: DO\x01WN"), "");
  EXPECT_DOUBLE_EQ(*ParseIbRateGbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_FALSE(ParseIbRateGbps("fast"));
  EXPECT_FALSE(ParseIbRateGbps("-5 Gb/sec"));
}

}  // namespace
}  // namespace gpudoctor
