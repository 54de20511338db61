#include "sched/npd.h"

#include <algorithm>

namespace gpudoctor {
namespace {

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return s;
}

std::string Bound(std::string s) {
  s = OneLine(std::move(s));
  if (s.size() <= kNpdMessageMax) return s;
  s.resize(kNpdMessageMax - 3);
  return s + "...";
}

// "<id> GPU<n> [<action>]: <summary>" then `more`, at most kNpdMessageMax bytes (the summary
// is cut first).
std::string Line(const Finding& f, const std::string& more) {
  std::string msg = f.id;
  if (f.gpu && f.gpu->index) msg += " GPU" + std::to_string(*f.gpu->index);
  msg += std::string(" [") + ActionName(f.action) + "]: " + f.summary;
  msg = OneLine(std::move(msg));
  if (msg.size() + more.size() > kNpdMessageMax) {
    size_t keep = more.size() + 3 < kNpdMessageMax ? kNpdMessageMax - more.size() - 3 : 0;
    msg.resize(std::min(msg.size(), keep));
    msg += "...";
  }
  return Bound(msg + more);
}

}  // namespace

NpdOutcome NpdWarnings(const std::vector<Finding>& findings, std::optional<Layer> layer,
                       const std::string& tool_error) {
  if (!tool_error.empty()) return NpdResult(findings, layer, tool_error);
  std::vector<const Finding*> warn;
  for (const auto& f : findings) {
    if (layer && f.layer != *layer) continue;
    if (f.severity != Severity::kInfo && !TakesNodeOutOfService(f)) warn.push_back(&f);
  }
  // The worst first (a crit application Xid before a warm GPU), then in report order.
  std::stable_sort(warn.begin(), warn.end(),
                   [](const Finding* a, const Finding* b) { return a->severity > b->severity; });
  const Finding* first = warn.empty() ? nullptr : warn.front();
  std::vector<std::string> others;
  for (const Finding* f : warn) {
    if (f->id != first->id && std::find(others.begin(), others.end(), f->id) == others.end()) {
      others.push_back(f->id);
    }
  }
  NpdOutcome r;
  if (first == nullptr) {
    r.message = "no warnings";
    return r;
  }
  r.exit_code = 1;
  std::string more;
  if (!others.empty()) {
    more = " (+" + std::to_string(others.size()) + " more: ";
    for (size_t i = 0; i < others.size(); ++i) more += (i ? ", " : "") + others[i];
    more += ")";
    if (more.size() > kNpdMessageMax / 2) {  // the first warning keeps the larger half
      more.resize(kNpdMessageMax / 2 - 4);
      more += "...)";
    }
  }
  r.message = Line(*first, more);
  return r;
}

NpdOutcome NpdResult(const std::vector<Finding>& findings, std::optional<Layer> layer,
                     const std::string& tool_error) {
  NpdOutcome r;
  if (!tool_error.empty()) {
    r.exit_code = 2;
    r.message = Bound("unknown: gpudoctor could not run: " + tool_error);
    return r;
  }
  const Finding* first = nullptr;
  int crit = 0;
  std::string warns;
  for (const auto& f : findings) {
    if (layer && f.layer != *layer) continue;
    if (TakesNodeOutOfService(f)) {
      if (!first) first = &f;
      ++crit;
    } else if (f.severity != Severity::kInfo && warns.find(f.id) == std::string::npos) {
      warns += (warns.empty() ? "" : ", ") + f.id;
    }
  }
  if (first == nullptr) {
    r.message = Bound(warns.empty() ? "ok" : "ok (warn: " + warns + ")");
    return r;
  }
  r.exit_code = 1;
  r.message = Line(*first, crit > 1 ? " (+" + std::to_string(crit - 1) + " more)" : "");
  return r;
}

}  // namespace gpudoctor
