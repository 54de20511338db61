#include "sched/slurm.h"

#include "core/subprocess.h"
#include "sched/slurm_record.h"

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
  bool needs_out = false;
  for (const auto& f : findings) needs_out = needs_out || TakesNodeOutOfService(f);
  if (!tool_error.empty()) {
    out.exit_code = 3;
    if (!o.drain_on_tool_failure) {
      out.action = "none";
      out.message = "gpudoctor could not run (" + tool_error + "); node " + o.node +
                    " not drained (--slurm-drain-on-failure to drain)";
      return out;
    }
  }
  std::string reason = tool_error.empty()
                           ? SlurmReason(findings)
                           : Truncate("gpudoctor: tool failure: " + Clean(tool_error), 255);
  bool wants_drain = needs_out || !tool_error.empty();
  if (o.dry_run) {
    if (wants_drain) {
      if (tool_error.empty()) out.exit_code = 2;
      out.action = "would_drain";
      out.stdout_line = reason;
    } else {
      out.action = "none";
    }
    return out;
  }
  auto state = ShowNode(o);
  auto record = ReadSlurmDrainRecord(o.state_dir, o.node);
  bool drained = state.ok() && state->drained();
  bool ours = drained && record.ok() && record->node == o.node && record->reason == state->reason;
  // Why a drain that looks like ours is not resumed or replaced.
  auto not_ours_why = [&]() -> std::string {
    if (!record.ok()) {
      return record.status().code() == StatusCode::kNotFound
                 ? "no drain record in " + o.state_dir
                 : "drain record unusable: " + record.status().message();
    }
    return "our record says we drained it with '" + record->reason + "'";
  };
  if (wants_drain) {
    if (tool_error.empty()) out.exit_code = 2;
    if (drained && !ours) {
      out.action = "keep_foreign_drain";
      out.message = "node " + o.node + " already drained by someone else (" + state->reason;
      if (state->has_our_prefix()) out.message += "; " + not_ours_why();
      out.message += "); left as is. Would drain for: " + reason;
      return out;
    }
    if (ours && state->reason == reason) {
      out.action = "none";
      out.message = "node " + o.node + " stays drained: " + reason;
      return out;
    }
    // Record first: a crash between the two leaves a record that matches no drain (harmless),
    // never a drain of ours without a record (it would stay drained for good).
    Status recorded = WriteSlurmDrainRecord(o.state_dir, {o.node, reason, o.now_unix_s});
    if (Status s = Update(o, {"state=drain", "reason=" + reason}); !s.ok()) {
      out.action = "error";
      out.message = "could not drain " + o.node + ": " + s.message() + " (" + reason + ")";
      return out;
    }
    out.action = "drain";
    out.message = "drained " + o.node + ": " + reason;
    if (!recorded.ok()) {
      out.message += "; could not record the drain (" + recorded.message() +
                     "), so it will not be resumed automatically";
    }
    return out;
  }
  // Healthy: silent, but undo our own drain.
  if (!state.ok()) {
    out.action = "none";  // cannot see the node; nothing to undo that we know of
    return out;
  }
  if (ours) {
    if (Status s = Update(o, {"state=resume"}); !s.ok()) {
      out.action = "error";
      out.exit_code = 3;
      out.message = "could not resume " + o.node + ": " + s.message();
      return out;
    }
    out.action = "resume";
    out.message =
        "resumed " + o.node + " (the finding that drained it has cleared: " + state->reason + ")";
    if (Status s = RemoveSlurmDrainRecord(o.state_dir, o.node); !s.ok()) {
      out.message += "; " + s.message();
    }
    return out;
  }
  out.action = "none";
  if (drained && state->has_our_prefix()) {
    out.action = "keep_foreign_drain";
    out.message = "node " + o.node + " is drained with '" + state->reason +
                  "', which gpudoctor did not set (" + not_ours_why() +
                  "); left drained (resume by hand: scontrol update nodename=" + o.node +
                  " state=resume)";
  } else if (!drained && record.status().code() != StatusCode::kNotFound) {
    // Our drain was resumed by hand (or the record is junk): forget it, so that a later drain
    // by someone else with the same words is never taken for ours.
    if (Status s = RemoveSlurmDrainRecord(o.state_dir, o.node); !s.ok()) {
      out.message = "stale drain record: " + s.message();
    }
  }
  return out;
}

}  // namespace gpudoctor
