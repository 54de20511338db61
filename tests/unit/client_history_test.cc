// Issue 25 item 4: net.clients.degraded with one or two client networks, each compared with its
// own stored history (planted in a real history file, read back as `check` and `watch` do).
#include "store/client_history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metrics/metric_table.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr int64_t kNow = 1'700'000'000;

ClientNetworkFacts Net(const std::string& network, double rtt_ms, double retrans_pct) {
  ClientNetworkFacts g;
  g.network = network;
  g.connections = 4;
  g.rtt_median_ms = rtt_ms;
  g.retrans_pct = retrans_pct;
  return g;
}

// Two client networks sampled every 30 s for the 2 days before now: A at about 40 ms and 0.5%
// retransmitted, B at about 120 ms (a far-away office) and 1%.
void PlantHistory(const std::string& db) {
  StoreOptions o;
  o.max_queued_ticks = 1 << 20;
  auto store = HistoryStore::Open(db, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (int64_t t = kNow - 2 * 86400; t < kNow - 1200; t += 30) {
    Snapshot snap;
    SocketTrafficFacts s;
    double wobble = (t / 30 % 5) - 2;  // -2..2
    s.client_networks = {Net("203.0.113.0/24", 40 + wobble, 0.5),
                         Net("198.51.100.0/24", 120 + wobble, 1)};
    snap.network.sockets = s;
    auto tick = std::make_shared<TickResult>();
    tick->unix_ms = t * 1000;
    tick->points = FlattenSnapshot(snap);
    (*store)->Append(tick);
  }
  (*store)->Flush();
  (*store)->Close();
}

std::vector<Finding> Judge(const ClientHistory& h, std::vector<ClientNetworkFacts> now) {
  SocketTrafficFacts s;
  s.client_networks = std::move(now);
  Snapshot snap;
  snap.network.sockets = s;
  Thresholds t;
  std::vector<Finding> findings = EvaluateRules(snap, t);
  JudgeClientsAgainstHistory(s, h, kNow, t, findings);
  return findings;
}

const Finding* Find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

TEST(ClientHistoryTest, OneOrTwoNetworksAreJudgedAgainstTheirOwnHistory) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  PlantHistory(db);
  ClientHistory h = ReadClientHistory(db, kNow, 7, SteadyClock::now() + std::chrono::seconds(10));
  ASSERT_FALSE(h.empty());
  auto b = h.Baseline("203.0.113.0/24", kNow - 7 * 86400, kNow - 600, 20);
  ASSERT_TRUE(b);
  EXPECT_NEAR(*b->rtt_ms, 40, 2.01);
  EXPECT_NEAR(*b->retrans_pct, 0.5, 1e-6);

  // Both as usual: nothing (B's 120 ms is its normal, and below the cross-network threshold).
  EXPECT_EQ(Find(Judge(h, {Net("203.0.113.0/24", 41, 0.5), Net("198.51.100.0/24", 121, 1)}),
                 "net.clients.degraded"),
            nullptr);

  // A alone, at 110 ms: below the absolute 150 ms, but almost 3x its usual 40 ms.
  auto one = Judge(h, {Net("203.0.113.0/24", 110, 0.5)});
  const Finding* f = Find(one, "net.clients.degraded");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->summary, HasSubstr("1 of 1 client networks see the server slower than usual"));
  EXPECT_THAT(f->summary, HasSubstr("203.0.113.0/24 rtt 110 ms (usually 40 ms)"));
  bool own = false;
  for (const auto& e : f->evidence) {
    const auto* v = std::get_if<std::string>(&e.value);
    own = own || (e.name == "verdict" && v != nullptr && *v == "own_history");
  }
  EXPECT_TRUE(own);
  ASSERT_FALSE(f->next_steps.empty());
  EXPECT_THAT(f->next_steps[0], HasSubstr("Slower than usual for this network"));

  // B with retransmissions 5 points above its usual 1%: lossy against its history.
  auto two = Judge(h, {Net("203.0.113.0/24", 40, 0.5), Net("198.51.100.0/24", 125, 6)});
  f = Find(two, "net.clients.degraded");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->summary, HasSubstr("1 of 2 client networks"));
  EXPECT_THAT(f->summary, HasSubstr("198.51.100.0/24 retrans 6% (usually 1%)"));

  // A small rise (40 → 65 ms: under 2x) is not a finding; nor a network without history.
  EXPECT_EQ(Find(Judge(h, {Net("203.0.113.0/24", 65, 0.5)}), "net.clients.degraded"), nullptr);
  EXPECT_EQ(Find(Judge(h, {Net("192.0.2.0/24", 400, 9)}), "net.clients.degraded"), nullptr);
}

TEST(ClientHistoryTest, TooFewSamplesIsNoBaselineAndTheCurrentEpisodeIsNotItsOwn) {
  ClientHistory h;
  for (int i = 0; i < 19; ++i) h.Observe("203.0.113.0/24", kNow - 3600 + i * 30, 40, 0.5);
  EXPECT_FALSE(h.Baseline("203.0.113.0/24", kNow - 86400, kNow - 600, 20));
  h.Observe("203.0.113.0/24", kNow - 1000, 40, 0.5);
  EXPECT_TRUE(h.Baseline("203.0.113.0/24", kNow - 86400, kNow - 600, 20));
  // Samples of the last 10 minutes (the slow period itself) do not move the baseline.
  for (int i = 0; i < 100; ++i) h.Observe("203.0.113.0/24", kNow - 500 + i, 300, 0.5);
  auto b = h.Baseline("203.0.113.0/24", kNow - 86400, kNow - 600, 20);
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(*b->rtt_ms, 40);
  auto f = Judge(h, {Net("203.0.113.0/24", 300, 0.5)});
  EXPECT_NE(Find(f, "net.clients.degraded"), nullptr);
}

TEST(ClientHistoryTest, TheComparisonAcrossNetworksWinsWhenItFires) {
  ClientHistory h;
  for (int i = 0; i < 40; ++i) {
    for (const char* n : {"203.0.113.0/24", "198.51.100.0/24", "192.0.2.0/24"}) {
      h.Observe(n, kNow - 7200 + i * 30, 20, 0.1);
    }
  }
  // Three networks, one at 400 ms: the cross-network rule reports "some"; no second finding.
  auto fs = Judge(h, {Net("203.0.113.0/24", 400, 0.1), Net("198.51.100.0/24", 20, 0.1),
                      Net("192.0.2.0/24", 20, 0.1)});
  int n = 0;
  for (const auto& f : fs) n += f.id == "net.clients.degraded";
  EXPECT_EQ(n, 1);
  const Finding* f = Find(fs, "net.clients.degraded");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->summary, HasSubstr("their path, not this server"));
}

// `watch`: the sink learns from its own ticks (after a seed) and judges the next ones.
TEST(ClientHistoryTest, SinkLearnsFromItsTicksAndJudges) {
  ClientHistorySink sink{ClientHistory{}, Thresholds{}};
  auto tick_at = [](int64_t t, double rtt_ms) {
    auto tick = std::make_shared<TickResult>();
    tick->unix_ms = t * 1000;
    SocketTrafficFacts s;
    s.client_networks = {Net("203.0.113.0/24", rtt_ms, 0.2)};
    tick->report.snapshot.network.sockets = s;
    return tick;
  };
  for (int i = 0; i < 30; ++i) {
    auto tick = tick_at(kNow - 7200 + i * 30, 35);
    std::vector<Finding> fs;
    sink.Judge(fs, *tick);
    EXPECT_TRUE(fs.empty()) << "no baseline yet, or as usual";
    sink.OnTick(tick);
  }
  auto slow = tick_at(kNow, 150);
  std::vector<Finding> fs;
  sink.Judge(fs, *slow);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "net.clients.degraded");
  EXPECT_THAT(fs[0].summary, HasSubstr("rtt 150 ms (usually 35 ms)"));
}

TEST(ClientHistoryTest, MissingFileIsAnEmptyHistory) {
  TempDir dir;
  EXPECT_TRUE(ReadClientHistory(dir.path() + "/none.db", kNow, 7,
                                SteadyClock::now() + std::chrono::seconds(2))
                  .empty());
}

}  // namespace
}  // namespace gpudoctor
