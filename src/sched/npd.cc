#include "sched/npd.h"

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

}  // namespace

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
  std::string msg = first->id;
  if (first->gpu && first->gpu->index) msg += " GPU" + std::to_string(*first->gpu->index);
  msg += std::string(" [") + ActionName(first->action) + "]: " + first->summary;
  std::string more = crit > 1 ? " (+" + std::to_string(crit - 1) + " more)" : "";
  if (msg.size() + more.size() > kNpdMessageMax)
    msg.resize(kNpdMessageMax - more.size() - 3), msg += "...";
  r.message = Bound(msg + more);
  return r;
}

}  // namespace gpudoctor
