// End-to-end: `gpudoctor check` on node_exporter's own fixture tree (collector/fixtures: proc/
// and sys.ttar, Apache-2.0, see tests/fixtures/node_exporter/NOTICE), a tree written by other
// people for another tool. Every probe must end ok or skipped, and what it read must match the
// tree: a file beside the interfaces in class/net is not a NIC, PID 1's mount table is used.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "test_util.h"

namespace gpudoctor::testing {
namespace {

class NodeExporterFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string fixtures = FixturePath("node_exporter");
    RunResult x = RunProgram(
        {"/usr/bin/python3", fixtures + "/ttar_extract.py", fixtures + "/sys.ttar", tmp_.path()});
    ASSERT_EQ(x.exit_code, 0) << x.err;
    RunResult cp = RunProgram({"/bin/cp", "-a", fixtures + "/proc", tmp_.path() + "/proc"});
    ASSERT_EQ(cp.exit_code, 0) << cp.err;
    tmp_.MakeDir("root");
    RunResult r = RunGpudoctor(
        {"check", "--json", "--sample-ms", "200", "--deadline", "5", "--path.procfs",
         tmp_.path() + "/proc", "--path.sysfs", tmp_.path() + "/sys", "--path.rootfs",
         tmp_.path() + "/root", "--kmsg-file", "/dev/null", "--skip-probes", "reachability"},
        std::chrono::seconds(20));
    ASSERT_LE(r.exit_code, 2) << r.err;
    report_ = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(report_.is_discarded()) << r.out << r.err;
  }

  TempDir tmp_;
  nlohmann::json report_;
};

TEST_F(NodeExporterFixtureTest, EveryProbeIsOkOrSkipped) {
  ASSERT_FALSE(report_["probes"].empty());
  for (const auto& p : report_["probes"]) {
    std::string status = p["status"];
    EXPECT_TRUE(status == "ok" || status == "skipped") << p.dump();
  }
  for (const auto& f : report_["findings"]) {
    // Nothing in this tree is a fault we know; a probe failure would surface as gpudoctor.*.
    EXPECT_NE(std::string(f["id"]).rfind("gpudoctor.", 0), 0u) << f.dump();
  }
}

TEST_F(NodeExporterFixtureTest, ReadsTheTreeNotTheHost) {
  // MemTotal: 3742148 kB in the fixture's meminfo.
  EXPECT_EQ(report_["resources"]["memory"]["total_bytes"], 3742148ull * 1024);
  EXPECT_EQ(report_["resources"]["cpu"]["logical_cores"], 8);
  std::set<std::string> nics;
  for (const auto& n : report_["network"]["nics"]) nics.insert(n["name"]);
  // class/net/bonding_masters is a plain file the bonding driver adds, not an interface.
  EXPECT_EQ(nics, (std::set<std::string>{"bond0", "dmz", "eth0", "int"}));
  std::set<std::string> mounts;
  for (const auto& m : report_["resources"]["mounts"]) mounts.insert(m["mount_point"]);
  // PID 1's table (the host's namespace), not the reader's (self -> 10, which has NFS mounts).
  EXPECT_TRUE(mounts.count("/")) << report_["resources"]["mounts"].dump();
  EXPECT_TRUE(mounts.count("/boot")) << report_["resources"]["mounts"].dump();
  EXPECT_FALSE(mounts.count("/mnt/nfs/test")) << report_["resources"]["mounts"].dump();
  // InfiniBand: mlx4_0 ports 1 and 2 (40 Gb/s, ACTIVE) with their error counters.
  const auto& ib = report_["network"]["ib_ports"];
  ASSERT_TRUE(ib.is_array()) << report_["network"].dump();
  bool saw_mlx4_port1 = false;
  for (const auto& p : ib) {
    if (p["device"] != "mlx4_0" || p["port"] != 1) continue;
    saw_mlx4_port1 = true;
    EXPECT_EQ(p["state"], "ACTIVE");
    EXPECT_EQ(p["active"], true);
    EXPECT_DOUBLE_EQ(p["rate_gbps"].get<double>(), 40.0);
    EXPECT_TRUE(p.contains("link_downed")) << p.dump();
  }
  EXPECT_TRUE(saw_mlx4_port1) << ib.dump();
}

}  // namespace
}  // namespace gpudoctor::testing
