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
};

}  // namespace gpudoctor
