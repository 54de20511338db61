#include "cli/flag_scopes.h"

#include <map>

namespace gpudoctor {
namespace {

// Commands that run the probes (and so take the settings of `check`).
constexpr std::string_view kProbing = "check watch top bundle compare";

const std::map<std::string_view, std::string_view, std::less<>>& Scopes() {
  static const std::map<std::string_view, std::string_view, std::less<>> scopes = {
      // Every command.
      {"--help", "*"},
      {"--version", "*"},
      {"--json", "*"},
      {"--color", "*"},
      {"--no-color", "*"},
      {"--lang", "*"},
      {"--config", "*"},
      // Probing commands; the deadline bounds every command that reads outside input.
      {"--deadline",
       "check watch top bundle compare logs fleet history netcheck why mark report scan"},
      {"--sample-ms", kProbing},
      {"--path.procfs", "check watch top bundle compare scan"},
      {"--path.sysfs", kProbing},
      {"--path.rootfs", "check watch top bundle compare scan"},
      {"--probes", kProbing},
      {"--skip-probes", kProbing},
      {"--no-inference-discovery", kProbing},
      {"--nvml-lib", kProbing},
      {"--nvml-timeout", kProbing},
      {"--target", kProbing},
      {"--reference", "check watch top bundle compare netcheck"},
      // The kernel log.
      {"--kmsg-file", "check watch top bundle compare logs"},
      {"--kmsg-source", kProbing},
      {"--since", "check watch top bundle compare logs history fleet why report scan"},
      {"--current-boot", "logs"},
      // watch and its history.
      {"--interval", "watch top"},
      {"--db", "watch history ack silence bundle fleet why report"},
      {"--no-db", "watch"},
      {"--listen", "watch"},
      {"--dcgm-compat", "watch"},
      {"--any-cpu", "watch"},
      {"--ticks", "watch"},
      {"--output", "bundle"},
      {"-o", "bundle"},
      {"--tool-timeout", "bundle scan"},
      {"--metric", "history"},
      {"--gpu", "history ack silence"},
      {"--until", "history why report"},
      {"--for", "silence"},
      {"--note", "ack"},
      {"--list-metrics", "history"},
      {"--findings", "history"},
      {"--events", "history"},
      {"--connect", "check top mark"},
      {"--token-file", "check watch top mark"},
      {"--default", "config"},
      {"--markdown", "explain"},
      {"--list", "explain"},
      {"--symptoms", "explain"},
      {"--pot", "explain"},
      {"--runbook", "explain"},
      {"--symptom", "explain"},
      // Many nodes, and the schedulers' modes of check.
      {"--reports", "fleet"},
      {"--prometheus", "fleet"},
      {"--prometheus-ca", "fleet"},
      {"--prometheus-token-file", "fleet"},
      {"--prometheus-user", "fleet"},
      {"--prometheus-password-file", "fleet"},
      {"--window", "fleet"},
      {"--persist", "fleet"},
      {"--lemon-min", "fleet"},
      {"--trust-dir-mtime", "fleet"},
      {"--slurm", "check"},
      {"--slurm-node", "check"},
      {"--scontrol", "check"},
      {"--slurm-drain-on-failure", "check"},
      {"--slurm-dry-run", "check"},
      {"--state-dir", "check"},
      {"--npd", "check"},
      {"--npd-layer", "check"},
      {"--npd-warnings", "check"},
      // A job's speed (job_flags.cc).
      {"--job", "why mark history"},
      {"--at", "why"},
      {"--seconds", "mark"},
      {"--step", "mark"},
      // report bandwidth (job_flags.cc).
      {"--nic", "report"},
      {"--plan-mbps", "report"},
  };
  return scopes;
}

}  // namespace

std::optional<std::string_view> FlagCommands(std::string_view flag) {
  auto it = Scopes().find(flag);
  if (it == Scopes().end()) return std::nullopt;
  return it->second;
}

bool FlagAppliesTo(std::string_view flag, std::string_view command) {
  auto commands = FlagCommands(flag);
  if (!commands) return false;
  if (*commands == "*") return true;
  std::string_view rest = *commands;
  while (!rest.empty()) {
    size_t space = rest.find(' ');
    if (rest.substr(0, space) == command) return true;
    if (space == std::string_view::npos) break;
    rest.remove_prefix(space + 1);
  }
  return false;
}

}  // namespace gpudoctor
