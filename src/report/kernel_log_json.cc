#include "report/kernel_log_json.h"

#include "core/strings.h"

namespace gpudoctor {

nlohmann::ordered_json KernelLogFactsToJson(const KernelLogFacts& k) {
  nlohmann::ordered_json j;
  j["source"] = Sanitize(k.source, 256);
  j["bytes_scanned"] = k.bytes_scanned;
  if (k.records_read) j["records_read"] = k.records_read;
  j["lines_examined"] = k.lines_examined;
  j["events"] = k.events.size();
  j["garbled_lines"] = k.garbled_lines;
  j["repaired_lines"] = k.repaired_lines;
  j["truncated_lines"] = k.truncated_lines;
  j["non_kernel_lines"] = k.non_kernel_lines;
  j["before_since_lines"] = k.before_since_lines;
  j["since_unapplied_lines"] = k.since_unapplied_lines;
  j["dropped_events"] = k.dropped_events;
  j["kmsg_overruns"] = k.kmsg_overruns;
  j["kmsg_records_lost"] = k.kmsg_records_lost;
  j["boots_seen"] = k.boots_seen;
  j["current_boot_only"] = k.current_boot_only;
  j["stopped_at_deadline"] = k.stopped_at_deadline;
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const auto& g : k.gpus) {
    nlohmann::ordered_json e;
    e["pci_bus_id"] = g.pci.ToString();
    e["uuid"] = g.uuid;
    if (!g.serial.empty()) e["serial"] = g.serial;
    gpus.push_back(std::move(e));
  }
  j["gpus"] = std::move(gpus);
  return j;
}

}  // namespace gpudoctor
