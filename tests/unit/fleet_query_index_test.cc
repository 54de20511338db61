// The query index (fleet/query_index.h): `fleet card` / `fleet slot` on an indexed, unchanged
// reports directory parse no report and decode only the records of their serial or slot, and
// give the verdict the full read gives; a report changed in place, added or removed is seen by
// the next query (the index is not used, the reports are read again); a corrupt index is
// ignored.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fleet/analysis.h"
#include "fleet/ledger.h"
#include "fleet/onsets.h"
#include "fleet/query_index.h"
#include "fleet/report_reader.h"
#include "fleet_gen.h"
#include "test_util.h"

namespace gpudoctor::fleet {
namespace {

using testing::FleetGenOptions;
using testing::GeneratedFleet;
using testing::GenerateFleet;
constexpr auto kTimeout = std::chrono::seconds(20);

struct Answer {
  std::string json;  // RenderVerdictJson
  std::string verdict;
  size_t problems = 0;
  ReadStats stats;
};

// What the CLI does: the query index when fresh, else read the reports (through the report
// index) and save the query index.
Answer Query(const std::string& dir, const std::string& index, bool card, const std::string& who,
             int64_t now_s, Freshness freshness = Freshness::kEveryFile) {
  Answer a;
  const std::string qpath = QueryIndexPath(index);
  if (auto q = QueryFromIndex(qpath, dir, card, who, now_s, SteadyClock::now() + kTimeout, &a.stats,
                              freshness)) {
    a.json = RenderVerdictJson(q->verdict);
    a.verdict = q->verdict.verdict;
    a.problems = q->head.problems;
    return a;
  }
  FleetData data;
  EXPECT_TRUE(ReadReports(dir, now_s, data, kTimeout, index, &a.stats).ok());
  auto ledger = BuildLedger(data);
  auto faults = HardwareFaults(data, FindOnsets(data));
  QueryIndexHead head{a.stats.fingerprint,    now_s,
                      a.stats.stable_until_s, data.reports.size(),
                      data.problems.size(),   a.stats.stamp_paths,
                      a.stats.stamp_hash};
  EXPECT_TRUE(SaveQueryIndex(qpath, head, ledger, faults).ok());
  Verdict v = card ? JudgeCard(who, ledger, faults) : JudgeSlot(who, ledger, faults);
  a.json = RenderVerdictJson(v);
  a.verdict = v.verdict;
  a.problems = data.problems.size();
  return a;
}

// The full read, no index at all.
Answer Full(const std::string& dir, bool card, const std::string& who, int64_t now_s) {
  Answer a;
  FleetData data;
  EXPECT_TRUE(ReadReports(dir, now_s, data, kTimeout).ok());
  auto ledger = BuildLedger(data);
  auto faults = HardwareFaults(data, FindOnsets(data));
  Verdict v = card ? JudgeCard(who, ledger, faults) : JudgeSlot(who, ledger, faults);
  a.json = RenderVerdictJson(v);
  a.verdict = v.verdict;
  a.problems = data.problems.size();
  return a;
}

struct Fleet {
  GeneratedFleet gen;
  gpudoctor::testing::TempDir reports, cache;
  std::string index;
  explicit Fleet(int nodes) {
    FleetGenOptions opt;
    opt.nodes = nodes;
    opt.seed = 20260110;
    gen = GenerateFleet(opt);
    for (const auto& r : gen.reports) reports.Write(r.source + ".json", r.json);
    index = cache.path() + "/fleet.idx";
  }
  std::string File(const std::string& source) const {
    return reports.path() + "/" + source + ".json";
  }
};

TEST(FleetQueryIndexTest, QueryEqualsTheFullReadOnTheGeneratedFleet) {
  Fleet f(200);
  const int64_t now = f.gen.now_s;
  ASSERT_FALSE(f.gen.truth.card_verdicts.empty());
  ASSERT_FALSE(f.gen.truth.slot_verdicts.empty());
  // The first query reads the reports and builds the query index.
  Answer first = Query(f.reports.path(), f.index, true, "no-such-serial", now);
  EXPECT_FALSE(first.stats.from_query_index);
  EXPECT_GT(first.stats.files_parsed, 0u);
  std::vector<std::pair<bool, std::string>> asks;
  for (const auto& [serial, v] : f.gen.truth.card_verdicts) asks.push_back({true, serial});
  for (const auto& [slot, v] : f.gen.truth.slot_verdicts) asks.push_back({false, slot});
  int n = 0;
  for (const auto& s : f.gen.truth.serials) {
    if (++n % 40 == 0) asks.push_back({true, s});
  }
  for (const auto& s : f.gen.truth.cloned_serials) asks.push_back({true, s});
  asks.push_back({true, "0"});
  asks.push_back({true, ""});
  asks.push_back({true, "SN-TYPO-1"});  // unknown: nearest names from every record
  asks.push_back({false, "node9999:0000:18:00.0"});
  std::string some_slot = f.gen.truth.slot_verdicts.begin()->first;
  std::string upper = some_slot;  // another bus id spelling of the same slot
  for (size_t i = upper.find(':') + 1; i < upper.size(); ++i) upper[i] = std::toupper(upper[i]);
  asks.push_back({false, upper});
  // The full read, once, without any index.
  FleetData data;
  ASSERT_TRUE(ReadReports(f.reports.path(), now, data, kTimeout).ok());
  const auto ledger = BuildLedger(data);
  const auto faults = HardwareFaults(data, FindOnsets(data));
  int fault_verdicts = 0;
  for (const auto& [card, who] : asks) {
    SCOPED_TRACE((card ? "card " : "slot ") + who);
    Answer q = Query(f.reports.path(), f.index, card, who, now);
    Verdict full = card ? JudgeCard(who, ledger, faults) : JudgeSlot(who, ledger, faults);
    EXPECT_TRUE(q.stats.from_query_index) << q.stats.index_note;
    EXPECT_EQ(q.stats.files_parsed, 0u);
    EXPECT_EQ(q.json, RenderVerdictJson(full));
    EXPECT_EQ(q.problems, data.problems.size());
    if (q.verdict == "card" || q.verdict == "slot") ++fault_verdicts;
  }
  EXPECT_GE(fault_verdicts, static_cast<int>(f.gen.truth.card_verdicts.size()));
}

TEST(FleetQueryIndexTest, IndexedQueryParsesNothingAndDecodesOnlyItsRecords) {
  Fleet f(200);
  const int64_t now = f.gen.now_s;
  const std::string serial = f.gen.truth.card_verdicts.begin()->first;
  const std::string slot = f.gen.truth.slot_verdicts.begin()->first;
  Query(f.reports.path(), f.index, true, serial, now);  // builds the index
  for (bool card : {true, false}) {
    Answer q = Query(f.reports.path(), f.index, card, card ? serial : slot, now);
    ASSERT_TRUE(q.stats.from_query_index) << q.stats.index_note;
    EXPECT_EQ(q.stats.files_parsed, 0u);
    EXPECT_EQ(q.stats.files_from_index, 0u);  // not even the report index is decoded
    EXPECT_GT(q.stats.records_total, 1000u);  // 200 nodes x 8 GPUs, and faults
    EXPECT_GE(q.stats.records_decoded, 2u);
    EXPECT_LE(q.stats.records_decoded, 40u);
  }
  // A serial not in the data decodes everything (the nearest names), still parses nothing.
  Answer typo = Query(f.reports.path(), f.index, true, serial + "x", now);
  EXPECT_TRUE(typo.stats.from_query_index);
  EXPECT_EQ(typo.verdict, "unknown");
  EXPECT_EQ(typo.stats.files_parsed, 0u);
}

TEST(FleetQueryIndexTest, ChangedAddedOrRemovedReportIsSeenByTheNextQuery) {
  Fleet f(60);
  const int64_t now = f.gen.now_s;
  const std::string serial = f.gen.truth.card_verdicts.begin()->first;
  const std::string dir = f.reports.path();
  auto ask = [&] { return Query(dir, f.index, true, serial, now); };
  Answer before = ask();
  ASSERT_TRUE(ask().stats.from_query_index);
  // Rewritten in place (same size, the directory's mtime unchanged): the serial renamed in
  // one of its reports.
  std::string victim;
  for (const auto& r : f.gen.reports) {
    if (r.json.find("\"" + serial + "\"") != std::string::npos) victim = r.source;
  }
  ASSERT_FALSE(victim.empty());
  std::string text;
  {
    std::ifstream in(f.File(victim));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string renamed = serial;
  renamed.back() = renamed.back() == 'Z' ? 'Y' : 'Z';
  for (size_t p = 0; (p = text.find("\"" + serial + "\"", p)) != std::string::npos;) {
    text.replace(p + 1, serial.size(), renamed);
  }
  {
    std::fstream out(f.File(victim), std::ios::in | std::ios::out | std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  struct stat st;
  ASSERT_EQ(::stat(f.File(victim).c_str(), &st), 0);
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 1;  // a later write (the clock tick may be coarser than the test)
  ASSERT_EQ(::utimensat(AT_FDCWD, f.File(victim).c_str(), times, 0), 0);
  Answer changed = ask();
  EXPECT_FALSE(changed.stats.from_query_index);
  EXPECT_EQ(changed.stats.files_parsed, 1u);
  EXPECT_NE(changed.json, before.json);
  EXPECT_EQ(changed.json, Full(dir, true, serial, now).json);
  EXPECT_TRUE(ask().stats.from_query_index);

  // Added: a copy of a report under another name is a duplicate, an input problem.
  f.reports.Write("zz-copy.json", f.gen.reports.front().json);
  Answer added = ask();
  EXPECT_FALSE(added.stats.from_query_index);
  EXPECT_EQ(added.problems, Full(dir, true, serial, now).problems);
  EXPECT_EQ(added.problems, changed.problems + 1);
  EXPECT_TRUE(ask().stats.from_query_index);

  // Removed: the changed report gone.
  std::filesystem::remove(f.File(victim));
  Answer removed = ask();
  EXPECT_FALSE(removed.stats.from_query_index);
  EXPECT_EQ(removed.json, Full(dir, true, serial, now).json);
  Answer again = ask();
  EXPECT_TRUE(again.stats.from_query_index);
  EXPECT_EQ(again.json, removed.json);

  // Another clock: built at `now`, not trusted before it.
  EXPECT_FALSE(Query(dir, f.index, true, serial, now - 10).stats.from_query_index);
}

// Rewrites report `file` in place with `from` replaced by `to` (same length) and moves its
// mtime one second on; the directory's mtime does not move.
void RewriteInPlace(const std::string& file, const std::string& from, const std::string& to) {
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_EQ(from.size(), to.size());
  ASSERT_NE(text.find(from), std::string::npos);
  for (size_t p = 0; (p = text.find(from, p)) != std::string::npos; p += to.size()) {
    text.replace(p, to.size(), to);
  }
  {
    std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  struct stat st;
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 1;
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
}

// Moves the mtime and ctime of directory `dir` (an entry added and removed).
void TouchDir(const std::string& dir) {
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 1;
  ASSERT_EQ(::utimensat(AT_FDCWD, dir.c_str(), times, 0), 0);
}

TEST(FleetQueryIndexTest, TrustingDirectoryMtimesSkipsTheFileStatsAndMissesOnlyInPlaceRewrites) {
  Fleet f(60);
  const int64_t now = f.gen.now_s;
  const std::string serial = f.gen.truth.card_verdicts.begin()->first;
  const std::string dir = f.reports.path();
  // Half the reports in a subdirectory, one of them reached through a symbolic link.
  std::filesystem::create_directories(dir + "/sub");
  std::string in_sub, linked, victim;
  for (size_t i = 0; i < f.gen.reports.size(); ++i) {
    const auto& r = f.gen.reports[i];
    const bool has = r.json.find("\"" + serial + "\"") != std::string::npos;
    if (i % 2 == 0 || has) continue;
    std::filesystem::rename(f.File(r.source), dir + "/sub/" + r.source + ".json");
    if (in_sub.empty()) in_sub = r.source;
  }
  for (const auto& r : f.gen.reports) {
    if (r.json.find("\"" + serial + "\"") != std::string::npos) victim = r.source;
  }
  ASSERT_FALSE(victim.empty());
  ASSERT_FALSE(in_sub.empty());
  // The victim's report lives in a folder of its own and is read through a link.
  std::filesystem::create_directories(dir + "/../linked-" + std::to_string(::getpid()));
  const std::string target = dir + "/../linked-" + std::to_string(::getpid()) + "/r.json";
  std::filesystem::rename(f.File(victim), target);
  std::filesystem::create_symlink(target, f.File(victim));

  auto ask = [&](Freshness fr) { return Query(dir, f.index, true, serial, now, fr); };
  const Answer full = ask(Freshness::kEveryFile);  // builds the index
  ASSERT_FALSE(full.stats.from_query_index);
  Answer trusted = ask(Freshness::kDirectoryMtime);
  EXPECT_TRUE(trusted.stats.from_query_index) << trusted.stats.index_note;
  EXPECT_TRUE(trusted.stats.trusted_dir_mtime);
  EXPECT_EQ(trusted.json, full.json);
  Answer plain = ask(Freshness::kEveryFile);
  EXPECT_TRUE(plain.stats.from_query_index);
  EXPECT_FALSE(plain.stats.trusted_dir_mtime);

  // A report in the subdirectory rewritten in place: the documented limit of trusting
  // directories (the old answer), while the default query sees it and reads again.
  const std::string sub_file = dir + "/sub/" + in_sub + ".json";
  RewriteInPlace(sub_file, "{", "{");  // the same bytes: only the file's mtime moves
  Answer stale = ask(Freshness::kDirectoryMtime);
  EXPECT_TRUE(stale.stats.trusted_dir_mtime);
  Answer seen = ask(Freshness::kEveryFile);
  EXPECT_FALSE(seen.stats.from_query_index);
  EXPECT_EQ(seen.stats.files_parsed, 1u);

  // The linked report's target rewritten in place: links are stamped one by one, so even the
  // trusting query sees it.
  std::string renamed = serial;
  renamed.back() = renamed.back() == 'Z' ? 'Y' : 'Z';
  RewriteInPlace(target, "\"" + serial + "\"", "\"" + renamed + "\"");
  Answer via_link = ask(Freshness::kDirectoryMtime);
  EXPECT_FALSE(via_link.stats.trusted_dir_mtime);
  EXPECT_FALSE(via_link.stats.from_query_index);
  EXPECT_NE(via_link.json, full.json);
  EXPECT_EQ(via_link.json, Full(dir, true, serial, now).json);
  EXPECT_TRUE(ask(Freshness::kDirectoryMtime).stats.trusted_dir_mtime);

  // A report added to the subdirectory (its mtime moves): seen.
  f.reports.Write("sub/zz-copy.json", f.gen.reports.front().json);
  Answer added = ask(Freshness::kDirectoryMtime);
  EXPECT_FALSE(added.stats.trusted_dir_mtime);
  EXPECT_FALSE(added.stats.from_query_index);
  EXPECT_EQ(added.problems, Full(dir, true, serial, now).problems);
  EXPECT_TRUE(ask(Freshness::kDirectoryMtime).stats.trusted_dir_mtime);

  // A directory touched with no report changed: every file is stat-ed, the index answers.
  TouchDir(dir);
  Answer touched = ask(Freshness::kDirectoryMtime);
  EXPECT_TRUE(touched.stats.from_query_index) << touched.stats.index_note;
  EXPECT_FALSE(touched.stats.trusted_dir_mtime);
  EXPECT_EQ(touched.json, added.json);
  // ... and saved this walk's stamps: the next trusting query is quick again.
  Answer healed = ask(Freshness::kDirectoryMtime);
  EXPECT_TRUE(healed.stats.trusted_dir_mtime) << healed.stats.index_note;
  EXPECT_EQ(healed.json, added.json);
  // Stamps saved by a query keep the default exact: a rewrite in place is still seen.
  RewriteInPlace(sub_file, "{", "{");
  EXPECT_FALSE(ask(Freshness::kEveryFile).stats.from_query_index);
  std::filesystem::remove_all(dir + "/../linked-" + std::to_string(::getpid()));
}

TEST(FleetQueryIndexTest, PayloadCutShortAnywhereDoesNotDecode) {
  // The directory stamps are the payload's last section and the header reads them all: a
  // payload cut at any length decodes to nothing (bounds-checked, never read past).
  Fleet f(20);
  const int64_t now = f.gen.now_s;
  const std::string serial = *f.gen.truth.serials.begin();
  Query(f.reports.path(), f.index, true, serial, now);
  std::string bytes;
  {
    std::ifstream in(QueryIndexPath(f.index), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  constexpr size_t kHeader = 11 + 4 + 8 + 8;
  ASSERT_GT(bytes.size(), kHeader);
  const std::string payload = bytes.substr(kHeader);
  ASSERT_TRUE(AnswerFromQueryPayload(payload, true, serial, nullptr).has_value());
  for (size_t n = 0; n < payload.size(); n += (n < 200 || payload.size() - n < 200) ? 1 : 97) {
    const std::string cut = payload.substr(0, n);  // its own buffer: no reading past it
    EXPECT_FALSE(AnswerFromQueryPayload(cut, true, serial, nullptr).has_value()) << n;
  }
}

TEST(FleetQueryIndexTest, CorruptQueryIndexIsIgnored) {
  Fleet f(20);
  const int64_t now = f.gen.now_s;
  const std::string serial = *f.gen.truth.serials.begin();
  Answer good = Query(f.reports.path(), f.index, true, serial, now);
  const std::string qpath = QueryIndexPath(f.index);
  std::string bytes;
  {
    std::ifstream in(qpath, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 200u);
  bytes[bytes.size() / 2] ^= 0x5a;
  {
    std::ofstream out(qpath, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  ReadStats st;
  EXPECT_FALSE(QueryFromIndex(qpath, f.reports.path(), true, serial, now,
                              SteadyClock::now() + kTimeout, &st));
  EXPECT_NE(st.index_note.find("checksum"), std::string::npos) << st.index_note;
  Answer rebuilt = Query(f.reports.path(), f.index, true, serial, now);
  EXPECT_EQ(rebuilt.json, good.json);
  EXPECT_TRUE(Query(f.reports.path(), f.index, true, serial, now).stats.from_query_index);
}

}  // namespace
}  // namespace gpudoctor::fleet
