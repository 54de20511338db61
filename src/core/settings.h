// Settings: everything a check needs to know, from defaults, the config file and flags (in that
// order of precedence, flags last). Built once per command, then shared read-only with probe
// workers through std::shared_ptr<const Settings> (an abandoned worker may outlive the caller).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/root_fs.h"
#include "core/threshold_overrides.h"

namespace gpudoctor {

struct Settings {
  RootFs fs;
  double deadline_s = 10;  // whole check; `check` returns within deadline + 1 s
  int sample_ms = 250;     // window for rates (CPU, swap, NIC throughput, ...)
  std::map<std::string, bool, std::less<>> probe_enabled;  // overrides of the registry default
  std::vector<std::string> only_probes;  // --probes: when non-empty, run exactly these
  ThresholdOverrides thresholds;         // the rules see them through rules/thresholds.h

  // GPU layer (NVML): library override (--nvml-lib; empty = default search) and the deadline of
  // each NVML phase (init, one GPU's sample beyond the window) before a call counts as hung.
  std::string nvml_lib;
  double nvml_timeout_s = 5;
  // Network layer: [network] targets/references, --target/--reference (repeatable).
  std::vector<std::string> net_targets;     // what the service depends on: "host" or "host:port"
  std::vector<std::string> net_references;  // other sites, probed only for comparison
  // 40 probes 20 ms apart: a ~0.8 s series per host (all hosts in parallel; it bounds the
  // default check's wall time) in which one lost probe is 2.5%, so loss of a few percent and
  // jitter are visible.
  int net_probe_count = 40;           // probes per host
  int net_probe_interval_ms = 20;     // between probe starts
  int net_probe_timeout_ms = 1000;    // per probe
  int net_resolve_timeout_ms = 1000;  // getaddrinfo budget per name
  int net_fallback_tcp_port = 22;     // TCP-connect port when no ICMP socket can be opened
  // URL targets (http://, https://;): GET requests per target, their spacing,
  // each one's timeout, and whether https certificates are verified.
  int net_http_count = 5;
  int net_http_interval_ms = 200;
  int net_http_timeout_ms = 3000;
  bool net_http_tls_verify = true;
  std::vector<std::string> net_known_gpu_users;  // users whose GPU processes are expected
  // Host probes: how long the disk probe waits for all statvfs calls together; a
  // mount that has not answered by then is reported as unresponsive.
  int disk_statvfs_timeout_ms = 1000;
  // [node] required_mounts: absolute mount points that must be mounted (host.mount.missing);
  // normalised (no trailing '/').
  std::vector<std::string> required_mounts;
  // Upkeep probes: [thermal] ipmitool (empty: never run it) and its
  // timeout; [backup] paths, globs of checkpoint files (empty: the backup probe is skipped).
  std::string thermal_ipmitool = "ipmitool";
  double thermal_ipmitool_timeout_s = 5;
  std::vector<std::string> backup_paths;
  // [backup] command: argv (no shell) of a program that prints the newest backup's time (unix
  // seconds or RFC 3339) on its first line, for remote or object storage; empty: not run.
  std::vector<std::string> backup_command;
  double backup_command_timeout_s = 10;
  // Kernel log (kmsg probe, `gpudoctor logs`;).
  std::string kmsg_file;                     // --kmsg-file PATH or "-": scan it, not live sources
  std::string kmsg_source = "auto";          // auto (kmsg, then journal) | kmsg | journal
  std::optional<int64_t> kmsg_since_unix_s;  // --since: ignore older lines (those with a time)

  // `watch`: [watch] table, --interval, --db.
  double watch_interval_s = 1;        // fast probes every tick
  double watch_slow_interval_s = 30;  // disk, pci_gpu, suspicious, reachability
  double watch_rate_window_s = 300;   // counter rates (ECC, replays, NVLink) over this window
  std::string db_path = "/var/lib/gpudoctor/history.db";
  int64_t watch_max_ticks = 0;  // --ticks: stop after this many (0: run until a signal)
  // Watch history store (StoreOptions): raw samples, then 1-minute rollups.
  double watch_raw_retention_h = 24;
  double watch_rollup_retention_d = 30;

  // `watch` HTTP server and notifiers: [watch] listen/token_file/dcgm_compat,
  // --listen, --dcgm-compat, [[notify.webhook]], [[notify.exec]], [[notify.alertmanager]].
  std::string watch_listen = "127.0.0.1:9835";  // "off": no HTTP server
  std::string watch_token_file;                 // empty: no bearer token
  bool watch_dcgm_compat = false;
  bool watch_one_cpu = true;  // watch/cpu_placement.h: threads on one CPU while ticks are on time
  struct NotifySetting {
    std::string kind;  // "webhook", "exec", "alertmanager"
    std::string url;
    std::vector<std::string> argv;
    std::string min_severity = "warn";
    double timeout_s = 10;
  };
  std::vector<NotifySetting> notify;
  // [[job]] tables: the jobs whose step time `watch` follows (config/job_config.h).
  struct JobSetting {
    std::string name;
    std::string log;                  // training log path (RootPath applies); empty: none
    std::string preset = "auto";      // job/step_line.h StepPreset names
    std::string regex;                // preset "regex": group 1 is the value
    std::string capture = "seconds";  // what group 1 holds: seconds, ms, it_per_s, step
    int baseline_steps = 20;          // the baseline is the median of this many first steps
    double baseline_s = 0;            // > 0: a known good step time instead of the measured one
    // A Prometheus endpoint the job exposes: the metric (and label selector) read each tick.
    std::string prometheus_url;  // http[s]://host:port/metrics; empty: none
    std::string metric;          // a step counter, a step-time gauge or histogram/summary
    std::string selector;        // {label="value",...}; empty: every series (summed)
  };
  std::vector<JobSetting> jobs;
  // [[inference]] tables: inference servers whose own metrics `watch` reads
  // (config/inference_config.h); local listeners of known engines are found as well.
  struct InferenceSetting {
    std::string name;             // empty: "<engine>:<port>"
    std::string url;              // the metrics URL (http[s]://host:port[/metrics])
    std::string engine = "auto";  // vllm|tgi|sglang|triton|auto
  };
  std::vector<InferenceSetting> inference;
  bool inference_discover = true;  // look for local listeners of known engines
};

}  // namespace gpudoctor
