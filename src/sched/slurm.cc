#include "sched/slurm.h"

#include "core/subprocess.h"

namespace gpudoctor {
namespace {

std::string Clean(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '"' || c == '\t') c = ' ';
  }
  return s;
}

std::string GpuLabel(const Finding& f) {
  if (!f.gpu) return f.subject;
  std::string s = f.gpu->index ? "GPU" + std::to_string(*f.gpu->index) : "GPU";
  if (!f.gpu->pci_bus_id.empty()) s += " " + f.gpu->pci_bus_id;
  return s;
}

std::string Truncate(std::string s, size_t max) {
  if (s.size() <= max) return s;
  s.resize(max - 3);
  return s + "...";
}

Result<SlurmNodeState> ShowNode(const SlurmOptions& o) {
  auto r = RunProcess({o.scontrol, "show", "node", "-o", o.node}, o.timeout_s);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return IoError("scontrol show node " + o.node + " failed: " + Clean(r->err.substr(0, 200)));
  }
  return ParseSlurmNode(r->out);
}

Status Update(const SlurmOptions& o, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {o.scontrol, "update", "nodename=" + o.node};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = RunProcess(argv, o.timeout_s);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return IoError("scontrol update failed (exit " + std::to_string(r->exit_code) +
                   "): " + Clean(r->err.substr(0, 200)));
  }
  return Status::Ok();
}

}  // namespace

std::string SlurmReason(const std::vector<Finding>& findings) {
  std::string reason = "gpudoctor:";
  int listed = 0, more = 0;
  for (const auto& f : findings) {
    if (!TakesNodeOutOfService(f)) continue;
    std::string item = " " + f.id;
    std::string gpu = GpuLabel(f);
    if (!gpu.empty()) item += " " + gpu;
    item = Clean(item);
    if (reason.size() + item.size() + 2 + 16 > kSlurmReasonMax && listed > 0) {
      ++more;
      continue;
    }
    reason += (listed ? ";" : "") + item;
    ++listed;
  }
  if (more > 0) reason += " (+" + std::to_string(more) + " more)";
  return Truncate(reason, kSlurmReasonMax);
}

SlurmNodeState ParseSlurmNode(const std::string& text) {
  SlurmNodeState s;
  size_t st = text.find("State=");
  if (st == std::string::npos) return s;
  s.known = true;
  size_t end = text.find_first_of(" \n", st);
  s.state = text.substr(st + 6, end == std::string::npos ? std::string::npos : end - st - 6);
  size_t r = text.find(" Reason=");
  if (r != std::string::npos) {
    std::string rest = text.substr(r + 8);
    size_t nl = rest.find('\n');
    if (nl != std::string::npos) rest.resize(nl);
    // Slurm appends " [user@time]"; other fields may follow it on one line.
    size_t mark = rest.find(" [");
    if (mark != std::string::npos) rest.resize(mark);
    if (rest != "(null)") s.reason = rest;
  }
  return s;
}

SlurmOutcome RunSlurmMode(const std::vector<Finding>& findings, const std::string& tool_error,
                          const SlurmOptions& o) {
  SlurmOutcome out;
  // Drain by action, never by severity: a busy CPU or a full disk is the job's business.
  bool crit = false;
  for (const auto& f : findings) crit = crit || TakesNodeOutOfService(f);
  if (!tool_error.empty()) {
    out.exit_code = 3;
    if (!o.drain_on_tool_failure) {
      out.action = "none";
      out.message = "gpudoctor could not run (" + tool_error + "); node " + o.node +
                    " not drained (--slurm-drain-on-failure to drain)";
      return out;
    }
  }
  auto state = ShowNode(o);
  std::string reason = tool_error.empty()
                           ? SlurmReason(findings)
                           : Truncate("gpudoctor: tool failure: " + Clean(tool_error), 255);
  if (crit || !tool_error.empty()) {
    if (tool_error.empty()) out.exit_code = 2;
    if (state.ok() && state->drained() && !state->ours()) {
      out.action = "keep_foreign_drain";
      out.message = "node " + o.node + " already drained by someone else (" + state->reason +
                    "); left as is. Would drain for: " + reason;
      return out;
    }
    if (state.ok() && state->drained() && state->reason == reason) {
      out.action = "none";
      out.message = "node " + o.node + " stays drained: " + reason;
      return out;
    }
    if (Status s = Update(o, {"state=drain", "reason=" + reason}); !s.ok()) {
      out.action = "error";
      out.message = "could not drain " + o.node + ": " + s.message() + " (" + reason + ")";
      return out;
    }
    out.action = "drain";
    out.message = "drained " + o.node + ": " + reason;
    return out;
  }
  // Healthy: silent, but undo our own drain.
  if (!state.ok()) {
    out.action = "none";  // cannot see the node; nothing to undo that we know of
    return out;
  }
  if (state->drained() && state->ours()) {
    if (Status s = Update(o, {"state=resume"}); !s.ok()) {
      out.action = "error";
      out.exit_code = 3;
      out.message = "could not resume " + o.node + ": " + s.message();
      return out;
    }
    out.action = "resume";
    out.message =
        "resumed " + o.node + " (the finding that drained it has cleared: " + state->reason + ")";
  } else {
    out.action = "none";
  }
  return out;
}

}  // namespace gpudoctor
