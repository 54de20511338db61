#include "fleet/report_parse.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "core/strings.h"
#include "core/time_spec.h"
#include "facts/gpu_facts.h"
#include "rules/stored_action.h"

namespace gpudoctor::fleet {
namespace {

namespace od = simdjson::ondemand;

// Any simdjson error while walking the document: the document is not valid JSON.
struct Invalid {};

void Check(simdjson::error_code e) {
  if (e != simdjson::SUCCESS) throw Invalid{};
}

// A number's value and its spelling (for the "rejected" message), or nothing when the value is
// not a number (absent, as in every gpudoctor version).
struct Number {
  double value = 0;
  std::string_view text;
};

std::optional<Number> Num(od::value v) {
  od::json_type t;
  Check(v.type().get(t));
  if (t != od::json_type::number) return std::nullopt;
  Number n;
  n.text = v.raw_json_token();
  while (!n.text.empty() && (n.text.back() == ' ' || n.text.back() == '\n' ||
                             n.text.back() == '\r' || n.text.back() == '\t')) {
    n.text.remove_suffix(1);
  }
  Check(v.get_double().get(n.value));
  return n;
}

std::optional<int64_t> Int(od::value v) {
  auto n = Num(v);
  if (!n || !(n->value >= -9e18 && n->value <= 9e18)) return std::nullopt;
  return static_cast<int64_t>(n->value);
}

// Strings are read when the value is a string; other types leave the field empty.
std::string Str(od::value v) {
  od::json_type t;
  Check(v.type().get(t));
  if (t != od::json_type::string) return {};
  std::string_view s;
  Check(v.get_string().get(s));
  return std::string(s);
}

bool IsType(od::value& v, od::json_type want) {
  od::json_type t;
  Check(v.type().get(t));
  return t == want;
}

std::optional<uint32_t> Counter(const std::optional<Number>& n) {
  if (!n || n->value < 0) return std::nullopt;  // NaN cannot come from JSON
  return static_cast<uint32_t>(std::min(n->value, 4294967295.0));
}

// A value outside its physical range (fleet_model.h) is dropped (absent) and named in
// `rejected`.
std::optional<float> Ranged(const std::optional<Number>& n, const char* key, double scale,
                            ValueRange range, const char* unit, std::string& rejected) {
  if (!n) return std::nullopt;
  double v = n->value * scale;
  if (std::isfinite(v) && range.Contains(v)) return static_cast<float>(v);
  if (!rejected.empty()) rejected += ", ";
  rejected += std::string(key) + " " + Sanitize(n->text, 24) + " (expected " +
              FormatDouble(range.lo / scale, 0) + ".." + FormatDouble(range.hi / scale, 0) + " " +
              unit + ")";
  return std::nullopt;
}

struct Counters {
  std::optional<Number> sbe, dbe, replays, reasons;
};

Counters ReadCounters(od::value v) {
  Counters c;
  if (!IsType(v, od::json_type::object)) return c;
  od::object o;
  Check(v.get_object().get(o));
  for (auto field : o) {
    std::string_view key;
    Check(field.unescaped_key().get(key));
    od::value val;
    Check(field.value().get(val));
    if (key == "ecc_sbe_volatile") {
      c.sbe = Num(val);
    } else if (key == "ecc_dbe_volatile") {
      c.dbe = Num(val);
    } else if (key == "pcie_replays") {
      c.replays = Num(val);
    } else if (key == "clock_event_reasons") {
      c.reasons = Num(val);
    }
  }
  return c;
}

ParsedGpu ReadGpu(od::object o) {
  std::optional<Number> max_clock, limit, clock, power, util, temp;
  Counters first, second;
  ParsedGpu g;
  Card& c = g.card;
  for (auto field : o) {
    std::string_view key;
    Check(field.unescaped_key().get(key));
    od::value v;
    Check(field.value().get(v));
    if (key == "index") {
      auto i = Int(v);
      c.index = i ? std::optional<int>(static_cast<int>(*i)) : std::nullopt;
    } else if (key == "uuid") {
      c.uuid = Str(v);
    } else if (key == "pci_bus_id") {
      c.pci_bus_id = CanonicalBusId(Str(v));
    } else if (key == "serial") {
      c.serial = SerialOrEmpty(Str(v));
    } else if (key == "name") {
      c.model = Str(v);
    } else if (key == "job") {
      g.job = Str(v);
    } else if (key == "max_sm_clock_mhz") {
      max_clock = Num(v);
    } else if (key == "power_limit_mw") {
      limit = Num(v);
    } else if (key == "sm_clock_mhz") {
      clock = Num(v);
    } else if (key == "power_mw") {
      power = Num(v);
    } else if (key == "util_gpu_pct") {
      util = Num(v);
    } else if (key == "temp_c") {
      temp = Num(v);
    } else if (key == "counters_first") {
      first = ReadCounters(v);
    } else if (key == "counters_second") {
      second = ReadCounters(v);
    }
  }
  // The order of the checks (and so of the "rejected" list) is the reader's, not the file's.
  std::string& rejected = g.rejected;
  c.max_sm_clock_mhz = Ranged(max_clock, "max_sm_clock_mhz", 1, kSmClockRangeMhz, "MHz", rejected);
  c.power_limit_w = Ranged(limit, "power_limit_mw", 1e-3, kPowerRangeW, "mW", rejected);
  GpuSample& s = g.sample;
  s.sm_clock_mhz = Ranged(clock, "sm_clock_mhz", 1, kSmClockRangeMhz, "MHz", rejected);
  s.power_w = Ranged(power, "power_mw", 1e-3, kPowerRangeW, "mW", rejected);
  s.util_pct = Ranged(util, "util_gpu_pct", 1, kUtilRangePct, "%", rejected);
  s.temp_c = Ranged(temp, "temp_c", 1, kTempRangeC, "C", rejected);
  // Counters: the later sample of the check's window when present.
  s.ecc_sbe = Counter(second.sbe);
  if (!s.ecc_sbe) s.ecc_sbe = Counter(first.sbe);
  s.ecc_dbe = Counter(second.dbe);
  if (!s.ecc_dbe) s.ecc_dbe = Counter(first.dbe);
  s.pcie_replays = Counter(second.replays);
  if (!s.pcie_replays) s.pcie_replays = Counter(first.replays);
  s.clock_event_reasons = Counter(second.reasons);
  if (!s.clock_event_reasons) s.clock_event_reasons = Counter(first.reasons);
  return g;
}

// One finding; false when it has no id (ignored, as before).
bool ReadFinding(od::object o, FindingEvent& e) {
  std::string severity, action, layer;
  std::optional<int64_t> xid;
  for (auto field : o) {
    std::string_view key;
    Check(field.unescaped_key().get(key));
    od::value v;
    Check(field.value().get(v));
    if (key == "id") {
      e.id = Str(v);
    } else if (key == "severity") {
      severity = Str(v);
    } else if (key == "action") {
      action = Str(v);
    } else if (key == "layer") {
      layer = Str(v);
    } else if (key == "summary") {
      e.summary = Str(v);
    } else if (key == "subject") {
      e.subject = Str(v);
    } else if (key == "evidence") {
      xid.reset();
      if (!IsType(v, od::json_type::object)) continue;
      od::object ev;
      Check(v.get_object().get(ev));
      for (auto f2 : ev) {
        std::string_view k2;
        Check(f2.unescaped_key().get(k2));
        if (k2 != "xid") continue;
        od::value v2;
        Check(f2.value().get(v2));
        xid = Int(v2);
      }
    } else if (key == "gpu") {
      e.gpu = GpuRef{};
      if (!IsType(v, od::json_type::object)) continue;
      od::object g;
      Check(v.get_object().get(g));
      for (auto f2 : g) {
        std::string_view k2;
        Check(f2.unescaped_key().get(k2));
        od::value v2;
        Check(f2.value().get(v2));
        if (k2 == "index") {
          auto i = Int(v2);
          e.gpu.index = i ? std::optional<int>(static_cast<int>(*i)) : std::nullopt;
        } else if (k2 == "uuid") {
          e.gpu.uuid = Str(v2);
        } else if (k2 == "pci_bus_id") {
          e.gpu.pci_bus_id = CanonicalBusId(Str(v2));
        } else if (k2 == "serial") {
          e.gpu.serial = SerialOrEmpty(Str(v2));
        } else if (k2 == "name") {
          e.gpu.name = Str(v2);
        }
      }
    }
  }
  if (e.id.empty()) return false;
  e.severity = ParseSeverity(severity).value_or(Severity::kInfo);
  e.action = ReadFindingAction(
      action, e.id, xid ? std::optional<int>(static_cast<int>(*xid)) : std::nullopt, e.summary);
  e.layer = ParseLayer(layer).value_or(Layer::kResources);
  return true;
}

struct Parser {
  od::parser parser;
  std::string buffer;  // the document copied with simdjson's padding after it
};

static_assert(simdjson::SIMDJSON_PADDING <= kReportParsePadding);

Parser& ThreadParser() {
  thread_local Parser p;
  return p;
}

Result<ParsedReport> ParsePadded(Parser& p, simdjson::padded_string_view view);

}  // namespace

Result<ParsedReport> ParseReportJson(std::string_view text) {
  Parser& p = ThreadParser();
  p.buffer.assign(text);
  p.buffer.resize(text.size() + simdjson::SIMDJSON_PADDING);
  return ParsePadded(p,
                     simdjson::padded_string_view(p.buffer.data(), text.size(), p.buffer.size()));
}

Result<ParsedReport> ParseReportJsonPadded(std::string_view text) {
  return ParsePadded(
      ThreadParser(),
      simdjson::padded_string_view(text.data(), text.size(), text.size() + kReportParsePadding));
}

namespace {

Result<ParsedReport> ParsePadded(Parser& p, simdjson::padded_string_view view) {
  ParsedReport r;
  bool is_object = false, has_host = false, has_findings = false;
  try {
    od::document doc;
    Check(p.parser.iterate(view).get(doc));
    od::json_type t;
    Check(doc.type().get(t));
    if (t != od::json_type::object) {
      // A scalar or array must still be valid JSON to be "not an object" rather than invalid:
      // checked in full by the DOM parser (a rare path).
      thread_local simdjson::dom::parser dom;
      simdjson::dom::element root;
      Check(dom.parse(view.data(), view.length(), false).get(root));
    } else {
      is_object = true;
      od::object o;
      Check(doc.get_object().get(o));
      // The finding keys already taken, to keep a finding repeated within the report once.
      std::map<std::string, int> repeats;
      std::vector<std::pair<std::string, int>> repeat_order;
      for (auto field : o) {
        std::string_view key;
        Check(field.unescaped_key().get(key));
        od::value v;
        Check(field.value().get(v));
        if (key == "host") {
          r.host = Str(v);
          has_host = !r.host.empty();
        } else if (key == "time") {
          r.time_text = Str(v);
        } else if (key == "verdict") {
          r.verdict = Str(v);
        } else if (key == "job") {
          r.job = Str(v);
        } else if (key == "gpus") {
          r.has_gpus = true;
          r.gpus.clear();
          if (!IsType(v, od::json_type::array)) continue;
          od::array a;
          Check(v.get_array().get(a));
          for (auto el : a) {
            od::value gv;
            Check(el.get(gv));
            if (!IsType(gv, od::json_type::object)) continue;
            od::object go;
            Check(gv.get_object().get(go));
            r.gpus.push_back(ReadGpu(go));
          }
        } else if (key == "findings") {
          has_findings = false;
          r.findings.clear();
          repeats.clear();
          if (!IsType(v, od::json_type::array)) continue;
          has_findings = true;
          od::array a;
          Check(v.get_array().get(a));
          for (auto el : a) {
            od::value fv;
            Check(el.get(fv));
            if (!IsType(fv, od::json_type::object)) continue;
            od::object fo;
            Check(fv.get_object().get(fo));
            FindingEvent e;
            if (!ReadFinding(fo, e)) continue;
            std::string k = e.id + '\x1f' + e.gpu.pci_bus_id + '\x1f' + e.gpu.uuid + '\x1f' +
                            (e.gpu.index ? std::to_string(*e.gpu.index) : "") + '\x1f' + e.subject;
            if (++repeats[k] > 1) continue;  // a finding repeated in one report is one finding
            r.findings.push_back(std::move(e));
          }
        }
      }
      for (const auto& [k, n] : repeats) {
        if (n >= 2) r.repeats.emplace_back(k.substr(0, k.find('\x1f')), n);
      }
      // Text after the object (a second document): not one report.
      const char* rest = nullptr;
      if (doc.current_location().get(rest) == simdjson::SUCCESS) throw Invalid{};
    }
  } catch (const Invalid&) {
    return ParseError("invalid or truncated JSON");
  }
  if (!is_object) return ParseError("not a JSON object (not a gpudoctor check --json report)");
  if (!has_host) return ParseError("no \"host\" (not a gpudoctor check --json report)");
  auto t = ParseRfc3339(r.time_text);
  if (!t) {
    return ParseError("node " + r.host + ": missing or malformed \"time\" '" +
                      r.time_text.substr(0, 40) + "'");
  }
  r.time_s = *t;
  if (!has_findings) {
    return ParseError("node " + r.host + ": no \"findings\" array (truncated or not a report)");
  }
  return r;
}

}  // namespace

// ---- binary form for the index ----
namespace {

void PutU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void PutI64(std::string& out, int64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void PutStr(std::string& out, const std::string& s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}
template <typename T>
void PutOpt(std::string& out, const std::optional<T>& v) {
  out.push_back(v ? 1 : 0);
  T x = v.value_or(T{});
  out.append(reinterpret_cast<const char*>(&x), sizeof(T));
}

struct Reader {
  std::string_view& in;
  bool ok = true;
  bool Raw(void* p, size_t n) {
    if (!ok || in.size() < n) return ok = false;
    std::memcpy(p, in.data(), n);
    in.remove_prefix(n);
    return true;
  }
  uint32_t U32() {
    uint32_t v = 0;
    Raw(&v, 4);
    return v;
  }
  int64_t I64() {
    int64_t v = 0;
    Raw(&v, 8);
    return v;
  }
  std::string Str() {
    uint32_t n = U32();
    if (!ok || in.size() < n) {
      ok = false;
      return {};
    }
    std::string s(in.substr(0, n));
    in.remove_prefix(n);
    return s;
  }
  template <typename T>
  std::optional<T> Opt() {
    char has = 0;
    T x{};
    Raw(&has, 1);
    Raw(&x, sizeof(T));
    if (!ok || has == 0) return std::nullopt;
    return x;
  }
};

}  // namespace

void EncodeParsedReport(const ParsedReport& r, std::string& out) {
  PutStr(out, r.host);
  PutStr(out, r.time_text);
  PutStr(out, r.verdict);
  PutStr(out, r.job);
  PutI64(out, r.time_s);
  out.push_back(r.has_gpus ? 1 : 0);
  PutU32(out, static_cast<uint32_t>(r.gpus.size()));
  for (const auto& g : r.gpus) {
    const Card& c = g.card;
    PutStr(out, c.pci_bus_id);
    PutStr(out, c.serial);
    PutStr(out, c.uuid);
    PutStr(out, c.model);
    PutOpt(out, c.index);
    PutOpt(out, c.max_sm_clock_mhz);
    PutOpt(out, c.power_limit_w);
    const GpuSample& s = g.sample;
    PutOpt(out, s.sm_clock_mhz);
    PutOpt(out, s.power_w);
    PutOpt(out, s.util_pct);
    PutOpt(out, s.temp_c);
    PutOpt(out, s.clock_event_reasons);
    PutOpt(out, s.ecc_sbe);
    PutOpt(out, s.ecc_dbe);
    PutOpt(out, s.pcie_replays);
    PutStr(out, g.job);
    PutStr(out, g.rejected);
  }
  PutU32(out, static_cast<uint32_t>(r.findings.size()));
  for (const auto& e : r.findings) {
    PutStr(out, e.id);
    PutU32(out, static_cast<uint32_t>(e.severity));
    PutU32(out, static_cast<uint32_t>(e.action));
    PutU32(out, static_cast<uint32_t>(e.layer));
    PutOpt(out, e.gpu.index);
    PutStr(out, e.gpu.uuid);
    PutStr(out, e.gpu.pci_bus_id);
    PutStr(out, e.gpu.serial);
    PutStr(out, e.gpu.name);
    PutStr(out, e.subject);
    PutStr(out, e.summary);
  }
  PutU32(out, static_cast<uint32_t>(r.repeats.size()));
  for (const auto& [id, n] : r.repeats) {
    PutStr(out, id);
    PutU32(out, static_cast<uint32_t>(n));
  }
}

bool DecodeParsedReport(std::string_view& in, ParsedReport& r) {
  Reader rd{in};
  r.host = rd.Str();
  r.time_text = rd.Str();
  r.verdict = rd.Str();
  r.job = rd.Str();
  r.time_s = rd.I64();
  char has_gpus = 0;
  rd.Raw(&has_gpus, 1);
  r.has_gpus = has_gpus != 0;
  uint32_t n = rd.U32();
  if (!rd.ok || n > in.size()) return false;  // every GPU takes at least one byte
  r.gpus.resize(n);
  for (auto& g : r.gpus) {
    Card& c = g.card;
    c.pci_bus_id = rd.Str();
    c.serial = rd.Str();
    c.uuid = rd.Str();
    c.model = rd.Str();
    c.index = rd.Opt<int>();
    c.max_sm_clock_mhz = rd.Opt<float>();
    c.power_limit_w = rd.Opt<float>();
    GpuSample& s = g.sample;
    s.sm_clock_mhz = rd.Opt<float>();
    s.power_w = rd.Opt<float>();
    s.util_pct = rd.Opt<float>();
    s.temp_c = rd.Opt<float>();
    s.clock_event_reasons = rd.Opt<uint32_t>();
    s.ecc_sbe = rd.Opt<uint32_t>();
    s.ecc_dbe = rd.Opt<uint32_t>();
    s.pcie_replays = rd.Opt<uint32_t>();
    g.job = rd.Str();
    g.rejected = rd.Str();
    if (!rd.ok) return false;
  }
  n = rd.U32();
  if (!rd.ok || n > in.size()) return false;
  r.findings.resize(n);
  for (auto& e : r.findings) {
    e.id = rd.Str();
    const uint32_t severity = rd.U32(), action = rd.U32(), layer = rd.U32();
    // Enums out of range (a crafted file that passed the checksum) are refused, never cast.
    if (severity > static_cast<uint32_t>(Severity::kCrit) ||
        action > static_cast<uint32_t>(Action::kInspectHardware) ||
        layer > static_cast<uint32_t>(Layer::kResources)) {
      return false;
    }
    e.severity = static_cast<Severity>(severity);
    e.action = static_cast<Action>(action);
    e.layer = static_cast<Layer>(layer);
    e.gpu.index = rd.Opt<int>();
    e.gpu.uuid = rd.Str();
    e.gpu.pci_bus_id = rd.Str();
    e.gpu.serial = rd.Str();
    e.gpu.name = rd.Str();
    e.subject = rd.Str();
    e.summary = rd.Str();
    if (!rd.ok) return false;
  }
  n = rd.U32();
  if (!rd.ok || n > in.size()) return false;
  r.repeats.resize(n);
  for (auto& [id, count] : r.repeats) {
    id = rd.Str();
    count = static_cast<int>(rd.U32());
  }
  return rd.ok;
}

}  // namespace gpudoctor::fleet
