// The history store as a sink of the watch engine: it raises the store's own faults as
// gpudoctor.* findings with their real cause (never dressed up as a host finding: host.disk.full
// comes only from statvfs) and queues every published tick for the writer.
//   gpudoctor.history.degraded  while the history is not written (locked by another process,
//                               disk full, I/O error, path refused)
//   gpudoctor.history.replaced  for kHistoryReplacedNoticeS after the database was deleted or
//                               replaced under the daemon and reopened
// Thread-safety: as TickSink (the tick thread).
#pragma once

#include <string>
#include <vector>

#include "findings/finding.h"
#include "store/history_store.h"
#include "watch/tick_sink.h"

namespace gpudoctor {

// A reopened history is reported this long (monotonic seconds), so it opens and notifies.
inline constexpr double kHistoryReplacedNoticeS = 600;

void AddHistoryFindings(const std::string& db_path, const StoreHealth& health,
                        std::vector<Finding>& findings);

// Why /healthz should call the history degraded; empty when it is fine.
std::string HistoryDegradedReason(const StoreHealth& health);

class HistorySink final : public TickSink {
 public:
  explicit HistorySink(HistoryStore& store) : store_(store) {}
  void Judge(std::vector<Finding>& findings, TickResult& tick) override;
  void OnTick(const std::shared_ptr<const TickResult>& tick) override;

 private:
  HistoryStore& store_;
};

}  // namespace gpudoctor
