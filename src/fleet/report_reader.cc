#include "fleet/report_reader.h"

#include <algorithm>
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

std::optional<float> Float(const json& o, const char* key, double scale = 1.0) {
  auto d = Num(o, key);
  if (!d) return std::nullopt;
  return static_cast<float>(*d * scale);
}

std::optional<uint32_t> Counter(const json& o, const char* key) {
  auto d = Num(o, key);
  if (!d || *d < 0) return std::nullopt;
  return static_cast<uint32_t>(std::min(*d, 4294967295.0));
}

GpuSample SampleFrom(const json& g, const std::string& node, int64_t t, FleetData& data) {
  Card c;
  c.node = node;
  if (auto i = Int(g, "index")) c.index = static_cast<int>(*i);
  c.uuid = Str(g, "uuid");
  c.pci_bus_id = Str(g, "pci_bus_id");
  c.serial = SerialOrEmpty(Str(g, "serial"));
  c.model = Str(g, "name");
  c.max_sm_clock_mhz = Float(g, "max_sm_clock_mhz");
  c.power_limit_w = Float(g, "power_limit_mw", 1e-3);
  GpuSample s;
  s.card = data.InternCard(c);
  s.time_s = t;
  s.sm_clock_mhz = Float(g, "sm_clock_mhz");
  s.power_w = Float(g, "power_mw", 1e-3);
  s.util_pct = Float(g, "util_gpu_pct");
  s.temp_c = Float(g, "temp_c");
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
    for (const auto& gj : *g) {
      if (!gj.is_object()) continue;
      data.samples.push_back(SampleFrom(gj, host, *t, data));
      ++rep.gpu_count;
    }
  }
  if (rep.gpu_count == 0 && j.find("gpus") == j.end()) {
    data.problems.push_back({source, host,
                             "no \"gpus\" facts (older gpudoctor version, or GPU probes off): "
                             "node " +
                                 host + " has no GPU rows and is not compared with peers"});
  }
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
      e.gpu.pci_bus_id = Str(*g, "pci_bus_id");
      e.gpu.serial = SerialOrEmpty(Str(*g, "serial"));
      e.gpu.name = Str(*g, "name");
    }
    data.findings.push_back(std::move(e));
  }
  data.reports.push_back(std::move(rep));
  return Status::Ok();
}

}  // namespace

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
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (in_string) {
        if (escape) {
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
        if (--depth == 0) {
          ++i;
          break;
        }
      }
    }
    docs.push_back(s.substr(start, i - start));
  }
  return docs;
}

void AddReportStream(std::string_view stream, const std::string& source, int64_t now_s,
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

Status ReadReports(const std::string& path, int64_t now_s, FleetData& data,
                   std::chrono::milliseconds per_file_timeout) {
  auto deadline = [&] { return SteadyClock::now() + per_file_timeout; };
  if (path == "-") {
    auto text = ReadInputFile("-", kMaxStreamBytes, deadline());
    if (!text.ok()) return text.status();
    AddReportStream(*text, "stdin", now_s, data);
    return Status::Ok();
  }
  auto info = RootFs::Stat(path);
  if (!info.ok()) return NotFound(path + ": no such file or directory");
  std::vector<std::string> files;
  if (info->is_dir) {
    auto names = RootFs::ListDir(path);
    if (!names.ok()) return IoError(path + ": cannot open directory");
    for (const auto& name : *names) {
      if (EndsWith(name, ".json") && name.size() > 5) files.push_back(path + "/" + name);
    }
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
  return Status::Ok();
}

}  // namespace gpudoctor::fleet
