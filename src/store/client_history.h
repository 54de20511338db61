// net.clients.degraded against each client network's own history: with one or two client
// networks there is nobody to compare with, so each network is compared with how it usually sees
// this server (the stored gpudoctor_net_client_rtt_seconds and _retransmit_ratio series, label
// network; metrics/metric_table.cc stores the 8 networks with the most connections per sockets
// sample).
//
// A network is degraded against its history when its median RTT now is at least
// history_rtt_factor × its baseline and history_rtt_margin_ms above it, or its retransmitted
// share is history_retrans_pct points above its baseline. The baseline: the median of its stored
// samples of the last history_days days, once it has history_min_samples of them. Runs only when
// the comparison across networks (rules/net_rules.cc) did not already report; verdict
// "own_history".
// UDP peers (game and streaming traffic) are not judged: sock_diag reports no RTT for UDP sockets.
//
// `watch`: ClientHistorySink seeds from the file at start (bounded by a deadline) and then keeps
// the samples of its own ticks in memory (bounded); `check`: ReadClientHistory before judging.
// Thread-safety: ClientHistory is not thread-safe; the sink is called from the tick thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "facts/snapshot.h"
#include "findings/finding.h"
#include "rules/thresholds.h"
#include "store/history_store.h"
#include "watch/tick_sink.h"

namespace gpudoctor {

struct ClientBaseline {
  std::optional<double> rtt_ms;       // median of the stored samples
  std::optional<double> retrans_pct;  // median of the stored samples
  int samples = 0;
};

class ClientHistory {
 public:
  static constexpr size_t kMaxNetworks = 64;
  static constexpr size_t kMaxSamples = 4096;  // per network and series, newest kept

  // Stored series: gpudoctor_net_client_rtt_seconds / _retransmit_ratio, label network=.
  void Seed(const std::vector<Series>& rtt_seconds, const std::vector<Series>& retrans_ratio);
  // One sample of a network (ms, percent).
  void Observe(const std::string& network, int64_t unix_s, std::optional<double> rtt_ms,
               std::optional<double> retrans_pct);
  // The baseline of samples in [since_unix_s, before_unix_s); nullopt below min_samples.
  std::optional<ClientBaseline> Baseline(const std::string& network, int64_t since_unix_s,
                                         int64_t before_unix_s, int min_samples) const;
  bool empty() const { return networks_.empty(); }

 private:
  struct Samples {
    std::deque<std::pair<int64_t, double>> rtt_ms, retrans_pct;
  };
  Samples* Slot(const std::string& network);
  std::map<std::string, Samples> networks_;
};

// The stored samples of the last `days` days before now (read-only, bounded by `deadline`);
// empty when the file does not exist or cannot be read in time.
ClientHistory ReadClientHistory(const std::string& db_path, int64_t now_unix_s, double days,
                                TimePoint deadline);

// Adds net.clients.degraded (verdict own_history) for the networks of `sockets` that are
// degraded against their own history, unless `findings` already holds net.clients.degraded.
// Samples of the last 10 minutes before `now_unix_s` are not part of a baseline.
void JudgeClientsAgainstHistory(const SocketTrafficFacts& sockets, const ClientHistory& history,
                                int64_t now_unix_s, const Thresholds& t,
                                std::vector<Finding>& findings);

// `watch`: judges each tick against the history, then remembers the tick's samples.
class ClientHistorySink final : public TickSink {
 public:
  ClientHistorySink(ClientHistory seed, Thresholds thresholds)
      : history_(std::move(seed)), thresholds_(std::move(thresholds)) {}
  void Judge(std::vector<Finding>& findings, TickResult& tick) override;
  void OnTick(const std::shared_ptr<const TickResult>& tick) override;

 private:
  ClientHistory history_;
  Thresholds thresholds_;
};

}  // namespace gpudoctor
