// `gpudoctor history`, `ack` and `silence` on a database this test fills through HistoryStore.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/time_spec.h"
#include "store/history_store.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using testing::RunGpudoctor;
using testing::TempDir;

class HistoryE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/history.db";
    StoreOptions o;
    o.max_queued_ticks = 1 << 20;
    auto store = HistoryStore::Open(db_, o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    now_ = static_cast<int64_t>(std::time(nullptr));
    start_ = now_ - 600;
    const MetricInfo* temp = FindMetric("gpudoctor_gpu_temperature_celsius");
    for (int64_t t = start_; t < now_; t += 10) {
      auto tick = std::make_shared<TickResult>();
      tick->unix_ms = t * 1000;
      for (int gpu = 0; gpu < 2; ++gpu) {
        tick->points.push_back({temp, gpu, {}, static_cast<double>(50 + gpu * 10)});
      }
      if (t == start_) {
        TrackedFinding f;
        f.last.id = "gpu.ecc.dbe";
        f.last.layer = Layer::kHardware;
        f.last.severity = Severity::kCrit;
        f.last.action = Action::kDrainReset;
        f.last.summary = "double-bit ECC errors";
        GpuRef g;
        g.index = 1;
        g.serial = "1650123456789";
        g.pci_bus_id = "0000:3b:00.0";
        f.last.gpu = g;
        f.key = "gpu.ecc.dbe|serial=1650123456789|";
        f.state = FindingState::kOpen;
        f.first_seen_ms = f.opened_ms = f.last_seen_ms = t * 1000;
        tick->findings.push_back(f);
        tick->events.push_back({t * 1000, "reboot", std::nullopt, "", "", "boot id a -> b"});
      }
      (*store)->Append(tick);
    }
    (*store)->Close();
  }

  TempDir dir_;
  std::string db_;
  int64_t now_ = 0, start_ = 0;
};

TEST_F(HistoryE2eTest, MetricAsJsonAndText) {
  auto r = RunGpudoctor({"history", "--db", db_, "--metric", "gpudoctor_gpu_temperature_celsius",
                         "--gpu", "1", "--since", "15m", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metric"], "gpudoctor_gpu_temperature_celsius");
  EXPECT_EQ(j["gpu"], 1);
  ASSERT_EQ(j["points"].size(), 60u);
  EXPECT_EQ(j["points"][0][0], start_);
  EXPECT_EQ(j["points"][0][1], 60.0);

  auto until = RunGpudoctor(
      {"history", "--db", db_, "--metric", "gpudoctor_gpu_temperature_celsius", "--gpu", "0",
       "--since", std::to_string(start_), "--until", std::to_string(start_ + 50), "--json"});
  ASSERT_EQ(until.exit_code, 0) << until.err;
  EXPECT_EQ(nlohmann::json::parse(until.out)["points"].size(), 6u);

  // The one time grammar: an RFC 3339 time with an offset and a compound duration are accepted
  // by the flag and mean the same instant as the unix seconds above.
  std::string local = FormatUtc(start_ + 7200);
  local.replace(local.size() - 1, 1, "+02:00");
  auto offset = RunGpudoctor({"history", "--db", db_, "--metric",
                              "gpudoctor_gpu_temperature_celsius", "--gpu", "0", "--since", local,
                              "--until", std::to_string(start_ + 50), "--json"});
  ASSERT_EQ(offset.exit_code, 0) << offset.err;
  EXPECT_EQ(nlohmann::json::parse(offset.out)["points"].size(), 6u);
  auto compound =
      RunGpudoctor({"history", "--db", db_, "--metric", "gpudoctor_gpu_temperature_celsius",
                    "--gpu", "0", "--since", "1h30m", "--json"});
  ASSERT_EQ(compound.exit_code, 0) << compound.err;
  EXPECT_EQ(nlohmann::json::parse(compound.out)["points"].size(), 60u);

  auto text = RunGpudoctor(
      {"history", "--db", db_, "--metric", "gpudoctor_gpu_temperature_celsius", "--gpu", "0"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("gpu 0: 60 point(s)"));
  EXPECT_THAT(text.out, HasSubstr("Z  50"));

  auto list = RunGpudoctor({"history", "--db", db_, "--list-metrics"});
  ASSERT_EQ(list.exit_code, 0);
  EXPECT_EQ(list.out, "gpudoctor_gpu_temperature_celsius\n");
}

TEST_F(HistoryE2eTest, FindingsEventsAckAndSilence) {
  auto f = RunGpudoctor({"history", "--db", db_, "--findings"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_THAT(f.out, HasSubstr("gpu.ecc.dbe"));
  EXPECT_THAT(f.out, HasSubstr("1650123456789"));
  EXPECT_THAT(f.out, HasSubstr("0000:3b:00.0"));
  EXPECT_THAT(f.out, HasSubstr("open"));
  EXPECT_THAT(f.out, HasSubstr("ACTION"));
  EXPECT_THAT(f.out, HasSubstr("drain_reset"));

  auto ack = RunGpudoctor({"ack", "gpu.ecc.dbe", "--gpu", "1", "--note", "RMA 42", "--db", db_});
  ASSERT_EQ(ack.exit_code, 0) << ack.err;
  EXPECT_THAT(ack.out, HasSubstr("acknowledged 1 finding(s)"));
  auto wrong_gpu = RunGpudoctor({"ack", "gpu.ecc.dbe", "--gpu", "0", "--db", db_});
  EXPECT_EQ(wrong_gpu.exit_code, 3);
  EXPECT_THAT(wrong_gpu.err, HasSubstr("no open finding gpu.ecc.dbe on GPU 0"));
  auto silence = RunGpudoctor({"silence", "gpu.ecc.dbe", "--for", "2h", "--db", db_});
  ASSERT_EQ(silence.exit_code, 0) << silence.err;

  auto j = RunGpudoctor({"history", "--db", db_, "--findings", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto arr = nlohmann::json::parse(j.out);
  ASSERT_EQ(arr.size(), 1u);
  EXPECT_EQ(arr[0]["acked"], true);
  EXPECT_EQ(arr[0]["ack_note"], "RMA 42");
  EXPECT_EQ(arr[0]["finding"]["gpu"]["serial"], "1650123456789");
  EXPECT_EQ(arr[0]["finding"]["action"], "drain_reset");
  EXPECT_GE(arr[0]["silenced_until"].get<int64_t>(), now_ + 7000);

  auto ev = RunGpudoctor({"history", "--db", db_, "--events", "--since", "1h", "--json"});
  ASSERT_EQ(ev.exit_code, 0) << ev.err;
  auto events = nlohmann::json::parse(ev.out);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["kind"], "reboot");
  EXPECT_EQ(events[1]["kind"], "ack");
  EXPECT_EQ(events[2]["kind"], "silence");
}

// While a writer holds the database (as `watch` does), a reader in its own process (its /api,
// its acknowledgement poll) and then one in another process (`gpudoctor history`) come and go.
// The first used to open() and close() the file to check its header, which released the
// writer's POSIX locks; the second then took itself for the last connection and checkpointed and
// deleted the WAL the writer was still appending to: later ticks went to an unlinked file, and
// the GPU ledger written at close was lost.
TEST(HistoryWhileWritingE2eTest, ReadersNeverTakeTheWriterForGone) {
  TempDir dir;
  const std::string db = dir.path() + "/history.db";
  auto store = HistoryStore::Open(db, {});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const MetricInfo* temp = FindMetric("gpudoctor_gpu_temperature_celsius");
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto append = [&](int64_t t, double v) {
    auto tick = std::make_shared<TickResult>();
    tick->unix_ms = t * 1000;
    tick->points.push_back({temp, 0, {}, v});
    (*store)->Append(tick);
    (*store)->Flush();
    ASSERT_EQ((*store)->write_error(), "");
  };
  append(now - 20, 41);
  {
    auto tick = std::make_shared<TickResult>();
    tick->unix_ms = (now - 15) * 1000;
    TrackedFinding f;
    f.last.id = "gpu.ecc.dbe";
    f.last.layer = Layer::kHardware;
    f.last.severity = Severity::kCrit;
    f.last.gpu = GpuRef{1, "", "0000:3b:00.0", "1650123456789", ""};
    f.key = "gpu.ecc.dbe|serial=1650123456789|";
    f.state = FindingState::kOpen;
    f.first_seen_ms = f.opened_ms = f.last_seen_ms = tick->unix_ms;
    tick->findings.push_back(f);
    (*store)->Append(tick);
    (*store)->Flush();
  }
  {
    auto reader = HistoryReader::Open(db);  // in the writer's process
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    ASSERT_TRUE((*reader)->QueryFindings({}).ok());
  }
  auto points = [&] {
    auto r = RunGpudoctor({"history", "--db", db, "--metric", "gpudoctor_gpu_temperature_celsius",
                           "--gpu", "0", "--since", "5m", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["points"].size();
  };
  EXPECT_EQ(points(), 1u);  // another process reads and closes
  // `gpudoctor ack` opens it for writing, as an operator does while `watch` runs.
  auto ack = RunGpudoctor({"ack", "gpu.ecc.dbe", "--gpu", "1", "--note", "RMA 7", "--db", db});
  ASSERT_EQ(ack.exit_code, 0) << ack.err;
  EXPECT_TRUE(std::filesystem::exists(db + "-wal")) << "the writer's WAL was deleted under it";
  append(now - 10, 42);
  EXPECT_EQ(points(), 2u);
  (*store)->Close();
  EXPECT_EQ(points(), 2u);
}

TEST_F(HistoryE2eTest, BadInputsExit3WithOneLine) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  } cases[] = {
      {{"history", "--db", dir_.path() + "/missing.db", "--findings"}, "missing.db"},
      {{"history", "--db", dir_.path(), "--findings"}, "is a directory"},
      {{"history", "--db", db_, "--findings", "--since", "6x"}, "--since"},
      {{"history", "--db", db_, "--metric", "x", "--until", "tomorrow"}, "--until"},
      {{"history", "--db", db_, "--metric", "gpudoctor_nope"}, "unknown metric"},
      {{"history", "--db", db_}, "exactly one of"},
      {{"history", "--db", db_, "--metric", "m", "--gpu", "-1"}, "--gpu"},
      {{"silence", "gpu.ecc.dbe", "--db", db_}, "--for"},
      {{"silence", "gpu.ecc.dbe", "--for", "2x", "--db", db_}, "--for"},
      {{"ack", "--db", db_}, "finding ID"},
      {{"ack", "gpu.ecc.dbe", "--db", dir_.path() + "/nodir/x.db"}, "nodir"},
  };
  dir_.Write("foreign.db", "not a database");
  auto foreign = RunGpudoctor({"history", "--db", dir_.path() + "/foreign.db", "--events"});
  EXPECT_EQ(foreign.exit_code, 3);
  EXPECT_THAT(foreign.err, HasSubstr("foreign.db"));
  for (const auto& c : cases) {
    auto r = RunGpudoctor(c.args);
    EXPECT_EQ(r.exit_code, 3) << c.args[0] << " " << c.expect << ": " << r.out;
    EXPECT_THAT(r.err, HasSubstr(c.expect));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace gpudoctor
