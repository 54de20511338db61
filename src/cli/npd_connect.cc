#include "cli/npd_connect.h"

#include <set>

#include "core/http_get.h"
#include "rules/stored_action.h"
#include "tui/status_check.h"

namespace gpudoctor {
namespace {

Status Bad(const std::string& where, const std::string& why) {
  return ParseError(where + ": " + why);
}

std::string Text(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<Finding> ParseFinding(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, "not an object");
  Finding f;
  f.id = Text(j, "id");
  if (f.id.empty()) return Bad(where + ".id", "missing or empty");
  std::string layer = Text(j, "layer");
  auto l = ParseLayer(layer);
  if (!l) return Bad(where + ".layer", "'" + layer.substr(0, 40) + "' is not a layer");
  f.layer = *l;
  std::string severity = Text(j, "severity");
  auto s = ParseSeverity(severity);
  if (!s) return Bad(where + ".severity", "'" + severity.substr(0, 40) + "' is not a severity");
  f.severity = *s;
  f.summary = Text(j, "summary");
  f.subject = Text(j, "subject");
  std::optional<int> xid;
  if (auto ev = j.find("evidence"); ev != j.end() && ev->is_object()) {
    if (auto x = ev->find("xid"); x != ev->end() && x->is_number_integer()) {
      int64_t code = x->get<int64_t>();
      if (code >= 0 && code < 100000) xid = static_cast<int>(code);
    }
  }
  f.action = ReadFindingAction(Text(j, "action"), f.id, xid, f.summary);
  if (auto g = j.find("gpu"); g != j.end() && g->is_object()) {
    GpuRef ref;
    if (auto i = g->find("index"); i != g->end() && i->is_number_integer()) {
      int64_t index = i->get<int64_t>();
      if (index < 0 || index >= static_cast<int64_t>(kMaxGpus)) {
        return Bad(where + ".gpu.index", std::to_string(index) + " is not a GPU index");
      }
      ref.index = static_cast<int>(index);
    }
    ref.uuid = Text(*g, "uuid");
    ref.pci_bus_id = Text(*g, "pci_bus_id");
    ref.serial = Text(*g, "serial");
    ref.name = Text(*g, "name");
    f.gpu = std::move(ref);
  }
  return f;
}

std::string Key(const Finding& f) {
  std::string k = f.id + '\x1f' + f.subject + '\x1f';
  if (f.gpu) {
    k += (f.gpu->index ? std::to_string(*f.gpu->index) : "") + '\x1f' + f.gpu->pci_bus_id;
  }
  return k;
}

std::string TrimBase(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// {"error": "..."} or {"status": "...", "error": "..."}: the daemon's reason, bounded.
std::string Reason(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return "";
  std::string why = Text(j, "error");
  std::string status = Text(j, "status");
  if (!status.empty()) why = status + (why.empty() ? "" : ": " + why);
  if (auto age = j.find("age_s"); age != j.end() && age->is_number()) {
    why += " (last tick " + std::to_string(static_cast<int64_t>(age->get<double>())) + " s ago)";
  }
  return why.substr(0, 200);
}

Result<HttpGetAnswer> Get(const std::string& url, const std::string& token, TimePoint deadline) {
  HttpGetRequest req;
  req.url = url;
  req.deadline = deadline;
  req.max_body_bytes = kMaxStatusBytes;
  if (!token.empty()) req.headers.push_back("Authorization: Bearer " + token);
  return HttpGet(req);
}

}  // namespace

Result<std::vector<Finding>> FindingsFromStatus(const nlohmann::json& doc) {
  if (!doc.is_object()) return Bad("status", "not a JSON object");
  std::vector<Finding> out;
  std::set<std::string> seen;
  auto findings = doc.find("findings");
  if (findings == doc.end() || !findings->is_array()) return Bad("findings", "missing");
  for (size_t i = 0; i < findings->size(); ++i) {
    auto f = ParseFinding((*findings)[i], "findings[" + std::to_string(i) + "]");
    if (!f.ok()) return f.status();
    if (seen.insert(Key(*f)).second) out.push_back(std::move(*f));
  }
  auto open = doc.find("open_findings");
  if (open == doc.end() || open->is_null()) return out;
  if (!open->is_array()) return Bad("open_findings", "not a list");
  for (size_t i = 0; i < open->size(); ++i) {
    std::string where = "open_findings[" + std::to_string(i) + "]";
    const nlohmann::json& e = (*open)[i];
    if (!e.is_object()) return Bad(where, "not an object");
    if (Text(e, "state") != "open") continue;
    auto fj = e.find("finding");
    if (fj == e.end()) return Bad(where + ".finding", "missing");
    auto f = ParseFinding(*fj, where + ".finding");
    if (!f.ok()) return f.status();
    if (seen.insert(Key(*f)).second) out.push_back(std::move(*f));
  }
  return out;
}

Result<std::vector<Finding>> FetchWatchFindings(const std::string& base_url,
                                                const std::string& token, TimePoint deadline) {
  std::string base = TrimBase(base_url);
  // Fresh first: a daemon whose ticks stopped still serves its last status.
  std::string health_url = base + "/healthz";
  auto health = Get(health_url, "", deadline);
  if (!health.ok()) return health.status();
  if (health->status != 200) {
    std::string why = Reason(health->body);
    return IoError("the watch at " + health_url + " is not ready: HTTP " +
                   std::to_string(health->status) + (why.empty() ? "" : ": " + why));
  }
  std::string status_url = base + "/api/v1/status";
  auto res = Get(status_url, token, deadline);
  if (!res.ok()) return res.status();
  if (res->status == 401) {
    return IoError(status_url + ": HTTP 401: " +
                   (token.empty() ? "the watch needs a token (--token-file or $GPUDOCTOR_TOKEN)"
                                  : "the watch refused the token"));
  }
  if (res->status != 200) {
    std::string why = Reason(res->body);
    return IoError(status_url + ": HTTP " + std::to_string(res->status) +
                   (why.empty() ? "" : ": " + why));
  }
  auto doc = nlohmann::json::parse(res->body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return ParseError(status_url + ": the body is not a JSON object");
  }
  if (Status s = CheckStatusDocument(doc); !s.ok()) {
    return ParseError(status_url + ": status refused: " + s.message());
  }
  auto findings = FindingsFromStatus(doc);
  if (!findings.ok()) return ParseError(status_url + ": " + findings.status().message());
  return findings;
}

}  // namespace gpudoctor
