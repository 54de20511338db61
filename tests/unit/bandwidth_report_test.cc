// `gpudoctor report bandwidth`: recorded histories with planted traffic (a generator below) where
// the 95th percentile, the peak, the share above 80% of the plan, the top sender and the advice
// are known exactly; an empty history; a history with gaps; the senders stored per tick (the 5
// largest, by name) through a real history file; the API's parameters.
#include "bandwidth/bandwidth_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <set>

#include "metrics/metric_table.h"
#include "serve/bandwidth_route.h"
#include "serve/http_server.h"
#include "store/history_store.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr int64_t kT0 = 1'699'999'800;  // a multiple of 300: bucket i starts at kT0 + 300 i
constexpr int kBuckets = 288;           // one day of 5-minute periods
constexpr double kBps = 1e6 / 8;        // bytes per second of 1 Mb/s

// The planted day on eth0 (plan 50 Mb/s): every 30 s a point (10 per bucket). Bucket i sends
// 0.1 i Mb/s, except buckets 200-229, full at 48 Mb/s; one point of 150 Mb/s in bucket 30 (the
// peak). Receive: 5 Mb/s throughout. Sockets samples every 30 s: in the full buckets "backup"
// sends 32 Mb/s (dominant) or 16 Mb/s, "nginx" 16 Mb/s, "ssh" 0.48 Mb/s in every other sample;
// outside them a decoy "rsync" at 25 Mb/s that must not count.
struct Planted {
  bool dominant = true;
  std::set<int> missing;  // buckets with no point at all (the watch was not running)
};

BandwidthInput Generate(const Planted& p) {
  BandwidthInput in;
  in.since_unix_s = kT0;
  in.until_unix_s = kT0 + kBuckets * 300;
  Series tx{"gpudoctor_nic_transmit_bytes_per_second", -1, "nic=eth0", {}};
  Series rx{"gpudoctor_nic_receive_bytes_per_second", -1, "nic=eth0", {}};
  Series speed{"gpudoctor_nic_speed_bytes_per_second", -1, "nic=eth0", {}};
  std::map<std::string, Series> ptx;
  auto proc = [&](const std::string& name, int64_t t, double mbps) {
    Series& s = ptx[name];
    s.metric = "gpudoctor_process_transmit_bytes_per_second";
    s.gpu = -1;
    s.labels = "process=" + name;
    s.points.emplace_back(t, mbps * kBps);
  };
  for (int i = 0; i < kBuckets; ++i) {
    if (p.missing.count(i)) continue;
    bool full = i >= 200 && i < 230;
    for (int k = 0; k < 10; ++k) {
      int64_t t = kT0 + i * 300 + k * 30;
      double mbps = full ? 48 : 0.1 * i;
      if (i == 30 && k == 0) mbps = 150;
      tx.points.emplace_back(t, mbps * kBps);
      rx.points.emplace_back(t, 5 * kBps);
      speed.points.emplace_back(t, 10000 * kBps);
      if (full) {
        proc("backup", t, p.dominant ? 32 : 16);
        proc("nginx", t, 16);
        if (k % 2 == 0) proc("ssh", t, 0.48);
      } else {
        proc("rsync", t, 25);
      }
    }
  }
  in.nic_tx = {tx};
  in.nic_rx = {rx};
  in.nic_speed = {speed};
  for (auto& [name, s] : ptx) in.proc_tx.push_back(s);
  return in;
}

BandwidthOptions Plan50() {
  BandwidthOptions o;
  o.plan_mbps_flag = 50;
  return o;
}

TEST(BandwidthReportTest, BillingPercentileAndLadder) {
  // 20 values 1..20: ceil(0.95 * 20) = 19 → the 19th smallest; the top one is discarded.
  std::vector<double> v;
  for (int i = 20; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(BillingPercentile95(v), 19);
  EXPECT_EQ(BillingPercentile95({7}), 7);
  EXPECT_FALSE(BillingPercentile95({}));
  EXPECT_EQ(PlanCovering(60), 100);
  EXPECT_EQ(PlanCovering(100), 100);
  EXPECT_EQ(PlanCovering(100.5), 200);
  EXPECT_FALSE(PlanCovering(200000));
}

TEST(BandwidthReportTest, PlantedDayWithADominantSender) {
  BandwidthReport r = ComputeBandwidthReport(Generate({}), Plan50());
  ASSERT_EQ(r.nics.size(), 1u);
  const NicBandwidth& n = r.nics[0];
  EXPECT_EQ(n.nic, "eth0");
  EXPECT_EQ(n.plan_mbps, 50);
  EXPECT_EQ(n.plan_source, "--plan-mbps");
  EXPECT_EQ(n.link_mbps, 10000);
  EXPECT_EQ(n.tx.buckets, kBuckets);
  // 288 averages: ceil(0.95 * 288) = 274th smallest; 258 are below 28.8, the 30 full ones 48.
  EXPECT_DOUBLE_EQ(n.tx.p95_mbps, 48);
  EXPECT_DOUBLE_EQ(n.tx.peak_mbps, 150);
  EXPECT_EQ(n.tx.peak_at_s, kT0 + 30 * 300);
  ASSERT_TRUE(n.tx.above_80_pct);
  EXPECT_DOUBLE_EQ(*n.tx.above_80_pct, 100.0 * 30 / 288);
  EXPECT_EQ(n.tx.full_buckets, 30);
  EXPECT_EQ(n.tx.full_buckets_with_senders, 30);
  ASSERT_EQ(n.tx.top.size(), 3u);  // rsync sent only outside the full periods
  EXPECT_EQ(n.tx.top[0].process, "backup");
  EXPECT_NEAR(n.tx.top[0].share_pct, 100.0 * 32 / 48, 1e-9);
  EXPECT_NEAR(n.tx.top[0].bytes, 30 * 300 * 32 * kBps, 1e-3);
  EXPECT_EQ(n.tx.top[1].process, "nginx");
  EXPECT_NEAR(n.tx.top[1].share_pct, 100.0 * 16 / 48, 1e-9);
  EXPECT_EQ(n.tx.top[2].process, "ssh");
  EXPECT_NEAR(n.tx.top[2].share_pct, 100.0 * 0.24 / 48, 1e-9);  // in half of the samples
  EXPECT_DOUBLE_EQ(n.rx.p95_mbps, 5);
  EXPECT_EQ(n.rx.full_buckets, 0);
  // p95 48 × 1.25 = 60 > 50; backup holds 66.7% of the full periods' bytes: split.
  EXPECT_EQ(n.advice.kind, "split");
  EXPECT_EQ(n.advice.sender, "backup");
  EXPECT_DOUBLE_EQ(n.advice.need_mbps, 60);
  EXPECT_EQ(n.advice.upgrade_to_mbps, 100);
  std::string text = BandwidthReportText(r);
  EXPECT_THAT(text, HasSubstr("95th percentile billing"));
  EXPECT_THAT(text, HasSubstr("95th percentile 48.0 Mb/s, peak 150 Mb/s"));
  EXPECT_THAT(text, HasSubstr("split that traffic onto its own line: backup sent 66.7%"));
  EXPECT_THAT(text, HasSubstr("otherwise upgrade to 100 Mb/s"));
  nlohmann::ordered_json j = BandwidthReportJson(r);
  EXPECT_EQ(j["nics"][0]["tx"]["p95_mbps"], 48);
  EXPECT_EQ(j["nics"][0]["tx"]["top"][0]["process"], "backup");
  EXPECT_EQ(j["nics"][0]["advice"]["kind"], "split");
  EXPECT_EQ(j["nics"][0]["advice"]["upgrade_to_mbps"], 100);
  EXPECT_FALSE(j["nics"][0].contains("points"));
  nlohmann::ordered_json with = BandwidthReportJson(r, true);
  ASSERT_EQ(with["nics"][0]["points"].size(), static_cast<size_t>(kBuckets));
  EXPECT_EQ(with["nics"][0]["points"][200][0], kT0 + 200 * 300);
  EXPECT_EQ(with["nics"][0]["points"][200][1], 48);
  EXPECT_EQ(with["nics"][0]["points"][200][2], 5);
}

TEST(BandwidthReportTest, NoDominantSenderMeansUpgrade) {
  Planted p;
  p.dominant = false;
  BandwidthReport r = ComputeBandwidthReport(Generate(p), Plan50());
  ASSERT_EQ(r.nics.size(), 1u);
  const NicBandwidth& n = r.nics[0];
  EXPECT_EQ(n.tx.top[0].process, "backup");  // ties broken by name: backup before nginx
  EXPECT_NEAR(n.tx.top[0].share_pct, 100.0 * 16 / 48, 1e-9);
  EXPECT_EQ(n.advice.kind, "upgrade");
  EXPECT_EQ(n.advice.upgrade_to_mbps, 100);
  EXPECT_THAT(n.advice.text, HasSubstr("upgrade to 100 Mb/s"));
  // A plan that covers the 95th percentile with headroom: no change.
  BandwidthOptions big;
  big.plan_mbps_flag = 100;
  BandwidthReport ok = ComputeBandwidthReport(Generate(p), big);
  EXPECT_EQ(ok.nics[0].advice.kind, "ok");
  EXPECT_EQ(ok.nics[0].tx.full_buckets, 0);  // the 150 Mb/s point's bucket averages 17.7
  EXPECT_TRUE(ok.nics[0].tx.top.empty());
}

TEST(BandwidthReportTest, PlanComesFromConfigThenLinkSpeed) {
  BandwidthInput in = Generate({});
  BandwidthOptions nic_plan;
  nic_plan.config_plan_mbps = 30;
  nic_plan.config_plan_nics["eth0"] = 200;
  EXPECT_EQ(ComputeBandwidthReport(in, nic_plan).nics[0].plan_source, "[network] plan_mbps_nics");
  EXPECT_EQ(ComputeBandwidthReport(in, nic_plan).nics[0].plan_mbps, 200);
  BandwidthOptions host_plan;
  host_plan.config_plan_mbps = 30;
  EXPECT_EQ(ComputeBandwidthReport(in, host_plan).nics[0].plan_source, "[network] plan_mbps");
  BandwidthReport link = ComputeBandwidthReport(in, {});
  EXPECT_EQ(link.nics[0].plan_source, "link speed");
  EXPECT_EQ(link.nics[0].plan_mbps, 10000);
  EXPECT_EQ(link.nics[0].advice.kind, "ok");
  EXPECT_THAT(BandwidthReportText(link), HasSubstr("plan 10000 Mb/s (link speed)"));
  // Neither a plan nor a link speed: the figures without advice.
  in.nic_speed.clear();
  BandwidthReport none = ComputeBandwidthReport(in, {});
  EXPECT_EQ(none.nics[0].advice.kind, "none");
  EXPECT_FALSE(none.nics[0].tx.above_80_pct);
  EXPECT_DOUBLE_EQ(none.nics[0].tx.p95_mbps, 48);
}

TEST(BandwidthReportTest, EmptyHistorySaysSo) {
  BandwidthInput in;
  in.since_unix_s = kT0;
  in.until_unix_s = kT0 + 3600;
  BandwidthReport r = ComputeBandwidthReport(in, Plan50());
  EXPECT_TRUE(r.nics.empty());
  EXPECT_THAT(r.note, HasSubstr("no NIC traffic stored in this period"));
  EXPECT_THAT(BandwidthReportText(r), HasSubstr("no NIC traffic stored"));
  EXPECT_EQ(BandwidthReportJson(r)["nics"].size(), 0u);
  // Loopback alone is nothing to bill: reported only when asked for by name.
  in.nic_tx = {Series{"gpudoctor_nic_transmit_bytes_per_second", -1, "nic=lo", {{kT0, 1e6}}}};
  EXPECT_TRUE(ComputeBandwidthReport(in, Plan50()).nics.empty());
  BandwidthOptions lo = Plan50();
  lo.nic = "lo";
  EXPECT_EQ(ComputeBandwidthReport(in, lo).nics.size(), 1u);
  // Through an empty history file too.
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  {
    auto store = HistoryStore::Open(db, StoreOptions{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    (*store)->Close();
  }
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto loaded = LoadBandwidthReport(**reader, kT0, kT0 + 3600, Plan50());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->nics.empty());
  EXPECT_FALSE(loaded->note.empty());
}

TEST(BandwidthReportTest, GapsCountNowhereAndAreReported) {
  Planted p;
  for (int i = 100; i < 124; ++i) p.missing.insert(i);  // 2 h without watch
  for (int i = 250; i < 253; ++i) p.missing.insert(i);  // 15 min
  BandwidthReport r = ComputeBandwidthReport(Generate(p), Plan50());
  ASSERT_EQ(r.nics.size(), 1u);
  const NicBandwidth& n = r.nics[0];
  EXPECT_EQ(n.tx.buckets, 261);
  EXPECT_EQ(n.gap_buckets, 27);
  EXPECT_EQ(n.longest_gap_s, 7200);
  EXPECT_EQ(n.first_s, kT0);
  EXPECT_EQ(n.last_s, kT0 + 287 * 300);
  // ceil(0.95 * 261) = 248th smallest of 231 below 28.8 and 30 full: 48.
  EXPECT_DOUBLE_EQ(n.tx.p95_mbps, 48);
  EXPECT_DOUBLE_EQ(*n.tx.above_80_pct, 100.0 * 30 / 261);
  EXPECT_EQ(n.tx.top[0].process, "backup");
  EXPECT_THAT(BandwidthReportText(r),
              HasSubstr("27 5-minute periods missing (longest gap 2.00 h)"));
}

TEST(BandwidthReportTest, UnknownNicIsNamedWithTheStoredOnes) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  {
    auto store = HistoryStore::Open(db, StoreOptions{});
    ASSERT_TRUE(store.ok());
    auto tick = std::make_shared<TickResult>();
    tick->unix_ms = kT0 * 1000;
    tick->points.push_back(
        {FindMetric("gpudoctor_nic_transmit_bytes_per_second"), -1, {{"nic", "eth0"}}, 1e6});
    (*store)->Append(tick);
    (*store)->Close();
  }
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok());
  BandwidthOptions o;
  o.nic = "eth9";
  auto r = LoadBandwidthReport(**reader, kT0 - 60, kT0 + 60, o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("stored: eth0"));
}

// The sockets probe's facts as the watch stores them: the 5 largest processes by name, every
// sample, through FlattenSnapshot and a real history file, then the report from it.
TEST(BandwidthStoreTest, TopSendersAreStoredPerTickAndReportedFromTheFile) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  StoreOptions so;
  so.max_queued_ticks = 1 << 20;
  {
    auto store = HistoryStore::Open(db, so);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    // 6 hours, a tick every 30 s; the line is full (90 Mb/s of a 100 Mb/s plan) in hour 3.
    for (int64_t t = kT0; t < kT0 + 6 * 3600; t += 30) {
      bool full = t >= kT0 + 3 * 3600 && t < kT0 + 4 * 3600;
      Snapshot snap;
      NicFacts nic;
      nic.name = "eth0";
      nic.speed_mbps = 1000;
      nic.tx_bytes_per_s = (full ? 90 : 10) * kBps;
      nic.rx_bytes_per_s = 2 * kBps;
      snap.network.nics = std::vector<NicFacts>{nic};
      SocketTrafficFacts sockets;
      auto add = [&](int pid, const std::string& comm, double mbps) {
        ProcessTraffic p;
        p.pid = pid;
        p.comm = comm;
        p.tx_bytes_per_s = mbps * kBps;
        p.rx_bytes_per_s = 0.01 * kBps;
        sockets.processes.push_back(p);
      };
      // Two "seeder" processes (summed by name) send 60 Mb/s when full; five small ones, two of
      // which are never among the 5 largest.
      add(10, "seeder", full ? 30 : 1);
      add(11, "seeder", full ? 30 : 1);
      add(12, "nginx", full ? 20 : 5);
      add(13, "sshd", 0.5);
      add(14, "chrony", 0.2);
      add(15, "tiny,one", 0.1);  // a separator in the name is made safe
      add(16, "tinier", 0.05);
      add(17, "tiniest", 0.04);
      snap.network.sockets = sockets;
      auto tick = std::make_shared<TickResult>();
      tick->unix_ms = t * 1000;
      tick->points = FlattenSnapshot(snap);
      (*store)->Append(tick);
    }
    (*store)->Flush();
    (*store)->Close();
  }
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  SeriesQuery q;
  q.metric = "gpudoctor_process_transmit_bytes_per_second";
  q.since_unix_s = kT0;
  q.until_unix_s = kT0 + 6 * 3600;
  auto series = (*reader)->QuerySeries(q);
  ASSERT_TRUE(series.ok());
  std::set<std::string> stored;
  for (const Series& s : *series) stored.insert(s.labels);
  EXPECT_EQ(stored, (std::set<std::string>{"process=chrony", "process=nginx", "process=seeder",
                                           "process=sshd", "process=tiny_one"}));
  BandwidthOptions o;
  o.plan_mbps_flag = 100;
  auto r = LoadBandwidthReport(**reader, kT0, kT0 + 6 * 3600, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->nics.size(), 1u);
  const NicBandwidth& n = r->nics[0];
  EXPECT_EQ(n.tx.buckets, 72);
  EXPECT_EQ(n.tx.full_buckets, 12);
  EXPECT_DOUBLE_EQ(*n.tx.above_80_pct, 100.0 * 12 / 72);
  // 72 averages: the 69th smallest; 60 at 10 Mb/s, 12 at 90.
  EXPECT_DOUBLE_EQ(n.tx.p95_mbps, 90);
  EXPECT_EQ(n.link_mbps, 1000);
  ASSERT_FALSE(n.tx.top.empty());
  EXPECT_EQ(n.tx.top[0].process, "seeder");
  EXPECT_NEAR(n.tx.top[0].share_pct, 100.0 * 60 / 90, 1e-6);
  EXPECT_EQ(n.advice.kind, "split");
  EXPECT_EQ(n.advice.upgrade_to_mbps, 200);  // 90 × 1.25 = 112.5
}

// GET /api/v1/report/bandwidth behind the token, from a real history file, the plan from the
// config's [network] plan_mbps unless the query gives one.
TEST(BandwidthRouteTest, ServedWithTheTokenFromTheHistory) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  const int64_t now = static_cast<int64_t>(std::time(nullptr)) / 300 * 300;
  {
    auto store = HistoryStore::Open(db, StoreOptions{});
    ASSERT_TRUE(store.ok());
    for (int64_t t = now - 3600; t < now; t += 60) {
      auto tick = std::make_shared<TickResult>();
      tick->unix_ms = t * 1000;
      tick->points.push_back({FindMetric("gpudoctor_nic_transmit_bytes_per_second"),
                              -1,
                              {{"nic", "eth0"}},
                              (t >= now - 600 ? 90 : 10) * kBps});
      (*store)->Append(tick);
    }
    (*store)->Flush();
    (*store)->Close();
  }
  HttpOptions o;
  o.listen = "127.0.0.1:0";
  o.token = "s3cret";
  o.plans.Set("net.nic.saturated", "plan_mbps", 100);
  auto server = WatchHttpServer::Start(o, nullptr, [db]() { return HistoryReader::Open(db); });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client c("127.0.0.1", (*server)->port());
  c.set_read_timeout(10, 0);
  auto r = c.Get("/api/v1/report/bandwidth?since=2h");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  c.set_bearer_token_auth("s3cret");
  r = c.Get("/api/v1/report/bandwidth?since=2h");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = nlohmann::json::parse(r->body);
  ASSERT_EQ(j["nics"].size(), 1u);
  EXPECT_EQ(j["nics"][0]["plan_source"], "[network] plan_mbps");
  EXPECT_EQ(j["nics"][0]["tx"]["full_buckets"], 2);
  EXPECT_EQ(j["nics"][0]["points"].size(), 12u);
  r = c.Get("/api/v1/report/bandwidth?since=2h&plan_mbps=1000");
  ASSERT_TRUE(r);
  EXPECT_EQ(nlohmann::json::parse(r->body)["nics"][0]["plan_source"], "--plan-mbps");
  r = c.Get("/api/v1/report/bandwidth?nic=eth9");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_THAT(r->body, HasSubstr("stored: eth0"));
  r = c.Get("/api/v1/report/bandwidth?bogus=1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  (*server)->Stop();
}

TEST(BandwidthRouteTest, ParsesItsParameters) {
  const int64_t now = kT0;
  std::multimap<std::string, std::string> p = {
      {"since", "7d"}, {"nic", "eth0"}, {"plan_mbps", "100"}};
  auto q = ParseBandwidthQuery(p, now);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->since_unix_s, now - 7 * 86400);
  EXPECT_EQ(q->until_unix_s, now);
  EXPECT_EQ(q->options.nic, "eth0");
  EXPECT_EQ(q->options.plan_mbps_flag, 100);
  EXPECT_EQ(ParseBandwidthQuery({}, now)->since_unix_s, now - 30 * 86400);
  EXPECT_FALSE(ParseBandwidthQuery({{"plan_mbps", "-1"}}, now).ok());
  EXPECT_FALSE(ParseBandwidthQuery({{"nic", "a,b"}}, now).ok());
  EXPECT_THAT(ParseBandwidthQuery({{"metric", "x"}}, now).status().message(),
              HasSubstr("unknown parameter 'metric'"));
  EXPECT_FALSE(ParseBandwidthQuery({{"nic", "a"}, {"nic", "b"}}, now).ok());
}

}  // namespace
}  // namespace gpudoctor
