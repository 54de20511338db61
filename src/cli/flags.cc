// The flag table. Adding a flag = one entry here (and a line in README's flag list).
#include <algorithm>
#include <ctime>

#include "cli/cli_options.h"
#include "core/i18n.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "net/target.h"

namespace gpudoctor {
namespace {

Status SetSwitch(std::string_view, CliOptions&) { return Status::Ok(); }

Status NonEmpty(std::string_view v, std::string_view what) {
  if (v.empty()) return InvalidArgument(std::string(what) + " must not be empty");
  return Status::Ok();
}

}  // namespace

const std::vector<FlagSpec>& FlagTable() {
  static const std::vector<FlagSpec> flags = WithJobFlags(WithFleetFlags({
      {"--help", "", "print usage and exit",
       [](std::string_view, CliOptions& o) {
         o.help = true;
         return Status::Ok();
       }},
      {"--version", "", "print the version and exit",
       [](std::string_view, CliOptions& o) {
         o.version = true;
         return Status::Ok();
       }},
      {"--json", "", "machine-readable JSON output",
       [](std::string_view, CliOptions& o) {
         o.json = true;
         return Status::Ok();
       }},
      {"--color", "auto|always|never", "colour in the text report (default auto: only on a TTY)",
       [](std::string_view v, CliOptions& o) {
         if (v == "auto")
           o.color = ColorMode::kAuto;
         else if (v == "always")
           o.color = ColorMode::kAlways;
         else if (v == "never")
           o.color = ColorMode::kNever;
         else
           return InvalidArgument("expected auto, always or never, got '" + Sanitize(v, 40) + "'");
         return Status::Ok();
       }},
      {"--lang", "zh|en",
       "language of finding titles, next steps, symptoms, the runbook and the text report "
       "(default: LANGUAGE, "
       "LC_ALL, LC_MESSAGES, LANG; zh_CN.UTF-8 → Chinese)",
       [](std::string_view v, CliOptions& o) {
         if (!ParseLanguage(v)) {
           return InvalidArgument("expected zh or en, got '" + Sanitize(v, 40) + "'");
         }
         o.values["--lang"] = std::string(v);
         return Status::Ok();
       }},
      {"--no-color", "", "same as --color never",
       [](std::string_view, CliOptions& o) {
         o.color = ColorMode::kNever;
         return Status::Ok();
       }},
      {"--config", "FILE", "config file (TOML); default /etc/gpudoctor/gpudoctor.toml when present",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "config path"); !s.ok()) return s;
         o.config_path = std::string(v);
         return Status::Ok();
       }},
      {"--deadline", "SECONDS", "the whole check returns within this (default 10)",
       [](std::string_view v, CliOptions& o) {
         auto d = ParseDouble(v);
         if (!d || *d <= 0 || *d > 3600) {
           return InvalidArgument("expected seconds in (0, 3600], got '" + Sanitize(v, 40) + "'");
         }
         o.Override([d = *d](Settings& s) { s.deadline_s = d; });
         return Status::Ok();
       }},
      {"--sample-ms", "MS", "sampling window for rates: CPU, swap, NIC throughput (default 250)",
       [](std::string_view v, CliOptions& o) {
         auto ms = ParseInt64(v);
         if (!ms || *ms < 0 || *ms > 60000) {
           return InvalidArgument("expected milliseconds in [0, 60000], got '" + Sanitize(v, 40) +
                                  "'");
         }
         o.Override([ms = static_cast<int>(*ms)](Settings& s) { s.sample_ms = ms; });
         return Status::Ok();
       }},
      {"--path.procfs", "DIR", "procfs mount point (default /proc)",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "path"); !s.ok()) return s;
         o.Override(
             [p = std::string(v)](Settings& s) { s.fs = RootFs(p, s.fs.sysfs(), s.fs.rootfs()); });
         return Status::Ok();
       }},
      {"--path.sysfs", "DIR", "sysfs mount point (default /sys)",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "path"); !s.ok()) return s;
         o.Override(
             [p = std::string(v)](Settings& s) { s.fs = RootFs(s.fs.procfs(), p, s.fs.rootfs()); });
         return Status::Ok();
       }},
      {"--path.rootfs", "DIR", "host root for mounts, /dev and /etc (default /)",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "path"); !s.ok()) return s;
         o.Override(
             [p = std::string(v)](Settings& s) { s.fs = RootFs(s.fs.procfs(), s.fs.sysfs(), p); });
         return Status::Ok();
       }},
      {"--probes", "LIST", "run only these probes (comma-separated names, see `gpudoctor probes`)",
       [](std::string_view v, CliOptions& o) {
         std::vector<std::string> names;
         for (auto n : Split(v, ",")) names.emplace_back(Trim(n));
         if (names.empty()) return InvalidArgument("empty probe list");
         o.Override([names](Settings& s) { s.only_probes = names; });
         return Status::Ok();
       }},
      {"--skip-probes", "LIST", "do not run these probes (comma-separated names)",
       [](std::string_view v, CliOptions& o) {
         std::vector<std::string> names;
         for (auto n : Split(v, ",")) names.emplace_back(Trim(n));
         o.Override([names](Settings& s) {
           for (const auto& n : names) s.probe_enabled[n] = false;
         });
         return Status::Ok();
       }},
      {"--no-inference-discovery", "",
       "do not look for local inference servers; read only the [[inference]] tables",
       [](std::string_view, CliOptions& o) {
         o.Override([](Settings& s) { s.inference_discover = false; });
         return Status::Ok();
       }},
      {"--nvml-lib", "PATH", "NVML library to load instead of searching for libnvidia-ml.so.1",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "NVML library path"); !s.ok()) return s;
         o.Override([p = std::string(v)](Settings& s) { s.nvml_lib = p; });
         return Status::Ok();
       }},
      {"--nvml-timeout", "SECONDS",
       "an NVML phase (init, one GPU's sample) taking longer counts as hung (default 5)",
       [](std::string_view v, CliOptions& o) {
         auto d = ParseDouble(v);
         if (!d || *d < 0.05 || *d > 3600) {
           return InvalidArgument("expected seconds in [0.05, 3600], got '" + Sanitize(v, 40) +
                                  "'");
         }
         o.Override([d = *d](Settings& s) { s.nvml_timeout_s = d; });
         return Status::Ok();
       }},
      // Network layer: added to [network] targets / references of the config file.
      {"--target", "HOST[:PORT]|URL",
       "a host the service depends on: HOST for ICMP echo, HOST:PORT for TCP connect, "
       "http(s)://HOST[:PORT]/PATH for timed GET requests (repeatable)",
       [](std::string_view v, CliOptions& o) {
         auto t = ParseTarget(v);
         if (!t.ok()) return t.status();
         o.Override([spec = t->spec](Settings& s) { s.net_targets.push_back(spec); });
         return Status::Ok();
       }},
      {"--reference", "HOST[:PORT]",
       "another site probed for comparison (is everyone slow, or only us?) (repeatable)",
       [](std::string_view v, CliOptions& o) {
         auto t = ParseTarget(v);
         if (!t.ok()) return t.status();
         o.Override([spec = t->spec](Settings& s) { s.net_references.push_back(spec); });
         return Status::Ok();
       }},
      // Kernel log (kmsg probe, `gpudoctor logs`).
      {"--kmsg-file", "PATH", "read the kernel log from this saved file (or - for stdin)",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "kmsg file"); !s.ok()) return s;
         o.values["--kmsg-file"] = std::string(v);  // `logs` takes it as its FILE
         o.Override([p = std::string(v)](Settings& s) { s.kmsg_file = p; });
         return Status::Ok();
       }},
      {"--kmsg-source", "auto|kmsg|journal", "live kernel log source (default auto)",
       [](std::string_view v, CliOptions& o) {
         if (v != "auto" && v != "kmsg" && v != "journal") {
           return InvalidArgument("expected auto, kmsg or journal, got '" + Sanitize(v, 40) + "'");
         }
         o.Override([src = std::string(v)](Settings& s) { s.kmsg_source = src; });
         return Status::Ok();
       }},
      {"--since", "TIME",
       "kernel log, history: ignore older lines (2h, 1h30m, 1700000000, 2024-03-04T12:00:00Z, "
       "2024-03-04T14:00+02:00; UTC without a zone)",
       [](std::string_view v, CliOptions& o) {
         auto t = ParseTimeSpec(v, static_cast<int64_t>(std::time(nullptr)));
         o.values["--since"] = std::string(v);
         if (!t)
           return InvalidArgument("expected " + TimeSpecExpectation() + ", got '" +
                                  Sanitize(v, 40) + "'");
         o.Override([t = *t](Settings& s) { s.kmsg_since_unix_s = t; });
         return Status::Ok();
       }},
      {"--current-boot", "", "logs: keep only what follows the last boot marker in the file",
       SetSwitch},
      // watch.
      {"--interval", "SECONDS", "watch/top: seconds between ticks (default 1)",
       [](std::string_view v, CliOptions& o) {
         auto d = ParseDouble(v);
         if (!d || *d < 0.1 || *d > 3600) {
           return InvalidArgument("expected seconds in [0.1, 3600], got '" + Sanitize(v, 40) + "'");
         }
         o.Override([d = *d](Settings& s) { s.watch_interval_s = d; });
         return Status::Ok();
       }},
      {"--db", "PATH",
       "watch/history/ack: the history database; fleet: repeatable (default "
       "/var/lib/gpudoctor/history.db)",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "database path"); !s.ok()) return s;
         o.values["--db"] = std::string(v);
         o.multi_values.emplace_back("--db", std::string(v));  // fleet --db FILE...
         o.Override([p = std::string(v)](Settings& s) { s.db_path = p; });
         return Status::Ok();
       }},
      {"--no-db", "", "watch: keep no history (nothing written to disk)", SetSwitch},
      // watch HTTP.
      {"--listen", "ADDR:PORT",
       "watch: HTTP address for /metrics and the API (default 127.0.0.1:9835; off: none)",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "listen address"); !s.ok()) return s;
         o.values["--listen"] = std::string(v);  // asked for: a bind failure is fatal
         o.Override([a = std::string(v)](Settings& s) { s.watch_listen = a; });
         return Status::Ok();
       }},
      {"--dcgm-compat", "", "watch: /metrics also carries dcgm-exporter's DCGM_FI_* names",
       [](std::string_view, CliOptions& o) {
         o.Override([](Settings& s) { s.watch_dcgm_compat = true; });
         return Status::Ok();
       }},
      {"--any-cpu", "", "watch: let its threads run on any allowed CPU ([watch] one_cpu = false)",
       [](std::string_view, CliOptions& o) {
         o.Override([](Settings& s) { s.watch_one_cpu = false; });
         return Status::Ok();
       }},
      {"--ticks", "N", "watch: stop after N ticks (tests, benchmarks; default: until a signal)",
       [](std::string_view v, CliOptions& o) {
         auto n = ParseInt64(v);
         if (!n || *n < 1)
           return InvalidArgument("expected a count >= 1, got '" + Sanitize(v, 40) + "'");
         o.Override([n = *n](Settings& s) { s.watch_max_ticks = n; });
         return Status::Ok();
       }},
      // bundle (bundle_command.cc).
      {"--output", "FILE",
       "bundle: the archive to write (default gpudoctor-bundle-HOST-TIME.tar.gz here)",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "output path"); !s.ok()) return s;
         o.values["--output"] = std::string(v);
         return Status::Ok();
       }},
      {"--tool-timeout", "SECONDS",
       "bundle, scan: how long each external tool (nvidia-smi -q, nvidia-bug-report.sh; "
       "clamscan, dpkg --verify) may run (default 120; 0: not run)",
       [](std::string_view v, CliOptions& o) {
         auto d = ParseDouble(v);
         if (!d || *d < 0 || *d > 3600) {
           return InvalidArgument("--tool-timeout: '" + Sanitize(v, 40) +
                                  "' is not a number of seconds from 0 to 3600");
         }
         o.values["--tool-timeout"] = std::string(v);
         return Status::Ok();
       }},
      {"-o", "FILE", "bundle: same as --output (- writes the archive to standard output)",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "output path"); !s.ok()) return s;
         o.values["--output"] = std::string(v);
         return Status::Ok();
       }},
      // history, ack, silence (history_command.cc, ack_command.cc).
      {"--metric", "NAME", "history: the series to print (see --list-metrics)",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "metric name"); !s.ok()) return s;
         o.values["--metric"] = std::string(v);
         return Status::Ok();
       }},
      {"--gpu", "N", "history, ack, silence: only GPU index N",
       [](std::string_view v, CliOptions& o) {
         auto n = ParseInt64(v);
         if (!n || *n < 0 || *n > 4096) {
           return InvalidArgument("expected a GPU index, got '" + Sanitize(v, 40) + "'");
         }
         o.values["--gpu"] = std::to_string(*n);
         return Status::Ok();
       }},
      {"--until", "TIME", "history: ignore newer points (same grammar as --since)",
       [](std::string_view v, CliOptions& o) {
         if (!ParseTimeSpec(v, static_cast<int64_t>(std::time(nullptr)))) {
           return InvalidArgument("expected " + TimeSpecExpectation() + ", got '" +
                                  Sanitize(v, 40) + "'");
         }
         o.values["--until"] = std::string(v);
         return Status::Ok();
       }},
      {"--for", "DURATION", "silence: how long (90s, 15m, 2h, 1h30m, 7d)",
       [](std::string_view v, CliOptions& o) {
         if (!ParseDurationS(v)) {
           return InvalidArgument("expected " + DurationExpectation() + ", got '" +
                                  Sanitize(v, 40) + "'");
         }
         o.values["--for"] = std::string(v);
         return Status::Ok();
       }},
      {"--note", "TEXT", "ack: a note kept with the acknowledgement",
       [](std::string_view v, CliOptions& o) {
         o.values["--note"] = std::string(v);
         return Status::Ok();
       }},
      {"--list-metrics", "", "history: list the stored metric names", SetSwitch},
      {"--findings", "", "history: finding episodes (opened, resolved, reboots between)",
       SetSwitch},
      {"--events", "", "history: events (Xids, reboots, acks, notifications)", SetSwitch},
      // top.
      {"--connect", "URL",
       "top, check --npd: read GET URL/api/v1/status of a running `gpudoctor watch` instead of "
       "probing (token from --token-file, else $GPUDOCTOR_TOKEN, else [watch] token_file)",
       [](std::string_view v, CliOptions& o) {
         if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) {
           return InvalidArgument("expected http://HOST:PORT, got '" + Sanitize(v, 60) + "'");
         }
         o.values["--connect"] = std::string(v);
         return Status::Ok();
       }},
      {"--token-file", "PATH",
       "watch: bearer token file required on the HTTP API ([watch] token_file; mode 0600); "
       "top/check --connect: send the token in this file",
       [](std::string_view v, CliOptions& o) {
         if (Status s = NonEmpty(v, "token file"); !s.ok()) return s;
         o.values["--token-file"] = std::string(v);
         o.Override([p = std::string(v)](Settings& s) { s.watch_token_file = p; });
         return Status::Ok();
       }},
      // Command switches (meaning depends on the command).
      {"--default", "", "config: print the commented default config file", SetSwitch},
      {"--markdown", "", "explain: print the whole catalogue as Markdown", SetSwitch},
      {"--list", "", "explain: list every finding id", SetSwitch},
      {"--symptoms", "", "explain: list the symptoms gpudoctor knows", SetSwitch},
      {"--pot", "", "explain: print the translatable texts as a gettext template (po/)", SetSwitch},
      {"--runbook", "", "explain: the emergency plan from the catalogue's critical findings",
       SetSwitch},
      {"--symptom", "", "explain: the findings and commands for a symptom given as TEXT",
       SetSwitch},
  }));
  return flags;
}

}  // namespace gpudoctor
