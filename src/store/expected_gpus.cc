#include "store/expected_gpus.h"

#include <algorithm>
#include <set>

#include "core/root_fs.h"

namespace gpudoctor {

std::optional<int> LastSeenGpuCount(const std::vector<StoredGpu>& ledger, int64_t slack_s) {
  int64_t newest = 0;
  for (const StoredGpu& g : ledger) newest = std::max(newest, g.last_seen_s);
  if (newest <= 0) return std::nullopt;
  std::set<std::string> slots;
  for (const StoredGpu& g : ledger) {
    if (g.last_seen_s < newest - slack_s) continue;
    slots.insert(!g.pci_bus_id.empty() ? "bus:" + g.pci_bus_id
                 : !g.uuid.empty()     ? "uuid:" + g.uuid
                                       : "serial:" + g.serial);
  }
  if (slots.empty()) return std::nullopt;
  return static_cast<int>(slots.size());
}

std::optional<int> ReadLastSeenGpuCount(const std::string& db_path, TimePoint deadline) {
  if (db_path.empty()) return std::nullopt;
  auto result = RunWithDeadline(
      [db_path, deadline]() -> std::optional<int> {
        if (!RootFs::Exists(db_path)) return std::nullopt;
        auto reader = HistoryReader::Open(db_path, deadline);
        if (!reader.ok()) return std::nullopt;
        auto ledger = (*reader)->QueryGpus(4096);
        if (!ledger.ok()) return std::nullopt;
        return LastSeenGpuCount(*ledger);
      },
      deadline);
  return result ? *result : std::nullopt;
}

bool ApplyHistoryGpuCount(Settings& settings, std::optional<int> count) {
  if (!count || *count <= 0) return false;
  if (settings.thresholds.Find("gpu.missing", "expected_count")) return false;  // configured
  settings.thresholds.Set("gpu.missing", "expected_count", *count);
  settings.thresholds.Set("gpu.missing", kExpectedFromHistoryKey, 1);
  return true;
}

}  // namespace gpudoctor
