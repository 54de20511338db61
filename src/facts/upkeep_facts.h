// Facts about the machine's surroundings and upkeep: room/inlet
// temperature sensors (thermal probe), installed vs running kernels and where the NVIDIA module
// is built (boot probe), and the newest file of each configured backup/checkpoint pattern
// (backup probe). Plain data; every measured value is optional (absent = unknown, never 0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpudoctor {

// One temperature sensor whose label names the air around the machine or its board.
enum class SensorKind {
  kInlet,  // inlet / ambient / intake: the air the server breathes (room temperature)
  kBoard,  // board / system: the mainboard, usually 10-20 C above inlet
};
const char* SensorKindName(SensorKind k);  // "inlet", "board"

struct TemperatureSensor {
  std::string name;    // label as the source prints it: "Inlet Temp", "01-Inlet Ambient"
  std::string source;  // "hwmon" or "ipmi"
  std::string chip;    // hwmon: the chip's name file ("nct6798", "acpitz") and input; ipmi: ""
  SensorKind kind = SensorKind::kInlet;
  std::optional<double> temp_c;  // absent: the sensor gave no reading
};

struct ThermalFacts {
  std::vector<TemperatureSensor> sensors;  // hwmon first, then ipmi; bounded
  bool ipmi_ran = false;                   // ipmitool was run (and answered)
  std::string ipmi_note;                   // why ipmitool was not run or failed; empty when ok
};

// One kernel found under /boot (vmlinuz-VERSION) or /lib/modules/VERSION.
struct InstalledKernel {
  std::string version;           // "6.1.0-27-amd64"
  bool has_image = false;        // /boot/vmlinuz-VERSION exists
  bool has_modules_dir = false;  // /lib/modules/VERSION/kernel or modules.dep exists
  // Path of the NVIDIA kernel module under /lib/modules/VERSION (host path); empty: none found
  // in the places drivers install it (updates/, extra/, kernel/drivers/video/, kernel/nvidia*).
  std::string nvidia_module;
};

struct BootFacts {
  std::string running_kernel;  // /proc/sys/kernel/osrelease
  // Installed kernels, oldest first by version (dpkg / sort -V order); bounded.
  std::vector<InstalledKernel> kernels;
  std::optional<bool> reboot_required_flag;       // /run/reboot-required (Debian/Ubuntu) exists
  std::vector<std::string> reboot_required_pkgs;  // /run/reboot-required.pkgs, bounded
  std::optional<bool> nvidia_loaded;              // /proc/modules lists "nvidia"
  bool scan_truncated = false;                    // the module search hit its bound on some kernel
};

// The [backup] command's answer: the newest backup's time as the command printed it.
struct BackupCommandResult {
  std::string command;                   // as configured (argv joined by spaces)
  std::optional<int64_t> newest_unix_s;  // parsed from its first output line
  std::string output;                    // that line, sanitised; for the evidence
  std::string error;                     // why no time: not found, timeout, exit 3, bad output
};

// One configured pattern ([backup] paths) and what matched it.
struct BackupPattern {
  std::string pattern;                         // as configured: "/data/ckpt/*.pt"
  int matched = 0;                             // files and directories matching it
  std::string newest_path;                     // host path of the newest match; empty: none
  std::optional<int64_t> newest_mtime_unix_s;  // its modification time
  bool truncated = false;  // stopped at the scan bound: "newest" is of the entries scanned
  std::string error;       // why the pattern could not be resolved; empty when it could
};

struct BackupFacts {
  std::vector<BackupPattern> patterns;
  // [backup] command: prints the newest backup's time (remote or object storage).
  std::optional<BackupCommandResult> command;
};

// One security update the package manager would install (its local lists, no network).
struct PendingUpdate {
  std::string name;               // "openssl"
  std::string installed_version;  // "3.0.11-1~deb12u2"
  std::string candidate_version;  // "3.0.15-1~deb12u1"
  std::string suite;              // "bookworm-security"
  // The Date of the list that offers it: the update was published no later than this.
  std::optional<int64_t> list_date_unix_s;
};

// Pending security updates (boot probe). apt: /var/lib/apt/lists/*security*_Packages against
// /var/lib/dpkg/status; dnf/yum: `dnf -C updateinfo list --security` (cache only).
struct UpdateFacts {
  std::string manager;   // "apt", "dnf", "yum"
  std::string method;    // how it was read, for the evidence
  bool checked = false;  // the state was read; false: `note` says why not
  std::string note;
  int security_lists = 0;              // security suites found in the lists
  int pending_count = 0;               // packages with a newer version in a security suite
  std::vector<PendingUpdate> pending;  // bounded (kMaxPendingListed), oldest list first
  // The newest Date among the security lists: when apt last fetched them (how fresh the
  // answer is); nullopt for dnf or when no list carries a date.
  std::optional<int64_t> lists_date_unix_s;
};

}  // namespace gpudoctor
