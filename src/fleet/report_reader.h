// Reads `gpudoctor check --json` reports into FleetData. Input: one report (a JSON object as
// check --json prints it, any gpudoctor version: unknown fields are ignored, missing ones stay
// absent), a stream of concatenated reports (`-`: stdin; pdsh output with its "HOST: " line
// prefixes is demultiplexed per host first), or a directory of *.json files (read in name
// order, subdirectories too, up to 8 levels deep, at most a million files; deeper directories
// and symbolic links to directories are listed as skipped; other files ignored). Only regular files
// are read (a FIFO or device named *.json is a problem, not a hang), each at most 16 MiB (stdin 256
// MiB), each within per_file_timeout; after one file times out the rest of that directory is
// skipped. A bad file or document is recorded as an InputProblem naming file (and node when known)
// and skipped; it never aborts the rest. A report of a node at a time already seen is a duplicate
// and skipped (reported). Times and values are validated, and what is rejected is listed in
// FleetData::problems: a report dated before 2020 (an unset clock) or more than a day ahead of
// `now_s` is skipped; one more than 10 minutes ahead is flagged as clock skew (kept); a GPU
// value outside its physical range (SM clock 0..10000 MHz, power 0..5000 W, utilisation
// 0..100 %, temperature -40..150 C, or not finite) is dropped, as if absent; a finding repeated
// within one report is kept once. Not thread-safe on one FleetData.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "fleet/fleet_model.h"
#include "fleet/report_parse.h"

namespace gpudoctor::fleet {

// Parses one report document. On error returns it (nothing added).
Status AddReport(std::string_view json_text, const std::string& source, int64_t now_s,
                 FleetData& data);

// Adds one parsed report (report_parse.h): the checks that need other reports or the reading
// host's clock (duplicates, dates, clock skew), then cards, samples, job labels and findings.
Status AddParsedReport(const ParsedReport& report, const std::string& source, int64_t now_s,
                       FleetData& data);
// The same, moving the report's findings into `data` (a report not kept afterwards).
Status AddParsedReport(ParsedReport&& report, const std::string& source, int64_t now_s,
                       FleetData& data);

// Splits a stream of concatenated JSON objects (whitespace or newlines between them) into
// documents. Text outside any object is returned as a separate chunk, so it is reported. A
// document cut short (the stream ends inside it, or a string runs into a newline) ends where a
// line starting with '{' begins, so a truncated report never swallows the next one.
std::vector<std::string_view> SplitDocuments(std::string_view stream);

// pdsh output ("HOST: " before every line, hosts' lines interleaved): the text of each host,
// prefixes removed, in order of first appearance; lines without a prefix under host "". Empty
// when the first non-blank line has no "HOST: " prefix (not pdsh output).
std::vector<std::pair<std::string, std::string>> SplitPdshStreams(std::string_view stream);

// Reads a stream: every document through AddReport, problems recorded as "<source>#<n>" (pdsh
// output: "<source>:<host>#<n>", each host's documents split separately).
void AddReportStream(std::string_view stream, const std::string& source, int64_t now_s,
                     FleetData& data);

// Skips the reports more than 180 days from the median report time (a node whose clock is
// wrong would otherwise stretch the observed GPU-time), with their samples and findings, and
// lists each in data.problems. Needs 3 reports or more; ReadReports calls it.
void DropTimeOutliers(FleetData& data);

// Reads a directory (or one file, or "-" for stdin). Errors only when the path cannot be read.
Status ReadReports(const std::string& path, int64_t now_s, FleetData& data,
                   std::chrono::milliseconds per_file_timeout = std::chrono::seconds(10));

// What one ReadReports did: files parsed, files taken from the index (report_index.h), and why
// the index was not used or not saved ("" when all went well).
// For a directory also: the fingerprint of its report files (ReportsFingerprint, taken before
// the files were read), and until when (now_s) the result stays the same for the same files: a
// report ahead of the clock is judged again once the clock reaches it (INT64_MAX: forever).
// A card or slot query answered from the query index (query_index.h) counts the ledger
// records it decoded (records_decoded of records_total) and parses no report.
struct ReadStats {
  size_t files_parsed = 0;
  size_t files_from_index = 0;
  bool index_saved = false;
  std::string index_note;
  uint64_t fingerprint = 0;
  std::vector<std::string> stamp_paths;  // the walk's directory stamps (report_walk.h)
  uint64_t stamp_hash = 0;
  int64_t stable_until_s = 0;
  bool from_query_index = false;
  bool trusted_dir_mtime = false;  // answered on the directory stamps alone (query_index.h)
  size_t records_decoded = 0;
  size_t records_total = 0;
};

// As above; for a directory with a non-empty `index_path`, unchanged files (same size and
// mtime) come from that index instead of being parsed, and the index is updated when anything
// changed. The result is the same as without the index.
Status ReadReports(const std::string& path, int64_t now_s, FleetData& data,
                   std::chrono::milliseconds per_file_timeout, const std::string& index_path,
                   ReadStats* stats);

// A hash of what ReadReports would read from directory `dir`: every report file's path, size
// and modification time (ns), and the directories the walk skipped (report_walk.h). One stat
// per file, no read: a file added, removed, renamed or rewritten (its mtime moves) changes it.
// A timeout error when the stats make no progress for `stall`.
Result<uint64_t> ReportsFingerprint(const std::string& dir,
                                    std::chrono::milliseconds stall = std::chrono::seconds(10));

// Where the CLI keeps the index of reports directory `dir`: $XDG_CACHE_HOME (else
// $HOME/.cache)/gpudoctor/fleet-index-<hash of the absolute path>.idx; "" when neither variable
// is set or GPUDOCTOR_FLEET_INDEX=off. The directory is created when missing.
std::string DefaultIndexPath(const std::string& dir);

}  // namespace gpudoctor::fleet
