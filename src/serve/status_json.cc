#include "serve/status_json.h"

#include <algorithm>
#include <vector>

#include "report/json_report.h"
#include "store/history_store.h"

namespace gpudoctor {

std::string RenderStatusJson(const TickResult& tick) {
  nlohmann::ordered_json j = ReportToJson(tick.report);
  std::vector<const TrackedFinding*> open;
  for (const TrackedFinding& t : tick.findings) {
    if (t.state == FindingState::kOpen) open.push_back(&t);
  }
  std::stable_sort(open.begin(), open.end(), [](const TrackedFinding* a, const TrackedFinding* b) {
    return a->last.severity > b->last.severity;
  });
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const TrackedFinding* t : open) {
    nlohmann::ordered_json e = TrackedFindingToJson(*t);
    e["open_s"] = std::max<int64_t>(0, (tick.unix_ms - t->opened_ms) / 1000);
    arr.push_back(std::move(e));
  }
  j["open_findings"] = std::move(arr);
  return DumpReportJson(j);
}

}  // namespace gpudoctor
