// Upkeep rule sets, one file each, run from UpkeepRules
// (upkeep_rules.cc). Pure functions of the facts and the snapshot's time; thresholds through
// Thresholds::Get. Internal to src/rules.
#pragma once

#include <chrono>
#include <vector>

#include "facts/snapshot.h"
#include "findings/finding.h"
#include "rules/make_finding.h"
#include "rules/thresholds.h"

namespace gpudoctor {

// host.inlet.temperature (inlet-kind sensors only) and gpu.temp.absolute.
void ThermalRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);
// host.reboot.pending and driver.module.kernel_mismatch.
void BootRules(const BootFacts& boot, const Thresholds& t, std::vector<Finding>& out);
// driver.branch.eol against `now` (the check's time; skipped when it is the epoch).
void DriverBranchRules(const DriverFacts& driver, std::chrono::system_clock::time_point now,
                       const Thresholds& t, std::vector<Finding>& out);
// driver.release.old: an older point release than the release table knows for the branch (a
// branch past its end of life is left to driver.branch.eol).
void DriverReleaseRules(const DriverFacts& driver, std::chrono::system_clock::time_point now,
                        std::vector<Finding>& out);
// driver.cuda_too_old: a GPU process's CUDA runtime newer than the driver's CUDA version.
void CudaRuntimeRules(const GpuLayerFacts& gpu, std::vector<Finding>& out);
// host.updates.security against `now`.
void UpdateRules(const UpdateFacts& updates, std::chrono::system_clock::time_point now,
                 const Thresholds& t, std::vector<Finding>& out);
// host.backup.stale and host.backup.none against `now`.
void BackupRules(const BackupFacts& backups, std::chrono::system_clock::time_point now,
                 const Thresholds& t, std::vector<Finding>& out);

}  // namespace gpudoctor
