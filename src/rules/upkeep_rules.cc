// Runs the upkeep rule sets (rules/upkeep_rules.h) over a snapshot.
#include "rules/upkeep_rules.h"

#include "rules/engine.h"

namespace gpudoctor {

void UpkeepRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  ThermalRules(snap, t, out);
  if (snap.host.boot) BootRules(*snap.host.boot, t, out);
  DriverBranchRules(snap.gpu.driver, snap.time, t, out);
  DriverReleaseRules(snap.gpu.driver, snap.time, out);
  CudaRuntimeRules(snap.gpu, out);
  if (snap.host.updates) UpdateRules(*snap.host.updates, snap.time, t, out);
  if (snap.host.backups) BackupRules(*snap.host.backups, snap.time, t, out);
}

}  // namespace gpudoctor
