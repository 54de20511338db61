#include "fleet/report_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>

#include "core/input_file.h"
#include "core/root_fs.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "facts/gpu_facts.h"
#include "fleet/report_index.h"
#include "fleet/report_walk.h"
#include "rules/stored_action.h"

namespace gpudoctor::fleet {
namespace {

constexpr int64_t kFutureToleranceS = 600;
constexpr int64_t kMaxFutureS = 86400;
constexpr int64_t kEarliestReportS = 1577836800;  // 2020-01-01T00:00:00Z
// A report this far from the median of the others is from a node with a wrong clock.
constexpr int64_t kMaxSpreadS = 180 * 86400;
constexpr size_t kMaxFileBytes = 16u << 20;
constexpr size_t kMaxStreamBytes = 256u << 20;

// AddParsedReport; kMove: the report's findings are moved into `data`, not copied.
template <bool kMove>
Status AddParsed(std::conditional_t<kMove, ParsedReport&, const ParsedReport&> r,
                 const std::string& source, int64_t now_s, FleetData& data) {
  const std::string& host = r.host;
  const std::string& time_text = r.time_text;
  const int64_t t = r.time_s;
  auto [seen, inserted] = data.seen.emplace(std::make_pair(host, t), source);
  if (!inserted) {
    data.problems.push_back({source, host,
                             "duplicate report of node " + host + " at " + time_text +
                                 " (first read from " + seen->second + "); skipped"});
    return Status::Ok();
  }
  if (t < kEarliestReportS) {
    data.seen.erase(seen);
    data.problems.push_back(
        {source, host,
         "report time " + time_text + " is before 2020 (the node's clock was not set): skipped"});
    return Status::Ok();
  }
  if (t > now_s + kMaxFutureS) {
    data.seen.erase(seen);
    data.problems.push_back({source, host,
                             "clock skew: report time " + time_text + " is " +
                                 std::to_string((t - now_s) / 3600) +
                                 " h ahead of this host's clock: skipped"});
    return Status::Ok();
  }
  if (t > now_s + kFutureToleranceS) {
    data.problems.push_back({source, host,
                             "clock skew: report time " + time_text + " is " +
                                 std::to_string((t - now_s) / 60) +
                                 " min in the future; its windows may not line up with peers"});
  }
  NodeReport rep;
  rep.node = host;
  rep.source = source;
  rep.verdict = r.verdict;
  rep.time_s = t;
  rep.job = r.job;
  std::string rejected_all;
  for (const auto& g : r.gpus) {
    Card card = g.card;
    card.node = host;
    GpuSample s = g.sample;
    s.card = data.InternCard(card);
    s.time_s = t;
    data.samples.push_back(s);
    const std::string& job = g.job.empty() ? r.job : g.job;
    if (!job.empty()) data.card_jobs.push_back({s.card, t, job});
    if (!g.rejected.empty()) {
      rejected_all += (rejected_all.empty() ? "" : "; ") + std::string("GPU ") +
                      std::to_string(rep.gpu_count) + ": " + g.rejected;
    }
    ++rep.gpu_count;
  }
  if (!rejected_all.empty()) {
    data.problems.push_back(
        {source, host, "values out of physical range, dropped: " + rejected_all});
  }
  if (rep.gpu_count == 0 && !r.has_gpus) {
    data.problems.push_back({source, host,
                             "no \"gpus\" facts (older gpudoctor version, or GPU probes off): "
                             "node " +
                                 host + " has no GPU rows and is not compared with peers"});
  }
  for (auto& e : r.findings) {
    if constexpr (kMove) {
      data.findings.push_back(std::move(e));
    } else {
      data.findings.push_back(e);
    }
    data.findings.back().node = host;
    data.findings.back().time_s = t;
  }
  for (const auto& [id, n] : r.repeats) {
    data.problems.push_back({source, host,
                             "finding " + id + " repeated " + std::to_string(n) +
                                 " times in one report: counted once"});
  }
  data.reports.push_back(std::move(rep));
  return Status::Ok();
}

}  // namespace

Status AddParsedReport(const ParsedReport& r, const std::string& source, int64_t now_s,
                       FleetData& data) {
  return AddParsed<false>(r, source, now_s, data);
}

Status AddParsedReport(ParsedReport&& r, const std::string& source, int64_t now_s,
                       FleetData& data) {
  return AddParsed<true>(r, source, now_s, data);
}

void DropTimeOutliers(FleetData& data) {
  if (data.reports.size() < 3) return;
  std::vector<int64_t> times;
  times.reserve(data.reports.size());
  for (const auto& r : data.reports) times.push_back(r.time_s);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  const int64_t median = times[times.size() / 2];
  std::set<std::pair<std::string, int64_t>> drop;
  for (const auto& r : data.reports) {
    if (r.time_s >= median - kMaxSpreadS && r.time_s <= median + kMaxSpreadS) continue;
    drop.insert({r.node, r.time_s});
    data.seen.erase({r.node, r.time_s});
    data.problems.push_back({r.source, r.node,
                             "report time " + FormatUtc(r.time_s) + " is " +
                                 std::to_string(std::llabs(r.time_s - median) / 86400) +
                                 " days away from the other reports (median " + FormatUtc(median) +
                                 "): the node's clock is wrong; skipped"});
  }
  if (drop.empty()) return;
  std::erase_if(data.reports, [&](const NodeReport& r) {
    return drop.count({r.node, r.time_s}) != 0;
  });
  std::erase_if(data.samples, [&](const GpuSample& s) {
    return drop.count({data.cards[s.card].node, s.time_s}) != 0;
  });
  std::erase_if(data.findings, [&](const FindingEvent& e) {
    return drop.count({e.node, e.time_s}) != 0;
  });
  std::erase_if(data.card_jobs, [&](const CardJob& j) {
    return drop.count({data.cards[j.card].node, j.time_s}) != 0;
  });
  if (!data.sample_at.empty()) {  // indices into samples changed
    data.sample_at.clear();
    for (size_t i = 0; i < data.samples.size(); ++i) {
      data.sample_at[{data.samples[i].card, data.samples[i].time_s}] = i;
    }
  }
}

Status AddReport(std::string_view text, const std::string& source, int64_t now_s, FleetData& data) {
  auto parsed = ParseReportJson(text);
  if (!parsed.ok()) return parsed.status();
  return AddParsedReport(std::move(*parsed), source, now_s, data);
}

std::vector<std::string_view> SplitDocuments(std::string_view s) {
  std::vector<std::string_view> docs;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
    if (i >= s.size()) break;
    size_t start = i;
    if (s[i] != '{') {
      while (i < s.size() && s[i] != '{') ++i;  // junk up to the next object
      docs.push_back(s.substr(start, i - start));
      continue;
    }
    int depth = 0;
    bool in_string = false, escape = false;
    // Evidence that this document is cut short: a raw newline inside a string (JSON strings
    // hold none), or the stream ending before the object closes. Then the first line that
    // starts with '{' (where gpudoctor starts every report) begins the next document.
    bool broken = false;
    size_t next_line_object = std::string_view::npos;
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (c == '\n' && i + 1 < s.size() && s[i + 1] == '{' &&
          next_line_object == std::string_view::npos) {
        next_line_object = i + 1;
      }
      if (in_string) {
        if (c == '\n') {
          broken = true;
          in_string = escape = false;
        } else if (escape) {
          escape = false;
        } else if (c == '\\') {
          escape = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth <= 0) {
          ++i;
          break;
        }
      }
    }
    if (depth > 0 || in_string) broken = true;
    if (broken && next_line_object != std::string_view::npos) {
      docs.push_back(s.substr(start, next_line_object - start));  // reported as truncated
      i = next_line_object;
      continue;
    }
    docs.push_back(s.substr(start, i - start));
  }
  return docs;
}

std::vector<std::pair<std::string, std::string>> SplitPdshStreams(std::string_view stream) {
  std::vector<std::pair<std::string, std::string>> out;
  // The host prefix of one line ("node07: "), or empty. JSON lines start with '{', '}', ']',
  // '"' or blanks, never with a host name.
  auto prefix_of = [](std::string_view line) -> std::string_view {
    size_t n = 0;
    while (n < line.size() && n < 256 &&
           (std::isalnum(static_cast<unsigned char>(line[n])) || line[n] == '.' || line[n] == '-' ||
            line[n] == '_')) {
      ++n;
    }
    if (n == 0 || n + 1 >= line.size() || line[n] != ':' || line[n + 1] != ' ') return {};
    return line.substr(0, n);
  };
  size_t pos = 0;
  bool first = true;
  std::map<std::string, size_t, std::less<>> index;
  while (pos < stream.size()) {
    size_t end = stream.find('\n', pos);
    if (end == std::string_view::npos) end = stream.size();
    std::string_view line = stream.substr(pos, end - pos);
    pos = end + 1;
    if (first) {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (prefix_of(line).empty()) return {};  // not pdsh output
      first = false;
    }
    std::string_view host = prefix_of(line);
    if (!host.empty()) line.remove_prefix(host.size() + 2);
    auto it = index.find(host);
    if (it == index.end()) {
      it = index.emplace(std::string(host), out.size()).first;
      out.emplace_back(std::string(host), std::string());
    }
    out[it->second].second.append(line).push_back('\n');
  }
  return out;
}

namespace {

// Parses each document of `stream`, named "<source>#<n>".
void ParseDocuments(std::string_view stream, const std::string& source,
                    std::vector<IndexedDoc>& out) {
  int n = 0;
  for (auto doc : SplitDocuments(stream)) {
    ++n;
    IndexedDoc d;
    d.source = source + "#" + std::to_string(n);
    auto parsed = ParseReportJson(doc);
    if (parsed.ok()) {
      d.ok = true;
      d.report = std::move(*parsed);
    } else {
      d.error = parsed.status().message();
    }
    out.push_back(std::move(d));
  }
}

void ParseStream(std::string_view stream, const std::string& source, std::vector<IndexedDoc>& out) {
  auto hosts = SplitPdshStreams(stream);
  if (hosts.empty()) {
    ParseDocuments(stream, source, out);
    return;
  }
  for (const auto& [host, text] : hosts) {
    ParseDocuments(text, host.empty() ? source : source + ":" + host, out);
  }
}

// The documents of one report file: one report (named by the file), or a stream of them.
// `text` is followed by kReportParsePadding readable bytes (ReadReportFile's buffer).
std::vector<IndexedDoc> ParseFile(std::string_view text, const std::string& file) {
  std::vector<IndexedDoc> out;
  // A file that parses as one document is one report (two or more documents never parse as
  // one); only a file that does not is split, to tell a stream from a broken report.
  auto parsed = ParseReportJsonPadded(text);
  if (parsed.ok() || SplitDocuments(text).size() <= 1) {
    IndexedDoc d;
    d.source = file;
    if (parsed.ok()) {
      d.ok = true;
      d.report = std::move(*parsed);
    } else {
      d.error = parsed.status().message();
    }
    out.push_back(std::move(d));
  } else {
    ParseStream(text, file, out);
  }
  return out;
}

// Reads regular file `path` into `buf`, reused from file to file (no allocation per file),
// with kReportParsePadding bytes of room after the text for the parser; the text's length.
// Anything unusual (not a regular file, too large, a read error, a file that grows while
// read) is left to ReadRegularInputFile, which names it.
Result<size_t> ReadReportFile(const std::string& path, std::string& buf) {
  struct stat st {};
  const int fd = OpenRegularFile(path, &st);
  if (fd >= 0) {
    if (static_cast<uint64_t>(st.st_size) <= kMaxFileBytes) {
      const auto size = static_cast<size_t>(st.st_size);
      if (buf.size() < size + 1 + kReportParsePadding) buf.resize(size + 1 + kReportParsePadding);
      size_t got = 0;
      bool ok = true;
      while (got <= size) {  // one byte more than the size: a file that grew is read again
        const ssize_t n = ::read(fd, buf.data() + got, size + 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          ok = n == 0;
          break;
        }
        got += static_cast<size_t>(n);
      }
      ::close(fd);
      if (ok && got <= size) return got;
    } else {
      ::close(fd);
    }
  }
  auto text = ReadRegularInputFile(path, kMaxFileBytes);
  if (!text.ok()) return text.status();
  buf.assign(*text);
  buf.resize(text->size() + kReportParsePadding);
  return text->size();
}

// Reads and parses files on worker threads (file i on worker i mod K), at most kAhead files
// ahead of the consumer, who takes them in order: parsing spreads over the cores, reading
// overlaps parsing, and a directory costs K workers, not one hand-off per file. Each Next()
// waits at most until its deadline; a file that does not come in time abandons the workers (a
// hung filesystem: a read never returns).
struct ParsedFile {
  size_t bytes = 0;
  std::vector<IndexedDoc> docs;
};

// One file read (into this thread's buffer) and parsed.
Result<ParsedFile> ReadAndParse(const std::string& path) {
  thread_local std::string buf;
  auto size = ReadReportFile(path, buf);
  if (!size.ok()) return size.status();
  ParsedFile r{*size, ParseFile(std::string_view(buf.data(), *size), path)};
  if (buf.capacity() > (size_t{1} << 20)) std::string().swap(buf);  // after a large file
  return r;
}

class ReadAhead {
 public:
  static constexpr size_t kAhead = 64;
  explicit ReadAhead(std::vector<std::string> paths) : shared_(std::make_shared<Shared>()) {
    shared_->results.resize(paths.size());
    shared_->paths = std::move(paths);
    const size_t n = shared_->paths.size();
    if (n == 0) return;
    const size_t workers =
        std::clamp<size_t>(std::thread::hardware_concurrency(), 1, std::min<size_t>(4, n));
    for (size_t k = 0; k < workers; ++k) {
      started_ |= RunOnWorker([s = shared_, k, workers] {
        for (size_t i = k; i < s->paths.size(); i += workers) {
          {
            std::unique_lock lock(s->mu);
            s->room.wait(lock, [&] { return s->abandoned || i < s->taken + kAhead; });
            if (s->abandoned) return;
          }
          Result<ParsedFile> r = ReadAndParse(s->paths[i]);
          std::lock_guard lock(s->mu);
          s->results[i].emplace(std::move(r));
          if (s->waiting == i) s->ready.notify_one();
        }
      });
    }
  }
  ~ReadAhead() {
    std::lock_guard lock(shared_->mu);
    shared_->abandoned = true;
    shared_->room.notify_all();
  }
  // The next file, parsed, or its error; a timeout error when it did not come by `deadline`.
  Result<ParsedFile> Next(TimePoint deadline) {
    Shared& s = *shared_;
    std::unique_lock lock(s.mu);
    const size_t i = s.taken;
    s.waiting = i;
    bool ok =
        started_ && s.ready.wait_until(lock, deadline, [&] { return s.results[i].has_value(); });
    s.waiting = SIZE_MAX;
    if (!ok) {
      if (started_) CountAbandonedWorker();
      s.abandoned = true;
      s.room.notify_all();
      return InputTimeoutError(s.paths[i]);
    }
    Result<ParsedFile> r = std::move(*s.results[i]);
    s.results[i].reset();
    ++s.taken;
    s.room.notify_all();
    return r;
  }

 private:
  struct Shared {
    std::mutex mu;
    std::condition_variable ready, room;
    std::vector<std::string> paths;
    std::vector<std::optional<Result<ParsedFile>>> results;
    size_t taken = 0, waiting = SIZE_MAX;
    bool abandoned = false;
  };
  std::shared_ptr<Shared> shared_;
  bool started_ = false;
};

constexpr int64_t kForever = INT64_MAX;

// The earliest now_s (after `now_s`) at which report time `t` is judged differently by
// AddParsedReport (no longer skipped as too far ahead, no longer flagged as clock skew).
int64_t ChangePoint(int64_t t, int64_t now_s) {
  int64_t at = kForever;
  if (t - kMaxFutureS > now_s) at = std::min(at, t - kMaxFutureS);
  if (t - kFutureToleranceS > now_s) at = std::min(at, t - kFutureToleranceS);
  return at;
}

// Applies documents; `docs` is an rvalue when they are not kept (moved from, not copied).
template <typename Docs>
void ApplyDocs(Docs&& docs, int64_t now_s, FleetData& data, int64_t* stable_until_s = nullptr) {
  constexpr bool kMove = !std::is_lvalue_reference_v<Docs>;
  for (auto& d : docs) {
    if (stable_until_s != nullptr && d.ok) {
      *stable_until_s = std::min(*stable_until_s, ChangePoint(d.report.time_s, now_s));
    }
    Status s = Status::Ok();
    if (!d.ok) {
      s = ParseError(d.error);
    } else if constexpr (kMove) {
      s = AddParsedReport(std::move(d.report), d.source, now_s, data);
    } else {
      s = AddParsedReport(d.report, d.source, now_s, data);
    }
    if (!s.ok()) data.problems.push_back({d.source, "", s.message()});
  }
}

}  // namespace

void AddReportStream(std::string_view stream, const std::string& source, int64_t now_s,
                     FleetData& data) {
  std::vector<IndexedDoc> docs;
  ParseStream(stream, source, docs);
  ApplyDocs(std::move(docs), now_s, data);
}

Status ReadReports(const std::string& path, int64_t now_s, FleetData& data,
                   std::chrono::milliseconds per_file_timeout) {
  return ReadReports(path, now_s, data, per_file_timeout, "", nullptr);
}

Status ReadReports(const std::string& path, int64_t now_s, FleetData& data,
                   std::chrono::milliseconds per_file_timeout, const std::string& index_path,
                   ReadStats* stats) {
  ReadStats local;
  ReadStats& st = stats ? *stats : local;
  auto deadline = [&] { return SteadyClock::now() + per_file_timeout; };
  if (path == "-") {
    auto text = ReadInputFile("-", kMaxStreamBytes, deadline());
    if (!text.ok()) return text.status();
    AddReportStream(*text, "stdin", now_s, data);
    ++st.files_parsed;
    DropTimeOutliers(data);
    return Status::Ok();
  }
  auto info = RootFs::Stat(path);
  if (!info.ok()) return NotFound(path + ": no such file or directory");
  std::vector<std::string> files;
  std::vector<std::optional<FileInfo>> file_info;
  const bool use_index = info->is_dir && !index_path.empty();
  if (info->is_dir) {
    auto listing = WalkReports(path, /*with_paths=*/true, per_file_timeout);
    if (!listing.ok()) return listing.status();
    ReportWalk& listed = *listing;
    st.fingerprint = listed.fingerprint;
    st.stamp_paths = std::move(listed.stamp_paths);
    st.stamp_hash = listed.stamp_hash;
    files = std::move(listed.files);
    file_info = std::move(listed.info);
    data.problems.insert(data.problems.end(), listed.problems.begin(), listed.problems.end());
  } else {
    files.push_back(path);
    file_info.emplace_back();
  }
  st.stable_until_s = kForever;
  ReportIndex index;
  size_t loaded = 0, hits = 0;
  bool changed = false;
  if (use_index) {
    index = ReportIndex::Load(index_path, deadline(), &st.index_note);
    loaded = index.size();
    if (!st.index_note.empty()) changed = true;  // corrupt or another version: rebuilt
  }
  // The files to read (not in the index), their stat from before the read, and then the files
  // in order: from the index, or read ahead on the workers and parsed there.
  std::vector<uint8_t> cached(files.size(), 0);
  std::vector<std::string> to_read;
  for (size_t i = 0; i < files.size(); ++i) {
    if (use_index && file_info[i]) {
      cached[i] = index.Has(files[i], file_info[i]->size_bytes, file_info[i]->mtime_unix_ns);
    }
    if (!cached[i]) to_read.push_back(files[i]);
  }
  // Most files are one report of a few GPUs: room for them up front (no regrowth of 1 GB).
  data.reports.reserve(data.reports.size() + files.size());
  data.samples.reserve(data.samples.size() + files.size() * 8);
  // Address space only (untouched until used): no regrowth copies of the cards and job labels.
  data.cards.reserve(data.cards.size() + files.size() * 8);
  data.card_jobs.reserve(data.card_jobs.size() + files.size() * 8);
  ReadAhead reader(std::move(to_read));
  std::vector<IndexedDoc> docs;  // one file's documents from the index (decoded when used)
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& f = files[i];
    Result<ParsedFile> parsed = InputTimeoutError(f);
    if (cached[i]) {
      if (index.Decode(f, file_info[i]->size_bytes, file_info[i]->mtime_unix_ns, docs)) {
        ApplyDocs(std::move(docs), now_s, data, &st.stable_until_s);
        ++hits;
        ++st.files_from_index;
        continue;
      }
      // Its record does not decode: parsed here (it was not read ahead), the index rewritten.
      changed = true;
      if (auto r = RunWithDeadline([f] { return ReadAndParse(f); }, deadline())) {
        parsed = std::move(*r);
      }
    } else {
      parsed = reader.Next(deadline());
    }
    if (!parsed.ok()) {
      data.problems.push_back({f, "", parsed.status().message()});
      // A file that did not answer in time: the filesystem is hung, and every other file on it
      // would cost the same wait.
      if (parsed.status().code() == StatusCode::kTimeout && i + 1 < files.size()) {
        data.problems.push_back({path, "",
                                 std::to_string(files.size() - i - 1) +
                                     " more file(s) not read: the filesystem did not answer"});
        break;
      }
      continue;
    }
    ++st.files_parsed;
    // Kept in the index (encoded) with the size and mtime from before the read: a file changed
    // while read is parsed again next time (its mtime moved on). Then applied and dropped.
    if (use_index && file_info[i] && file_info[i]->size_bytes == parsed->bytes) {
      index.Put(f, file_info[i]->size_bytes, file_info[i]->mtime_unix_ns, parsed->docs);
      changed = true;
    }
    ApplyDocs(std::move(parsed->docs), now_s, data, &st.stable_until_s);
  }
  if (use_index && (changed || hits != loaded)) {
    Status s = index.Save(index_path, files);
    st.index_saved = s.ok();
    if (!s.ok()) st.index_note = s.message();
  }
  DropTimeOutliers(data);
  return Status::Ok();
}

Result<uint64_t> ReportsFingerprint(const std::string& dir, std::chrono::milliseconds stall) {
  auto info = RootFs::Stat(dir);
  if (!info.ok() || !info->is_dir) return IoError(dir + ": not a directory");
  auto listed = WalkReports(dir, /*with_paths=*/false, stall);
  if (!listed.ok()) return listed.status();
  return listed->fingerprint;
}

std::string DefaultIndexPath(const std::string& dir) {
  const char* off = std::getenv("GPUDOCTOR_FLEET_INDEX");
  if (off != nullptr && std::string_view(off) == "off") return "";
  std::string cache;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && x[0] == '/') {
    cache = x;
  } else if (const char* h = std::getenv("HOME"); h != nullptr && h[0] == '/') {
    cache = std::string(h) + "/.cache";
  } else {
    return "";
  }
  std::error_code ec;
  std::string abs = std::filesystem::absolute(dir, ec).lexically_normal().string();
  if (ec) return "";
  while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : abs) {
    h ^= c;
    h *= 1099511628211ull;
  }
  std::string folder = cache + "/gpudoctor";
  std::filesystem::create_directories(folder, ec);
  if (ec) return "";
  char name[64];
  std::snprintf(name, sizeof(name), "/fleet-index-%016llx.idx", static_cast<unsigned long long>(h));
  return folder + name;
}

}  // namespace gpudoctor::fleet
