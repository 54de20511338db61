// The config schema: one typed entry per key. Adding a setting = one entry in StaticSpecs().
#include <cmath>

#include "config/config.h"
#include "core/strings.h"
#include "net/target.h"
#include "probes/registry.h"
#include "rules/catalogue.h"

namespace gpudoctor {
namespace {

Status ApplyDeadline(const SettingSpec&, const SettingValue& v, Settings& s) {
  double d = std::get<double>(v);
  if (!(d > 0 && d <= 3600)) return InvalidArgument("must be seconds in (0, 3600]");
  s.deadline_s = d;
  return Status::Ok();
}

Status ApplySampleMs(const SettingSpec&, const SettingValue& v, Settings& s) {
  int64_t ms = std::get<int64_t>(v);
  if (ms < 0 || ms > 60000) return InvalidArgument("must be milliseconds in [0, 60000]");
  s.sample_ms = static_cast<int>(ms);
  return Status::Ok();
}

Status ApplyPath(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  const std::string& p = std::get<std::string>(v);
  if (p.empty() || p[0] != '/') return InvalidArgument("must be an absolute path");
  if (spec.arg1 == "procfs") s.fs = RootFs(p, s.fs.sysfs(), s.fs.rootfs());
  if (spec.arg1 == "sysfs") s.fs = RootFs(s.fs.procfs(), p, s.fs.rootfs());
  if (spec.arg1 == "rootfs") s.fs = RootFs(s.fs.procfs(), s.fs.sysfs(), p);
  return Status::Ok();
}

Status ApplyNvmlLibrary(const SettingSpec&, const SettingValue& v, Settings& s) {
  s.nvml_lib = std::get<std::string>(v);
  return Status::Ok();
}

Status ApplyNvmlTimeout(const SettingSpec&, const SettingValue& v, Settings& s) {
  double d = std::get<double>(v);
  if (!(d >= 0.05 && d <= 3600)) return InvalidArgument("must be seconds in [0.05, 3600]");
  s.nvml_timeout_s = d;
  return Status::Ok();
}

Status ApplyProbeEnabled(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  s.probe_enabled[spec.arg1] = std::get<bool>(v);
  return Status::Ok();
}

Status ApplyFindingEnabled(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  s.thresholds.SetEnabled(spec.arg1, std::get<bool>(v));
  return Status::Ok();
}

Status ApplyFindingAction(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  const std::string& name = std::get<std::string>(v);
  if (name.empty()) return Status::Ok();
  if (!ParseAction(name)) {
    return InvalidArgument(
        "must be one of none, watch, fix_config, contact_provider, restart_app, reset_gpu, "
        "reboot, drain_reset, inspect_hardware (or empty for the catalogue's)");
  }
  s.thresholds.SetAction(spec.arg1, name);
  return Status::Ok();
}

Status ApplyThreshold(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  double d = std::get<double>(v);
  if (!std::isfinite(d) || d < 0) return InvalidArgument("must be a non-negative number");
  s.thresholds.Set(spec.arg1, spec.arg2, d);
  return Status::Ok();
}

// Network layer: [network] keys.
Status ApplyNetTargets(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  const auto& list = std::get<std::vector<std::string>>(v);
  auto parsed = ParseTargets(list);
  if (!parsed.ok()) return parsed.status();
  (spec.arg1 == "targets" ? s.net_targets : s.net_references) = list;
  return Status::Ok();
}

Status ApplyNetInt(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  int64_t n = std::get<int64_t>(v);
  struct Field {
    const char* key;
    int Settings::*member;
    int64_t lo, hi;
  };
  static constexpr Field kFields[] = {
      {"probe_count", &Settings::net_probe_count, 1, 100},
      {"probe_interval_ms", &Settings::net_probe_interval_ms, 1, 10000},
      {"probe_timeout_ms", &Settings::net_probe_timeout_ms, 1, 10000},
      {"resolve_timeout_ms", &Settings::net_resolve_timeout_ms, 1, 10000},
      {"fallback_tcp_port", &Settings::net_fallback_tcp_port, 1, 65535},
      {"http_count", &Settings::net_http_count, 1, 100},
      {"http_interval_ms", &Settings::net_http_interval_ms, 1, 10000},
      {"http_timeout_ms", &Settings::net_http_timeout_ms, 1, 60000},
  };
  for (const auto& f : kFields) {
    if (spec.arg1 != f.key) continue;
    if (n < f.lo || n > f.hi) {
      return InvalidArgument("must be in [" + std::to_string(f.lo) + ", " + std::to_string(f.hi) +
                             "]");
    }
    s.*f.member = static_cast<int>(n);
    return Status::Ok();
  }
  return Internal("no such network setting");
}

Status ApplyHttpTlsVerify(const SettingSpec&, const SettingValue& v, Settings& s) {
  s.net_http_tls_verify = std::get<bool>(v);
  return Status::Ok();
}

// [network] jitter_ms and http_slow_ms: shorthands for the warn thresholds of
// net.target.jitter and net.http.slow (as plan_mbps is for net.nic.saturated).
Status ApplyNetShorthandMs(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  double d = std::get<double>(v);
  if (!std::isfinite(d) || d <= 0 || d > 600000) {
    return InvalidArgument("must be milliseconds in (0, 600000]");
  }
  if (spec.arg1 == "jitter_ms") {
    s.thresholds.Set("net.target.jitter", "warn_jitter_ms", d);
  } else {
    s.thresholds.Set("net.http.slow", "warn_ttfb_ms", d);
  }
  return Status::Ok();
}

// [network] ib_min_rate_gbps: shorthand for net.ib.rate's min_rate_gbps.
Status ApplyIbMinRate(const SettingSpec&, const SettingValue& v, Settings& s) {
  double d = std::get<double>(v);
  if (!std::isfinite(d) || d < 0 || d > 10000) return InvalidArgument("must be Gb/s in [0, 10000]");
  s.thresholds.Set("net.ib.rate", "min_rate_gbps", d);
  return Status::Ok();
}

// [node] required_mounts: absolute mount points, normalised without a trailing '/'.
Status ApplyRequiredMounts(const SettingSpec&, const SettingValue& v, Settings& s) {
  const auto& list = std::get<std::vector<std::string>>(v);
  if (list.size() > 64) return InvalidArgument("at most 64 mount points");
  std::vector<std::string> points;
  for (std::string p : list) {
    bool dotdot = p == ".." || p.find("/../") != std::string::npos ||
                  p.find("/./") != std::string::npos ||
                  (p.size() >= 3 && p.compare(p.size() - 3, 3, "/..") == 0) ||
                  (p.size() >= 2 && p.compare(p.size() - 2, 2, "/.") == 0);
    bool odd = p.find_first_of(" \t\n\\") != std::string::npos || p.find("//") != std::string::npos;
    if (p.empty() || p[0] != '/' || dotdot || odd || p.size() > 4096) {
      return InvalidArgument(
          "expected absolute mount points such as \"/scratch\" (no '..', '.', "
          "'//' or whitespace), got '" +
          Sanitize(p, 60) + "'");
    }
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    points.push_back(std::move(p));
  }
  s.required_mounts = std::move(points);
  return Status::Ok();
}

Status ApplyKnownGpuUsers(const SettingSpec&, const SettingValue& v, Settings& s) {
  s.net_known_gpu_users = std::get<std::vector<std::string>>(v);
  return Status::Ok();
}

Status ApplyInferenceDiscovery(const SettingSpec&, const SettingValue& v, Settings& s) {
  s.inference_discover = std::get<bool>(v);
  return Status::Ok();
}

Status ApplyStatVfsTimeoutMs(const SettingSpec&, const SettingValue& v, Settings& s) {
  int64_t ms = std::get<int64_t>(v);
  if (ms < 10 || ms > 60000) return InvalidArgument("must be milliseconds in [10, 60000]");
  s.disk_statvfs_timeout_ms = static_cast<int>(ms);
  return Status::Ok();
}

// [watch] intervals.
Status ApplyWatchSeconds(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  double d = std::get<double>(v);
  struct Field {
    const char* key;
    double Settings::*member;
    double lo, hi;
  };
  static constexpr Field kFields[] = {
      {"interval_s", &Settings::watch_interval_s, 0.1, 3600},
      {"slow_interval_s", &Settings::watch_slow_interval_s, 0.1, 86400},
      {"rate_window_s", &Settings::watch_rate_window_s, 1, 86400},
  };
  for (const auto& f : kFields) {
    if (spec.arg1 != f.key) continue;
    if (!std::isfinite(d) || d < f.lo || d > f.hi) {
      return InvalidArgument("must be seconds in [" + FormatDouble(f.lo, 1) + ", " +
                             FormatDouble(f.hi, 0) + "]");
    }
    s.*f.member = d;
    return Status::Ok();
  }
  return Internal("no such watch setting");
}

Status ApplyDbPath(const SettingSpec&, const SettingValue& v, Settings& s) {
  const auto& p = std::get<std::string>(v);
  if (p.empty()) return InvalidArgument("must not be empty");
  s.db_path = p;
  return Status::Ok();
}

// [watch] one_cpu (watch/cpu_placement.h).
Status ApplyWatchOneCpu(const SettingSpec&, const SettingValue& v, Settings& s) {
  s.watch_one_cpu = std::get<bool>(v);
  return Status::Ok();
}

// [watch] HTTP server.
Status ApplyWatchHttp(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  if (spec.arg1 == "dcgm_compat") {
    s.watch_dcgm_compat = std::get<bool>(v);
    return Status::Ok();
  }
  const auto& text = std::get<std::string>(v);
  if (text.size() > 4096) return InvalidArgument("is too long");
  if (spec.arg1 == "listen") {
    if (text.empty()) return InvalidArgument("must be HOST:PORT or \"off\"");
    s.watch_listen = text;
  } else {
    s.watch_token_file = text;
  }
  return Status::Ok();
}

// [network] plan_mbps (all NICs) and plan_mbps_nics = ["eth0=100", ...] (per NIC): the
// bandwidth bought, judged as thresholds of net.nic.saturated.
Status ApplyPlanMbps(const SettingSpec&, const SettingValue& v, Settings& s) {
  double d = std::get<double>(v);
  if (!std::isfinite(d) || d < 0 || d > 1e7) return InvalidArgument("must be Mb/s in [0, 1e7]");
  s.thresholds.Set("net.nic.saturated", "plan_mbps", d);
  return Status::Ok();
}

Status ApplyPlanMbpsNics(const SettingSpec&, const SettingValue& v, Settings& s) {
  for (const auto& item : std::get<std::vector<std::string>>(v)) {
    size_t eq = item.find('=');
    auto mbps = eq == std::string::npos ? std::nullopt : ParseDouble(item.substr(eq + 1));
    if (eq == 0 || !mbps || *mbps <= 0 || *mbps > 1e7) {
      return InvalidArgument("expected \"NIC=MBPS\" such as \"eth0=100\", got '" +
                             Sanitize(item, 60) + "'");
    }
    s.thresholds.Set("net.nic.saturated", "plan_mbps." + item.substr(0, eq), *mbps);
  }
  return Status::Ok();
}

// Watch history store: [watch] retention keys.
Status ApplyWatchRetention(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  double d = std::get<double>(v);
  if (spec.arg1 == "raw_retention_h") {
    if (!(d >= 1 && d <= 24 * 31)) return InvalidArgument("must be hours in [1, 744]");
    s.watch_raw_retention_h = d;
  } else {
    if (!(d >= 1 && d <= 3660)) return InvalidArgument("must be days in [1, 3660]");
    s.watch_rollup_retention_d = d;
  }
  return Status::Ok();
}

Status ApplyExpectedGpus(const SettingSpec&, const SettingValue& v, Settings& s) {
  int64_t n = std::get<int64_t>(v);
  if (n < 0 || n > 1024) return InvalidArgument("must be a GPU count in [0, 1024]");
  s.thresholds.Set("gpu.missing", "expected_count", static_cast<double>(n));
  return Status::Ok();
}

// Upkeep: [gpu] temp_alarm_c, [thermal], [backup].
Status ApplyGpuTempAlarm(const SettingSpec&, const SettingValue& v, Settings& s) {
  double d = std::get<double>(v);
  if (!std::isfinite(d) || d < 0 || d > 150) return InvalidArgument("must be C in [0, 150]");
  s.thresholds.Set("gpu.temp.absolute", "alarm_c", d);
  return Status::Ok();
}

Status ApplyThermal(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  if (spec.arg1 == "ipmitool") {
    const auto& cmd = std::get<std::string>(v);
    if (cmd.size() > 4096) return InvalidArgument("is too long");
    s.thermal_ipmitool = cmd;
    return Status::Ok();
  }
  double d = std::get<double>(v);
  if (!(d >= 0.1 && d <= 60)) return InvalidArgument("must be seconds in [0.1, 60]");
  s.thermal_ipmitool_timeout_s = d;
  return Status::Ok();
}

Status ApplyBackup(const SettingSpec& spec, const SettingValue& v, Settings& s) {
  if (spec.arg1 == "command_timeout_s") {
    double d = std::get<double>(v);
    if (!(d >= 0.1 && d <= 300)) return InvalidArgument("must be seconds in [0.1, 300]");
    s.backup_command_timeout_s = d;
    return Status::Ok();
  }
  if (spec.arg1 == "command") {
    const auto& argv = std::get<std::vector<std::string>>(v);
    if (argv.size() > 64) return InvalidArgument("at most 64 arguments");
    if (!argv.empty() && argv[0].empty()) return InvalidArgument("the program must not be empty");
    for (const auto& a : argv) {
      if (a.size() > 4096) return InvalidArgument("has an argument over 4096 bytes");
    }
    s.backup_command = argv;
    return Status::Ok();
  }
  if (spec.arg1 == "max_age_h") {
    double d = std::get<double>(v);
    if (!(d > 0 && d <= 24 * 366)) return InvalidArgument("must be hours in (0, 8784]");
    s.thresholds.Set("host.backup.stale", "max_age_h", d);
    return Status::Ok();
  }
  const auto& list = std::get<std::vector<std::string>>(v);
  if (list.size() > 32) return InvalidArgument("at most 32 patterns");
  for (const auto& p : list) {
    bool dotdot = p == ".." || p.find("/../") != std::string::npos ||
                  (p.size() >= 3 && p.compare(p.size() - 3, 3, "/..") == 0);
    if (p.empty() || p[0] != '/' || dotdot || p.size() > 4096) {
      return InvalidArgument("expected absolute glob patterns without '..', got '" +
                             Sanitize(p, 60) + "'");
    }
  }
  s.backup_paths = list;
  return Status::Ok();
}

std::vector<SettingSpec> StaticSpecs() {
  return {
      {{"gpu", "expected_count"},
       SettingType::kInt,
       int64_t{0},
       "GPUs this node should have; fewer on the PCI bus is gpu.missing (crit), the card that "
       "fell off after a reboot. 0: not checked.",
       ApplyExpectedGpus},
      {{"gpu", "temp_alarm_c"},
       SettingType::kDouble,
       0.0,
       "Absolute GPU temperature alarm in C: a GPU at or above it is gpu.temp.absolute (warn), "
       "beside the relative slowdown-margin rule. 0: off.",
       ApplyGpuTempAlarm},
      {{"thermal", "ipmitool"},
       SettingType::kString,
       Settings().thermal_ipmitool,
       "Command for BMC temperature sensors (`ipmitool sdr type Temperature`, argv, no shell); "
       "run when /dev/ipmi0 exists, the bare name only on the real root. Empty: never run.",
       ApplyThermal,
       "ipmitool"},
      {{"thermal", "ipmitool_timeout_s"},
       SettingType::kDouble,
       Settings().thermal_ipmitool_timeout_s,
       "Seconds ipmitool may take before it is killed (never beyond the check's deadline).",
       ApplyThermal,
       "ipmitool_timeout_s"},
      {{"backup", "paths"},
       SettingType::kStringArray,
       std::vector<std::string>{},
       "Globs of checkpoint/backup files on the host, e.g. [\"/data/ckpt/*.pt\"]; the newest "
       "match older than max_age_h is host.backup.stale. Empty: the backup probe is skipped.",
       ApplyBackup,
       "paths"},
      {{"backup", "max_age_h"},
       SettingType::kDouble,
       24.0,
       "Hours the newest file matching [backup] paths (or reported by [backup] command) may be "
       "old (host.backup.stale).",
       ApplyBackup,
       "max_age_h"},
      {{"backup", "command"},
       SettingType::kStringArray,
       std::vector<std::string>{},
       "Program (argv, no shell) that prints the newest backup's time on its first line, unix "
       "seconds or RFC 3339, for remote or object storage, e.g. [\"/usr/local/bin/newest-ckpt\", "
       "\"s3://bucket/ckpt/\"]; older than max_age_h is host.backup.stale. Empty: not run.",
       ApplyBackup,
       "command"},
      {{"backup", "command_timeout_s"},
       SettingType::kDouble,
       10.0,
       "Seconds the [backup] command may take before it is killed (never beyond the check's "
       "deadline); a timeout is host.backup.none.",
       ApplyBackup,
       "command_timeout_s"},
      {{"watch", "interval_s"},
       SettingType::kDouble,
       Settings().watch_interval_s,
       "`watch`: seconds between ticks; fast probes run every tick.",
       ApplyWatchSeconds,
       "interval_s"},
      {{"watch", "slow_interval_s"},
       SettingType::kDouble,
       Settings().watch_slow_interval_s,
       "`watch`: seconds between runs of the slow probes (" + SlowProbeNames() + ").",
       ApplyWatchSeconds,
       "slow_interval_s"},
      {{"watch", "rate_window_s"},
       SettingType::kDouble,
       Settings().watch_rate_window_s,
       "`watch`: counter rates (ECC errors, PCIe replays, NVLink errors) are judged over this "
       "window of history.",
       ApplyWatchSeconds,
       "rate_window_s"},
      {{"watch", "db"},
       SettingType::kString,
       Settings().db_path,
       "`watch`, `history`, `ack`: the SQLite history database (its directory is created).",
       ApplyDbPath},
      {{"watch", "raw_retention_h"},
       SettingType::kDouble,
       Settings().watch_raw_retention_h,
       "Hours the history keeps every raw sample; older data lives on as 1-minute rollups.",
       ApplyWatchRetention,
       "raw_retention_h"},
      {{"watch", "rollup_retention_d"},
       SettingType::kDouble,
       Settings().watch_rollup_retention_d,
       "Days the history keeps 1-minute rollups (min/avg/max/count) of every series.",
       ApplyWatchRetention,
       "rollup_retention_d"},
      {{"watch", "listen"},
       SettingType::kString,
       Settings().watch_listen,
       "`watch`: HTTP address for /metrics and the API, HOST:PORT ([::1]:PORT for IPv6); "
       "\"off\": no HTTP server.",
       ApplyWatchHttp,
       "listen"},
      {{"watch", "token_file"},
       SettingType::kString,
       Settings().watch_token_file,
       "`watch`: file holding a bearer token (first line, mode 0600) required on every HTTP path "
       "but /healthz; empty: no token.",
       ApplyWatchHttp,
       "token_file"},
      {{"watch", "dcgm_compat"},
       SettingType::kBool,
       Settings().watch_dcgm_compat,
       "`watch`: /metrics also carries dcgm-exporter's DCGM_FI_* names and labels.",
       ApplyWatchHttp,
       "dcgm_compat"},
      {{"watch", "one_cpu"},
       SettingType::kBool,
       Settings().watch_one_cpu,
       "`watch`: keep its threads on one of the CPUs it may use while ticks start on time "
       "(14-19% less CPU a tick on an idle 2-core VM); they may use every allowed CPU again "
       "after 2 ticks that start 50 ms late or more. false: never choose CPUs (`--any-cpu`).",
       ApplyWatchOneCpu},
      {{"check", "deadline_s"},
       SettingType::kDouble,
       Settings().deadline_s,
       "Whole-check deadline in seconds; `gpudoctor check` returns within it plus 1 s, always.",
       ApplyDeadline},
      {{"check", "sample_ms"},
       SettingType::kInt,
       int64_t{Settings().sample_ms},
       "Sampling window in milliseconds for rates (CPU, swap, NIC throughput, counter growth).",
       ApplySampleMs},
      {{"node", "required_mounts"},
       SettingType::kStringArray,
       std::vector<std::string>{},
       "Mount points that must be mounted on this node, e.g. [\"/scratch\", \"/home\"]; one "
       "that is not is host.mount.missing (crit; `check --slurm` drains the node). Empty: not "
       "checked.",
       ApplyRequiredMounts},
      {{"disk", "statvfs_timeout_ms"},
       SettingType::kInt,
       int64_t{Settings().disk_statvfs_timeout_ms},
       "How long the disk probe waits for statvfs of all mounts; a mount that has not answered "
       "by then (stale NFS) is reported as host.disk.unresponsive.",
       ApplyStatVfsTimeoutMs},
      {{"paths", "procfs"},
       SettingType::kString,
       RootFs().procfs(),
       "Where procfs is mounted (a container with the host's /proc at /host/proc: /host/proc).",
       ApplyPath,
       "procfs"},
      {{"paths", "sysfs"},
       SettingType::kString,
       RootFs().sysfs(),
       "Where sysfs is mounted.",
       ApplyPath,
       "sysfs"},
      {{"paths", "rootfs"},
       SettingType::kString,
       RootFs().rootfs(),
       "The host's root filesystem (mounts, /dev/kmsg, /etc).",
       ApplyPath,
       "rootfs"},
      {{"nvml", "library"},
       SettingType::kString,
       std::string(),
       "NVML library to load; empty searches libnvidia-ml.so.1 and the usual driver paths.",
       ApplyNvmlLibrary},
      {{"nvml", "timeout_s"},
       SettingType::kDouble,
       Settings().nvml_timeout_s,
       "Seconds an NVML phase (init, one GPU's sample) may take before its call counts as hung.",
       ApplyNvmlTimeout},
      // Network layer.
      {{"network", "targets"},
       SettingType::kStringArray,
       std::vector<std::string>{},
       "Hosts the service depends on (cluster peers, storage, the gateway): \"host\" is probed "
       "with ICMP echo, \"host:port\" with TCP connect, \"http://host[:port]/path\" and "
       "\"https://...\" with GET requests (DNS, connect, TLS, first byte, status). Empty: the "
       "default gateway is probed.",
       ApplyNetTargets,
       "targets"},
      {{"network", "references"},
       SettingType::kStringArray,
       std::vector<std::string>{},
       "Other sites probed only for comparison (is everyone slow, or only our targets?).",
       ApplyNetTargets,
       "references"},
      {{"network", "probe_count"},
       SettingType::kInt,
       int64_t{Settings().net_probe_count},
       "Probes per host (the implicit default gateway stops at half when all were answered).",
       ApplyNetInt,
       "probe_count"},
      {{"network", "probe_interval_ms"},
       SettingType::kInt,
       int64_t{Settings().net_probe_interval_ms},
       "Milliseconds between probe starts.",
       ApplyNetInt,
       "probe_interval_ms"},
      {{"network", "probe_timeout_ms"},
       SettingType::kInt,
       int64_t{Settings().net_probe_timeout_ms},
       "Milliseconds a probe waits for its reply before it counts as lost.",
       ApplyNetInt,
       "probe_timeout_ms"},
      {{"network", "resolve_timeout_ms"},
       SettingType::kInt,
       int64_t{Settings().net_resolve_timeout_ms},
       "Milliseconds a host name may take to resolve (DNS).",
       ApplyNetInt,
       "resolve_timeout_ms"},
      {{"network", "fallback_tcp_port"},
       SettingType::kInt,
       int64_t{Settings().net_fallback_tcp_port},
       "TCP port probed for \"host\" targets when no ICMP socket can be opened (an RST counts "
       "as an answer).",
       ApplyNetInt,
       "fallback_tcp_port"},
      {{"network", "http_count"},
       SettingType::kInt,
       int64_t{Settings().net_http_count},
       "GET requests per URL target (http://, https://), each on a new connection.",
       ApplyNetInt,
       "http_count"},
      {{"network", "http_interval_ms"},
       SettingType::kInt,
       int64_t{Settings().net_http_interval_ms},
       "Milliseconds between the starts of those requests.",
       ApplyNetInt,
       "http_interval_ms"},
      {{"network", "http_timeout_ms"},
       SettingType::kInt,
       int64_t{Settings().net_http_timeout_ms},
       "Milliseconds a request may take (connect, TLS, first byte) before it counts as failed.",
       ApplyNetInt,
       "http_timeout_ms"},
      {{"network", "http_tls_verify"},
       SettingType::kBool,
       Settings().net_http_tls_verify,
       "https targets: verify the certificate (chain and name); false measures services with "
       "self-signed certificates (a handshake failure is still a failure).",
       ApplyHttpTlsVerify},
      {{"network", "http_slow_ms"},
       SettingType::kDouble,
       1000.0,
       "Median time to first byte of a URL target that counts as slow (net.http.slow warn).",
       ApplyNetShorthandMs,
       "http_slow_ms"},
      {{"network", "jitter_ms"},
       SettingType::kDouble,
       20.0,
       "RTT jitter (mean difference of consecutive round trips) of a target that counts as "
       "unstable (net.target.jitter warn).",
       ApplyNetShorthandMs,
       "jitter_ms"},
      {{"network", "plan_mbps"},
       SettingType::kDouble,
       0.0,
       "Bandwidth bought for this host in Mb/s (hosted servers often buy 100 Mb/s on a 10 Gb/s "
       "port; virtio NICs report no speed): NIC saturation and heavy senders are judged against "
       "it. 0: the link speed.",
       ApplyPlanMbps},
      {{"network", "plan_mbps_nics"},
       SettingType::kStringArray,
       std::vector<std::string>{},
       "Per-NIC bandwidth plans, \"NIC=MBPS\" (\"eth0=100\"); they win over plan_mbps.",
       ApplyPlanMbpsNics},
      {{"network", "ib_min_rate_gbps"},
       SettingType::kDouble,
       0.0,
       "Rate in Gb/s every ACTIVE InfiniBand port should run at (200 for HDR, 400 for NDR); a "
       "port below it is net.ib.rate (`check --slurm` drains the node). 0: not checked.",
       ApplyIbMinRate},
      {{"network", "known_gpu_users"},
       SettingType::kStringArray,
       std::vector<std::string>{},
       "User names (or uids) whose GPU processes are expected; when set, a GPU process of any "
       "other user is a reason to inspect it (proc.suspicious).",
       ApplyKnownGpuUsers},
      // [[inference]] is an array of tables, so discovery has a table of its own.
      {{"inference_discovery", "enabled"},
       SettingType::kBool,
       Settings().inference_discover,
       "Look for local inference servers (vLLM, TGI, SGLang, Triton processes listening on their "
       "default metrics ports) and read them besides the [[inference]] tables; false: read only "
       "the [[inference]] tables (also --no-inference-discovery).",
       ApplyInferenceDiscovery},
  };
}

SettingSpec ProbeSetting(const ProbeSpec& p) {
  return {{"probes", std::string(p.name)},
          SettingType::kBool,
          p.default_on,
          "Probe '" + std::string(p.name) + "': " + std::string(p.description) + ".",
          ApplyProbeEnabled,
          std::string(p.name)};
}

// [finding."ID"]: enabled, action, the entry's thresholds and watch's lifecycle, in this order.
void AppendFindingSettings(const CatalogueEntry& e, std::vector<SettingSpec>& v) {
  std::string id(e.id);
  v.push_back({{"finding", id, "enabled"},
               SettingType::kBool,
               true,
               std::string(e.title) + ": report this finding.",
               ApplyFindingEnabled,
               id});
  v.push_back({{"finding", id, "action"},
               SettingType::kString,
               std::string(),
               "What acts on it (Slurm drain, NPD, alert routing, fleet) reads this action; "
               "empty keeps the catalogue's (" +
                   std::string(ActionName(e.action)) + ").",
               ApplyFindingAction,
               id});
  for (const auto& t : e.thresholds) {
    v.push_back({{"finding", id, std::string(t.key)},
                 SettingType::kDouble,
                 t.default_value,
                 std::string(t.help) + ".",
                 ApplyThreshold,
                 id,
                 std::string(t.key)});
  }
  // `gpudoctor watch` lifecycle.
  WatchDefaults w = WatchDefaultsFor(e);
  v.push_back({{"finding", id, std::string(kForSKey)},
               SettingType::kDouble,
               w.for_s,
               "watch: seconds the finding must fire before it opens (and notifies).",
               ApplyThreshold,
               id,
               std::string(kForSKey)});
  v.push_back({{"finding", id, std::string(kResolveAfterSKey)},
               SettingType::kDouble,
               w.resolve_after_s,
               "watch: seconds it must stay clear before it resolves.",
               ApplyThreshold,
               id,
               std::string(kResolveAfterSKey)});
}

}  // namespace

const std::vector<SettingSpec>& ConfigSchema() {
  static const std::vector<SettingSpec> schema = [] {
    std::vector<SettingSpec> v = StaticSpecs();
    for (const auto& p : ProbeRegistry()) v.push_back(ProbeSetting(p));
    for (const auto* e : Catalogue()) AppendFindingSettings(*e, v);
    return v;
  }();
  return schema;
}

std::optional<SettingSpec> FindSetting(const std::vector<std::string>& path) {
  if (path.size() == 2 && path[0] == "probes") {
    if (const ProbeSpec* p = FindProbe(path[1])) return ProbeSetting(*p);
  }
  if (path.size() == 3 && path[0] == "finding") {
    if (const CatalogueEntry* e = FindCatalogueEntry(path[1])) {
      std::vector<SettingSpec> specs;
      AppendFindingSettings(*e, specs);
      for (SettingSpec& spec : specs) {
        if (spec.path[2] == path[2]) return std::move(spec);
      }
    }
  }
  // The static keys: built once (about a hundred entries), scanned in order.
  static const std::vector<SettingSpec> fixed = StaticSpecs();
  for (const SettingSpec& spec : fixed) {
    if (spec.path == path) return spec;
  }
  return std::nullopt;
}

}  // namespace gpudoctor
