// End-to-end: `gpudoctor fleet --db` on watch history databases built with the real schema
// (src/store/store_schema.h): a card that faulted on two hosts is judged the card.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "metrics/metric_table.h"
#include "store/history_store.h"
#include "store/store_schema.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

void MakeDb(const std::string& path, const std::string& host, const std::string& bus,
            int64_t first_s, int64_t fault_s) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string sql = std::string(kStoreSchemaSql) +
                    "PRAGMA application_id=" + std::to_string(kStoreApplicationId) +
                    "; PRAGMA user_version=" + std::to_string(kStoreSchemaVersion) + ";" +
                    "INSERT INTO meta VALUES('hostname','" + host + "');" +
                    "INSERT INTO gpus VALUES('S1','GPU-1','" + bus + "',0,'H100'," +
                    std::to_string(first_s) + "," + std::to_string(first_s + 86400) + ");" +
                    "INSERT INTO findings(key, first_seen_ms, id, severity, layer, gpu_index, "
                    "gpu_serial, gpu_bus_id, summary, state, last_seen_ms) VALUES('gpu.xid|S1'," +
                    std::to_string(fault_s * 1000) + ",'gpu.xid','crit','hardware',0,'S1','" + bus +
                    "','Xid 79','resolved'," + std::to_string(fault_s * 1000) + ");";
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
  sqlite3_close(db);
}

TEST(FleetDbE2eTest, CardFollowedAcrossTwoHistories) {
  testing::TempDir tmp;
  std::string a = tmp.path() + "/a.db", b = tmp.path() + "/b.db";
  MakeDb(a, "hostA", "0000:18:00.0", 1768003200, 1768010000);
  MakeDb(b, "hostB", "0000:2a:00.0", 1768003200 + 2 * 86400, 1768003200 + 2 * 86400 + 600);
  auto r = testing::RunGpudoctor({"fleet", "--json", "--db", a, "--db", b, "card", "S1"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "card");
  EXPECT_EQ(j["ledger"].size(), 2u);
  EXPECT_EQ(j["evidence"][1]["node"], "hostB");

  tmp.Write("not.db", "hello");
  auto bad = testing::RunGpudoctor({"fleet", "--db", tmp.path() + "/not.db", "--db", a});
  EXPECT_NE(bad.out.find("not.db"), std::string::npos) << bad.out;
}

// A history written by the real store: 8 GPUs, 6 ticks 5 minutes apart, GPU 3 slow with HW
// slowdown. `fleet --db` reads the metric series and finds it.
TEST(FleetDbE2eTest, StragglerFoundFromTheStoredSeries) {
  testing::TempDir tmp;
  const std::string db = tmp.path() + "/history.db";
  constexpr int64_t kT0 = 1768003200;
  {
    auto store = HistoryStore::Open(db, {});
    ASSERT_TRUE(store.ok()) << store.status().message();
    for (int w = 0; w < 6; ++w) {
      auto tick = std::make_shared<TickResult>();
      tick->tick = static_cast<uint64_t>(w + 1);
      tick->unix_ms = (kT0 + w * 300 + 5) * 1000;
      for (int i = 0; i < 8; ++i) {
        GpuFacts g;
        g.index = i;
        g.uuid = "GPU-e2e-" + std::to_string(i);
        g.serial = "SN-e2e-" + std::to_string(i);
        g.pci_bus_id = "0000:2" + std::to_string(i) + ":00.0";
        g.name = "NVIDIA H100 80GB HBM3";
        tick->report.snapshot.gpu.gpus.push_back(g);
        auto point = [&](const char* metric, double v) {
          tick->points.push_back({FindMetric(metric), i, {}, v});
        };
        point("gpudoctor_gpu_sm_clock_hertz", i == 3 ? 1.25e9 : 1.98e9 - i * 1e6);
        point("gpudoctor_gpu_utilization_ratio", 0.97);
        point("gpudoctor_gpu_power_watts", 650);
        point("gpudoctor_gpu_temperature_celsius", 60);
        point("gpudoctor_gpu_clock_event_reasons", i == 3 ? 0x8 : 0);
      }
      (*store)->Append(tick);
    }
    (*store)->Flush();
    (*store)->Close();
  }
  auto r = testing::RunGpudoctor({"fleet", "--json", "--db", db});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["stragglers"].size(), 1u) << j["stragglers"].dump(2);
  EXPECT_EQ(j["stragglers"][0]["serial"], "SN-e2e-3");
  EXPECT_EQ(j["stragglers"][0]["kind"], "hardware");
}

}  // namespace
}  // namespace gpudoctor
