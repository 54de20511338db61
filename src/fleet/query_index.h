// The query index: what `fleet card SERIAL` and `fleet slot NODE:BUS` read (ledger.h: the
// tenures and the hardware faults), kept beside the report index (report_index.h) so that a
// query on an unchanged reports directory reads neither the reports nor the report index, only
// the records of its serial or slot. Records are stored once, in ledger order, with two
// tables: serial -> its tenures and faults; slot (node, canonical bus id) -> its tenures and
// faults. A card query decodes its serial's records and the faults of the slots it faulted in; a
// slot query its slot's records and the faults of the serials that faulted there: exactly
// what JudgeCard / JudgeSlot look at, so the verdict equals the one from the full data. A
// subject not in the tables ("unknown", which lists the nearest names) decodes every record.
// Freshness: the index holds the reports directory's fingerprint (ReportsFingerprint: every
// file's path, size and mtime) and the clock range the answer holds for; a query whose
// fingerprint or clock differs is not answered from it (the caller reads the reports and saves
// a new one). File: magic "GDFLEETQRY", version, payload length and checksum, payload; one
// that does not check out or decode is ignored, never used in part. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "fleet/ledger.h"
#include "fleet/report_reader.h"

namespace gpudoctor::fleet {

// What the full read gave, for the CLI's output and checks.
struct QueryIndexHead {
  uint64_t fingerprint = 0;    // ReadStats::fingerprint of the read
  int64_t built_now_s = 0;     // the now_s of the read
  int64_t stable_until_s = 0;  // ReadStats::stable_until_s
  uint64_t reports = 0;        // data.reports.size()
  uint64_t problems = 0;       // data.problems.size()
  // The read's directory stamps (ReadStats::stamp_paths / stamp_hash, report_walk.h), for
  // queries that trust directory mtimes.
  std::vector<std::string> stamp_paths;
  uint64_t stamp_hash = 0;
};

// Writes the index atomically (temporary file + rename).
Status SaveQueryIndex(const std::string& path, const QueryIndexHead& head,
                      const std::vector<Tenure>& ledger, const std::vector<Fault>& faults);

// True when the index at `path` is intact and answers for reports with `fingerprint` and
// directory stamps `stamp_hash` at `now_s` (so a run that read the same reports need not write
// it again; stamps that moved are saved anew, so that queries trusting them are quick again).
// Read within `deadline`.
bool QueryIndexIsFresh(const std::string& path, uint64_t fingerprint, uint64_t stamp_hash,
                       int64_t now_s, TimePoint deadline);

struct QueryAnswer {
  Verdict verdict;
  QueryIndexHead head;
};

// How a query decides that the reports did not change since the index was built.
enum class Freshness {
  kEveryFile,      // the default: every report file's size and mtime (ReportsFingerprint)
  kDirectoryMtime  // opt-in (--trust-dir-mtime): the directories' stamps alone (StampHash:
                   // one stat per directory, none per file) when they did not move, else every
                   // file as above (and when the reports did not change, that walk's stamps
                   // are saved into the index). A report rewritten in place (its directory
                   // untouched) is not seen until a file is added, removed or renamed beside it.
};

// The verdict on "card SERIAL" (card = true) or "slot NODE:BUS" from the index at `path`, when
// it is there, intact, and fresh for reports directory `dir` at `now_s` (built_now_s <= now_s
// < stable_until_s, and the reports unchanged as `freshness` checks it); otherwise nullopt
// and `stats->index_note` says why. Read within `deadline`. Sets stats->from_query_index,
// records_decoded, records_total and trusted_dir_mtime.
std::optional<QueryAnswer> QueryFromIndex(const std::string& path, const std::string& dir,
                                          bool card, const std::string& subject, int64_t now_s,
                                          TimePoint deadline, ReadStats* stats,
                                          Freshness freshness = Freshness::kEveryFile);

// The decoding and judging part of QueryFromIndex on an index's payload (the bytes after the
// file header), without the checksum or the freshness checks: for fuzzing and tests. nullopt
// when the payload does not decode; never reads out of `payload`. Sets stats (when given) as
// QueryFromIndex does.
std::optional<QueryAnswer> AnswerFromQueryPayload(std::string_view payload, bool card,
                                                  const std::string& subject, ReadStats* stats);

// The query index path beside report index `index_path` ("" for "").
std::string QueryIndexPath(const std::string& index_path);

}  // namespace gpudoctor::fleet
