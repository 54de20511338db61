// watch's poll for acknowledgements and silences: it asks the history when the marks file that
// `ack` / `silence` rewrite after each commit changed, and every kFallbackTicks ticks whatever.
#include "watch/ack_poll.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "store/history_store.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

// The ticks of [from, to] on which the poll asks.
std::vector<uint64_t> AskedOn(AckPoll& poll, uint64_t from, uint64_t to) {
  std::vector<uint64_t> asked;
  for (uint64_t t = from; t <= to; ++t) {
    if (poll.Due(t)) asked.push_back(t);
  }
  return asked;
}

TEST(AckPollTest, AsksWhenTheMarksChangeAndEverySixtyTicksOtherwise) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/history.db";
  AckPoll poll(OperatorMarksPath(db));
  // No marks file yet: the first look asks (what the database holds at start), then only the
  // fallback would (tick 65).
  EXPECT_EQ(AskedOn(poll, 1, 64), (std::vector<uint64_t>{5}));
  // `ack` writes the file: asked on the next look (a multiple of 5), not before.
  dir.Write("history.db-acks", "1764000000000\n");
  EXPECT_EQ(AskedOn(poll, 65, 69), (std::vector<uint64_t>{65}));
  EXPECT_EQ(AskedOn(poll, 70, 99), (std::vector<uint64_t>{}));
  // Rewritten with the same size (a new inode through the rename): asked again.
  dir.Write("history.db-acks.tmp", "1764000000001\n");
  ASSERT_EQ(::rename((dir.path() + "/history.db-acks.tmp").c_str(),
                     (dir.path() + "/history.db-acks").c_str()),
            0);
  EXPECT_EQ(AskedOn(poll, 100, 104), (std::vector<uint64_t>{100}));
  // Unchanged from then on: the fallback, 60 ticks after the last question.
  EXPECT_EQ(AskedOn(poll, 105, 170), (std::vector<uint64_t>{160}));
  // Removed: a change too.
  std::filesystem::remove(dir.path() + "/history.db-acks");
  EXPECT_EQ(AskedOn(poll, 171, 175), (std::vector<uint64_t>{175}));
}

// `gpudoctor ack` and `silence` rewrite the marks file only when they marked something (that they
// do rewrite it then: StoreTest.FindingsEventsLedgerAndAcks).
TEST(AckPollTest, AnAckOrSilenceThatMarksNothingLeavesTheMarksAlone) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/history.db";
  {
    StoreOptions options;
    auto store = HistoryStore::Open(db, options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
  }
  AckPoll poll(OperatorMarksPath(db));
  ASSERT_TRUE(poll.Due(5));
  EXPECT_FALSE(AckFindings(db, "gpu.ecc.dbe", 3, 1764000000000, "").ok());  // nothing to mark
  EXPECT_FALSE(poll.Due(10));
  EXPECT_FALSE(std::filesystem::exists(OperatorMarksPath(db)));
  EXPECT_FALSE(SilenceFindings(db, "gpu.ecc.dbe", std::nullopt, 1764007200000, 1764000000000).ok());
  EXPECT_FALSE(poll.Due(15));
}

}  // namespace
}  // namespace gpudoctor
