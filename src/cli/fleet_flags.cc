// Flags of `gpudoctor fleet` and of the scheduler modes of `check` (--slurm, --npd). Values go
// to CliOptions::values and are validated here; commands read them with Value()/All().
#include "cli/cli_options.h"
#include "core/strings.h"

namespace gpudoctor {
namespace {

Status SetSwitch(std::string_view, CliOptions&) { return Status::Ok(); }

Status Store(CliOptions& o, const char* name, std::string_view v) {
  if (v.empty()) return InvalidArgument("must not be empty");
  o.values[name] = std::string(v);
  o.multi_values.emplace_back(name, std::string(v));
  return Status::Ok();
}

Status StoreCount(CliOptions& o, const char* name, std::string_view v, int64_t lo, int64_t hi) {
  auto n = ParseInt64(v);
  if (!n || *n < lo || *n > hi) {
    return InvalidArgument("expected a whole number in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "], got '" + Sanitize(v, 40) + "'");
  }
  return Store(o, name, v);
}

}  // namespace

std::vector<FlagSpec> WithFleetFlags(std::vector<FlagSpec> flags) {
  std::vector<FlagSpec> mine = {
      {"--reports", "DIR|FILE|-",
       "fleet: read `check --json` reports from a directory, a file or stdin (repeatable)",
       [](std::string_view v, CliOptions& o) { return Store(o, "--reports", v); }},
      {"--prometheus", "URL", "fleet: read gpudoctor (or dcgm-exporter) series from Prometheus",
       [](std::string_view v, CliOptions& o) {
         if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) {
           return InvalidArgument("expected http://HOST:PORT, got '" + Sanitize(v, 60) + "'");
         }
         return Store(o, "--prometheus", v);
       }},
      {"--prometheus-ca", "FILE",
       "fleet --prometheus: PEM CA bundle to verify an https Prometheus with (default: the "
       "system store)",
       [](std::string_view v, CliOptions& o) { return Store(o, "--prometheus-ca", v); }},
      {"--prometheus-token-file", "FILE",
       "fleet --prometheus: send the bearer token in FILE (first line; mode 0600)",
       [](std::string_view v, CliOptions& o) { return Store(o, "--prometheus-token-file", v); }},
      {"--prometheus-user", "USER",
       "fleet --prometheus: basic auth user (password from --prometheus-password-file)",
       [](std::string_view v, CliOptions& o) { return Store(o, "--prometheus-user", v); }},
      {"--prometheus-password-file", "FILE",
       "fleet --prometheus: basic auth password in FILE (first line; mode 0600)",
       [](std::string_view v, CliOptions& o) { return Store(o, "--prometheus-password-file", v); }},
      {"--window", "SECONDS", "fleet: width of one comparison window (default 300)",
       [](std::string_view v, CliOptions& o) { return StoreCount(o, "--window", v, 1, 86400); }},
      {"--persist", "N", "fleet: outlier windows needed before a GPU is a straggler (default 3)",
       [](std::string_view v, CliOptions& o) { return StoreCount(o, "--persist", v, 1, 100000); }},
      {"--lemon-min", "N", "fleet: fault onsets that make a node or card a lemon (default 3)",
       [](std::string_view v, CliOptions& o) {
         return StoreCount(o, "--lemon-min", v, 1, 100000);
       }},
      {"--trust-dir-mtime", "",
       "fleet card/slot: trust the reports directories' mtimes (no stat of each report: "
       "quick, but a report rewritten in place is missed until a file is added, removed or "
       "renamed beside it)",
       SetSwitch},
      {"--slurm", "",
       "check: Slurm HealthCheckProgram mode: silent when healthy, drain on crit, resume what "
       "it drained",
       SetSwitch},
      {"--slurm-node", "NAME", "check --slurm: the Slurm node name (default: short hostname)",
       [](std::string_view v, CliOptions& o) { return Store(o, "--slurm-node", v); }},
      {"--scontrol", "PATH", "check --slurm: the scontrol program (default scontrol on PATH)",
       [](std::string_view v, CliOptions& o) { return Store(o, "--scontrol", v); }},
      {"--slurm-drain-on-failure", "",
       "check --slurm: also drain when gpudoctor itself cannot run (default: never)", SetSwitch},
      {"--slurm-dry-run", "",
       "check: decide as --slurm does but run no scontrol: print the drain reason, exit 2 "
       "(NHC's check_gpudoctor uses it)",
       SetSwitch},
      {"--state-dir", "DIR",
       "check --slurm: where the record of our drains lives (default /var/lib/gpudoctor)",
       [](std::string_view v, CliOptions& o) {
         if (v.empty() || v[0] != '/') {
           return InvalidArgument("expected an absolute directory, got '" + Sanitize(v, 60) + "'");
         }
         return Store(o, "--state-dir", v);
       }},
      {"--npd", "",
       "check: node-problem-detector plugin mode: one line, exit 0 ok, 1 problem, 2 unknown",
       SetSwitch},
      {"--npd-warnings", "",
       "check --npd: the layer's warnings condition: exit 1 while a warn or crit finding keeps "
       "the node in service (named in the line), 0 'no warnings'",
       SetSwitch},
      {"--npd-layer", "LAYER", "check --npd: judge only network|hardware|software|resources",
       [](std::string_view v, CliOptions& o) {
         if (v != "network" && v != "hardware" && v != "software" && v != "resources") {
           return InvalidArgument("expected network, hardware, software or resources, got '" +
                                  Sanitize(v, 40) + "'");
         }
         return Store(o, "--npd-layer", v);
       }},
  };
  flags.insert(flags.end(), mine.begin(), mine.end());
  return flags;
}

}  // namespace gpudoctor
