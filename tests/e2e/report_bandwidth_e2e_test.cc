// `gpudoctor report bandwidth` as a user runs it: a history file with a planted full hour (written
// through the store as watch writes it), then the binary's text, JSON, exit codes and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "facts/snapshot.h"
#include "metrics/metric_table.h"
#include "store/history_store.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using testing::RunGpudoctor;
using testing::TempDir;

constexpr double kBps = 1e6 / 8;

// Three hours ending 10 minutes ago, a tick every 30 s; eth0 sends 90 Mb/s in the middle hour
// ("seeder" 70 of them), 10 Mb/s otherwise; loopback busy all the time (never billed).
void PlantHistory(const std::string& db, int64_t end) {
  StoreOptions o;
  o.max_queued_ticks = 1 << 20;
  auto store = HistoryStore::Open(db, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (int64_t t = end - 3 * 3600; t < end; t += 30) {
    bool full = t >= end - 2 * 3600 && t < end - 3600;
    Snapshot snap;
    NicFacts eth;
    eth.name = "eth0";
    eth.speed_mbps = 1000;
    eth.tx_bytes_per_s = (full ? 90 : 10) * kBps;
    eth.rx_bytes_per_s = 1 * kBps;
    NicFacts lo;
    lo.name = "lo";
    lo.tx_bytes_per_s = lo.rx_bytes_per_s = 900 * kBps;
    snap.network.nics = std::vector<NicFacts>{eth, lo};
    SocketTrafficFacts s;
    ProcessTraffic seeder;
    seeder.pid = 42;
    seeder.comm = "seeder";
    seeder.tx_bytes_per_s = (full ? 70 : 1) * kBps;
    seeder.rx_bytes_per_s = 0.0;
    s.processes.push_back(seeder);
    snap.network.sockets = s;
    auto tick = std::make_shared<TickResult>();
    tick->unix_ms = t * 1000;
    tick->points = FlattenSnapshot(snap);
    (*store)->Append(tick);
  }
  (*store)->Flush();
  (*store)->Close();
}

TEST(ReportBandwidthE2eTest, TextJsonAndErrors) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  const int64_t end = static_cast<int64_t>(std::time(nullptr)) / 300 * 300 - 600;
  PlantHistory(db, end);

  auto text =
      RunGpudoctor({"report", "bandwidth", "--db", db, "--since", "6h", "--plan-mbps", "100"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("95th percentile billing"));
  EXPECT_THAT(text.out, HasSubstr("eth0: plan 100 Mb/s (--plan-mbps), link 1000 Mb/s"));
  EXPECT_THAT(text.out, HasSubstr("95th percentile 90.0 Mb/s"));
  EXPECT_THAT(text.out, HasSubstr("top senders: seeder 77.8%"));
  EXPECT_THAT(text.out, HasSubstr("split that traffic onto its own line: seeder"));
  EXPECT_THAT(text.out, ::testing::Not(HasSubstr("lo:")));

  auto json = RunGpudoctor({"report", "bandwidth", "--db", db, "--since", "6h", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["nics"].size(), 1u);
  EXPECT_EQ(j["nics"][0]["plan_source"], "link speed");
  EXPECT_EQ(j["nics"][0]["tx"]["p95_mbps"], 90);
  EXPECT_EQ(j["nics"][0]["advice"]["kind"], "ok");  // 1000 Mb/s covers 90 × 1.25

  auto none = RunGpudoctor({"report", "bandwidth", "--db", db, "--since", "9h", "--until", "8h"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_THAT(none.out, HasSubstr("no NIC traffic stored in this period"));

  auto bad_nic = RunGpudoctor({"report", "bandwidth", "--db", db, "--nic", "eth7"});
  EXPECT_EQ(bad_nic.exit_code, 3);
  EXPECT_THAT(bad_nic.err, HasSubstr("NIC 'eth7' has no traffic stored in this period (stored: "));
  auto no_subject = RunGpudoctor({"report", "--db", db});
  EXPECT_EQ(no_subject.exit_code, 3);
  EXPECT_THAT(no_subject.err, HasSubstr("gpudoctor report bandwidth"));
  auto bad_plan = RunGpudoctor({"report", "bandwidth", "--db", db, "--plan-mbps", "0"});
  EXPECT_EQ(bad_plan.exit_code, 3);
  EXPECT_THAT(bad_plan.err, HasSubstr("--plan-mbps"));
  auto missing = RunGpudoctor({"report", "bandwidth", "--db", dir.path() + "/none.db"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_THAT(missing.err, HasSubstr("none.db"));
}

}  // namespace
}  // namespace gpudoctor
