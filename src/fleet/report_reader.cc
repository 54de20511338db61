#include "fleet/report_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/input_file.h"
#include "core/root_fs.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "facts/gpu_facts.h"
#include "rules/stored_action.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::json;

constexpr int64_t kFutureToleranceS = 600;
constexpr int64_t kMaxFutureS = 86400;
constexpr int64_t kEarliestReportS = 1577836800;  // 2020-01-01T00:00:00Z
// A report this far from the median of the others is from a node with a wrong clock.
constexpr int64_t kMaxSpreadS = 180 * 86400;
constexpr size_t kMaxFileBytes = 16u << 20;
constexpr size_t kMaxStreamBytes = 256u << 20;

std::optional<double> Num(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<int64_t> Int(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  double d = it->get<double>();
  if (!(d >= -9e18 && d <= 9e18)) return std::nullopt;
  return static_cast<int64_t>(d);
}

std::string Str(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

std::optional<uint32_t> Counter(const json& o, const char* key) {
  auto d = Num(o, key);
  if (!d || *d < 0) return std::nullopt;
  return static_cast<uint32_t>(std::min(*d, 4294967295.0));
}

// A value outside its physical range (fleet_model.h) is dropped (absent) and named in
// `rejected`.
std::optional<float> Ranged(const json& o, const char* key, double scale, ValueRange range,
                            const char* unit, std::string& rejected) {
  auto d = Num(o, key);
  if (!d) return std::nullopt;
  double v = *d * scale;
  if (std::isfinite(v) && range.Contains(v)) return static_cast<float>(v);
  if (!rejected.empty()) rejected += ", ";
  rejected += std::string(key) + " " + Sanitize(o.find(key)->dump(), 24) + " (expected " +
              FormatDouble(range.lo / scale, 0) + ".." + FormatDouble(range.hi / scale, 0) + " " +
              unit + ")";
  return std::nullopt;
}

GpuSample SampleFrom(const json& g, const std::string& node, int64_t t, FleetData& data,
                     std::string& rejected) {
  Card c;
  c.node = node;
  if (auto i = Int(g, "index")) c.index = static_cast<int>(*i);
  c.uuid = Str(g, "uuid");
  c.pci_bus_id = CanonicalBusId(Str(g, "pci_bus_id"));
  c.serial = SerialOrEmpty(Str(g, "serial"));
  c.model = Str(g, "name");
  c.max_sm_clock_mhz = Ranged(g, "max_sm_clock_mhz", 1, kSmClockRangeMhz, "MHz", rejected);
  c.power_limit_w = Ranged(g, "power_limit_mw", 1e-3, kPowerRangeW, "mW", rejected);
  GpuSample s;
  s.card = data.InternCard(c);
  s.time_s = t;
  s.sm_clock_mhz = Ranged(g, "sm_clock_mhz", 1, kSmClockRangeMhz, "MHz", rejected);
  s.power_w = Ranged(g, "power_mw", 1e-3, kPowerRangeW, "mW", rejected);
  s.util_pct = Ranged(g, "util_gpu_pct", 1, kUtilRangePct, "%", rejected);
  s.temp_c = Ranged(g, "temp_c", 1, kTempRangeC, "C", rejected);
  // Counters: the later sample of the check's window when present.
  for (const char* key : {"counters_second", "counters_first"}) {
    auto c2 = g.find(key);
    if (c2 == g.end() || !c2->is_object()) continue;
    if (!s.ecc_sbe) s.ecc_sbe = Counter(*c2, "ecc_sbe_volatile");
    if (!s.ecc_dbe) s.ecc_dbe = Counter(*c2, "ecc_dbe_volatile");
    if (!s.pcie_replays) s.pcie_replays = Counter(*c2, "pcie_replays");
    if (!s.clock_event_reasons) s.clock_event_reasons = Counter(*c2, "clock_event_reasons");
  }
  return s;
}

Status AddReportJson(const json& j, const std::string& source, int64_t now_s, FleetData& data) {
  if (!j.is_object()) return ParseError("not a JSON object (not a gpudoctor check --json report)");
  std::string host = Str(j, "host");
  if (host.empty()) return ParseError("no \"host\" (not a gpudoctor check --json report)");
  std::string time_text = Str(j, "time");
  auto t = ParseRfc3339(time_text);
  if (!t)
    return ParseError("node " + host + ": missing or malformed \"time\" '" +
                      time_text.substr(0, 40) + "'");
  auto fit = j.find("findings");
  if (fit == j.end() || !fit->is_array()) {
    return ParseError("node " + host + ": no \"findings\" array (truncated or not a report)");
  }
  auto [seen, inserted] = data.seen.emplace(std::make_pair(host, *t), source);
  if (!inserted) {
    data.problems.push_back({source, host,
                             "duplicate report of node " + host + " at " + time_text +
                                 " (first read from " + seen->second + "); skipped"});
    return Status::Ok();
  }
  if (*t < kEarliestReportS) {
    data.seen.erase(seen);
    data.problems.push_back(
        {source, host,
         "report time " + time_text + " is before 2020 (the node's clock was not set): skipped"});
    return Status::Ok();
  }
  if (*t > now_s + kMaxFutureS) {
    data.seen.erase(seen);
    data.problems.push_back({source, host,
                             "clock skew: report time " + time_text + " is " +
                                 std::to_string((*t - now_s) / 3600) +
                                 " h ahead of this host's clock: skipped"});
    return Status::Ok();
  }
  if (*t > now_s + kFutureToleranceS) {
    data.problems.push_back({source, host,
                             "clock skew: report time " + time_text + " is " +
                                 std::to_string((*t - now_s) / 60) +
                                 " min in the future; its windows may not line up with peers"});
  }
  NodeReport rep;
  rep.node = host;
  rep.source = source;
  rep.verdict = Str(j, "verdict");
  rep.time_s = *t;
  if (auto g = j.find("gpus"); g != j.end() && g->is_array()) {
    std::string rejected_all;
    for (const auto& gj : *g) {
      if (!gj.is_object()) continue;
      std::string rejected;
      data.samples.push_back(SampleFrom(gj, host, *t, data, rejected));
      if (!rejected.empty()) {
        rejected_all += (rejected_all.empty() ? "" : "; ") + std::string("GPU ") +
                        std::to_string(rep.gpu_count) + ": " + rejected;
      }
      ++rep.gpu_count;
    }
    if (!rejected_all.empty()) {
      data.problems.push_back(
          {source, host, "values out of physical range, dropped: " + rejected_all});
    }
  }
  if (rep.gpu_count == 0 && j.find("gpus") == j.end()) {
    data.problems.push_back({source, host,
                             "no \"gpus\" facts (older gpudoctor version, or GPU probes off): "
                             "node " +
                                 host + " has no GPU rows and is not compared with peers"});
  }
  std::map<std::string, int> repeats;  // finding key -> times seen in this report
  for (const auto& f : *fit) {
    if (!f.is_object()) continue;
    FindingEvent e;
    e.node = host;
    e.time_s = *t;
    e.id = Str(f, "id");
    if (e.id.empty()) continue;
    auto sev = ParseSeverity(Str(f, "severity"));
    e.severity = sev.value_or(Severity::kInfo);
    std::optional<int64_t> xid;
    if (auto ev = f.find("evidence"); ev != f.end() && ev->is_object()) xid = Int(*ev, "xid");
    e.action = ReadFindingAction(Str(f, "action"), e.id,
                                 xid ? std::optional<int>(static_cast<int>(*xid)) : std::nullopt,
                                 Str(f, "summary"));
    e.layer = ParseLayer(Str(f, "layer")).value_or(Layer::kResources);
    e.summary = Str(f, "summary");
    e.subject = Str(f, "subject");
    if (auto g = f.find("gpu"); g != f.end() && g->is_object()) {
      if (auto i = Int(*g, "index")) e.gpu.index = static_cast<int>(*i);
      e.gpu.uuid = Str(*g, "uuid");
      e.gpu.pci_bus_id = CanonicalBusId(Str(*g, "pci_bus_id"));
      e.gpu.serial = SerialOrEmpty(Str(*g, "serial"));
      e.gpu.name = Str(*g, "name");
    }
    std::string key = e.id + '\x1f' + e.gpu.pci_bus_id + '\x1f' + e.gpu.uuid + '\x1f' +
                      (e.gpu.index ? std::to_string(*e.gpu.index) : "") + '\x1f' + e.subject;
    if (++repeats[key] > 1) continue;  // a finding repeated in one report is one finding
    data.findings.push_back(std::move(e));
  }
  for (const auto& [key, n] : repeats) {
    if (n < 2) continue;
    data.problems.push_back({source, host,
                             "finding " + key.substr(0, key.find('\x1f')) + " repeated " +
                                 std::to_string(n) + " times in one report: counted once"});
  }
  data.reports.push_back(std::move(rep));
  return Status::Ok();
}

}  // namespace

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
  if (!data.sample_at.empty()) {  // indices into samples changed
    data.sample_at.clear();
    for (size_t i = 0; i < data.samples.size(); ++i) {
      data.sample_at[{data.samples[i].card, data.samples[i].time_s}] = i;
    }
  }
}

Status AddReport(std::string_view text, const std::string& source, int64_t now_s, FleetData& data) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return ParseError("invalid or truncated JSON");
  try {
    return AddReportJson(j, source, now_s, data);
  } catch (const std::exception& e) {
    return ParseError(std::string("unexpected JSON shape: ") + e.what());
  }
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

void AddDocuments(std::string_view stream, const std::string& source, int64_t now_s,
                  FleetData& data) {
  int n = 0;
  for (auto doc : SplitDocuments(stream)) {
    ++n;
    std::string name = source + "#" + std::to_string(n);
    if (Status s = AddReport(doc, name, now_s, data); !s.ok()) {
      data.problems.push_back({name, "", s.message()});
    }
  }
}

constexpr int kMaxDirDepth = 8;
constexpr size_t kMaxFiles = 1000000;

// The *.json files under `dir` in name order, depth first, subdirectories up to kMaxDirDepth
// below the top; directories not entered (too deep, symbolic links, unreadable) are listed.
void CollectFiles(const std::string& dir, int depth, std::vector<std::string>& files,
                  FleetData& data) {
  auto names = RootFs::ListDir(dir);
  if (!names.ok()) {
    data.problems.push_back({dir, "", "cannot open directory: skipped"});
    return;
  }
  for (const auto& name : *names) {
    if (files.size() >= kMaxFiles) {
      data.problems.push_back(
          {dir, "", "more than " + std::to_string(kMaxFiles) + " report files: the rest not read"});
      return;
    }
    std::string p = dir + "/" + name;
    std::error_code ec;
    auto st = std::filesystem::symlink_status(p, ec);
    if (ec) continue;
    if (std::filesystem::is_directory(st)) {
      if (depth >= kMaxDirDepth) {
        data.problems.push_back(
            {p, "",
             "directory more than " + std::to_string(kMaxDirDepth) + " levels deep: skipped"});
      } else {
        CollectFiles(p, depth + 1, files, data);
      }
      continue;
    }
    if (std::filesystem::is_symlink(st)) {
      // A link to a file is read like the file; a link to a directory could loop.
      auto info = RootFs::Stat(p);
      if (info.ok() && info->is_dir) {
        data.problems.push_back({p, "", "symbolic link to a directory: not followed, skipped"});
        continue;
      }
    }
    if (EndsWith(name, ".json") && name.size() > 5) files.push_back(p);
  }
}

}  // namespace

void AddReportStream(std::string_view stream, const std::string& source, int64_t now_s,
                     FleetData& data) {
  auto hosts = SplitPdshStreams(stream);
  if (hosts.empty()) {
    AddDocuments(stream, source, now_s, data);
    return;
  }
  for (const auto& [host, text] : hosts) {
    AddDocuments(text, host.empty() ? source : source + ":" + host, now_s, data);
  }
}

Status ReadReports(const std::string& path, int64_t now_s, FleetData& data,
                   std::chrono::milliseconds per_file_timeout) {
  auto deadline = [&] { return SteadyClock::now() + per_file_timeout; };
  if (path == "-") {
    auto text = ReadInputFile("-", kMaxStreamBytes, deadline());
    if (!text.ok()) return text.status();
    AddReportStream(*text, "stdin", now_s, data);
    DropTimeOutliers(data);
    return Status::Ok();
  }
  auto info = RootFs::Stat(path);
  if (!info.ok()) return NotFound(path + ": no such file or directory");
  std::vector<std::string> files;
  if (info->is_dir) {
    if (!RootFs::ListDir(path).ok()) return IoError(path + ": cannot open directory");
    CollectFiles(path, 0, files, data);
  } else {
    files.push_back(path);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& f = files[i];
    auto text = ReadInputFile(f, kMaxFileBytes, deadline());
    if (!text.ok()) {
      data.problems.push_back({f, "", text.status().message()});
      // A file that did not answer in time: the filesystem is hung, and every other file on it
      // would cost the same wait.
      if (text.status().code() == StatusCode::kTimeout && i + 1 < files.size()) {
        data.problems.push_back({path, "",
                                 std::to_string(files.size() - i - 1) +
                                     " more file(s) not read: the filesystem did not answer"});
        break;
      }
      continue;
    }
    auto docs = SplitDocuments(*text);
    if (docs.size() <= 1) {
      if (Status s = AddReport(*text, f, now_s, data); !s.ok()) {
        data.problems.push_back({f, "", s.message()});
      }
    } else {
      AddReportStream(*text, f, now_s, data);
    }
  }
  DropTimeOutliers(data);
  return Status::Ok();
}

}  // namespace gpudoctor::fleet
