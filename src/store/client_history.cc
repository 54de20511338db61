#include "store/client_history.h"

#include <algorithm>
#include <cmath>

#include "core/root_fs.h"
#include "core/strings.h"
#include "rules/catalogue.h"
#include "rules/make_finding.h"

namespace gpudoctor {
namespace {

constexpr const char* kId = "net.clients.degraded";
constexpr const char* kRttMetric = "gpudoctor_net_client_rtt_seconds";
constexpr const char* kRetransMetric = "gpudoctor_net_client_retransmit_ratio";
constexpr int64_t kRecentExcludedS = 600;  // the current episode is not its own baseline

std::string NetworkOf(const std::string& labels) {
  constexpr std::string_view kKey = "network=";
  size_t pos = labels.find(kKey);
  if (pos == std::string::npos) return "";
  size_t end = labels.find(',', pos);
  return labels.substr(pos + kKey.size(),
                       end == std::string::npos ? std::string::npos : end - pos - kKey.size());
}

void Push(std::deque<std::pair<int64_t, double>>& q, int64_t t, double v) {
  if (!std::isfinite(v)) return;
  q.emplace_back(t, v);
  while (q.size() > ClientHistory::kMaxSamples) q.pop_front();
}

std::optional<double> Median(const std::deque<std::pair<int64_t, double>>& q, int64_t since,
                             int64_t before, int min_samples, int& n) {
  std::vector<double> v;
  for (const auto& [t, x] : q) {
    if (t >= since && t < before) v.push_back(x);
  }
  n = std::max(n, static_cast<int>(v.size()));
  if (v.empty() || static_cast<int>(v.size()) < min_samples) return std::nullopt;
  auto mid = v.begin() + static_cast<long>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

ClientHistory::Samples* ClientHistory::Slot(const std::string& network) {
  auto it = networks_.find(network);
  if (it != networks_.end()) return &it->second;
  if (networks_.size() >= kMaxNetworks || network.empty()) return nullptr;
  return &networks_[network];
}

void ClientHistory::Seed(const std::vector<Series>& rtt_seconds,
                         const std::vector<Series>& retrans_ratio) {
  for (const Series& s : rtt_seconds) {
    if (Samples* slot = Slot(NetworkOf(s.labels))) {
      for (const auto& [t, v] : s.points) Push(slot->rtt_ms, t, v * 1e3);
    }
  }
  for (const Series& s : retrans_ratio) {
    if (Samples* slot = Slot(NetworkOf(s.labels))) {
      for (const auto& [t, v] : s.points) Push(slot->retrans_pct, t, v * 100);
    }
  }
}

void ClientHistory::Observe(const std::string& network, int64_t unix_s,
                            std::optional<double> rtt_ms, std::optional<double> retrans_pct) {
  Samples* slot = Slot(network);
  if (slot == nullptr) return;
  if (rtt_ms) Push(slot->rtt_ms, unix_s, *rtt_ms);
  if (retrans_pct) Push(slot->retrans_pct, unix_s, *retrans_pct);
}

std::optional<ClientBaseline> ClientHistory::Baseline(const std::string& network,
                                                      int64_t since_unix_s, int64_t before_unix_s,
                                                      int min_samples) const {
  auto it = networks_.find(network);
  if (it == networks_.end()) return std::nullopt;
  ClientBaseline b;
  b.rtt_ms = Median(it->second.rtt_ms, since_unix_s, before_unix_s, min_samples, b.samples);
  b.retrans_pct =
      Median(it->second.retrans_pct, since_unix_s, before_unix_s, min_samples, b.samples);
  if (!b.rtt_ms && !b.retrans_pct) return std::nullopt;
  return b;
}

ClientHistory ReadClientHistory(const std::string& db_path, int64_t now_unix_s, double days,
                                TimePoint deadline) {
  if (db_path.empty()) return {};
  auto result = RunWithDeadline(
      [db_path, now_unix_s, days, deadline]() -> ClientHistory {
        ClientHistory h;
        if (!RootFs::Exists(db_path)) return h;
        auto reader = HistoryReader::Open(db_path, deadline);
        if (!reader.ok()) return h;
        SeriesQuery q;
        q.gpu = -1;
        q.since_unix_s = now_unix_s - static_cast<int64_t>(days * 86400);
        q.until_unix_s = now_unix_s;
        q.max_points = static_cast<int>(ClientHistory::kMaxSamples);
        q.metric = kRttMetric;
        auto rtt = (*reader)->QuerySeries(q);
        q.metric = kRetransMetric;
        auto retrans = (*reader)->QuerySeries(q);
        if (!rtt.ok() || !retrans.ok()) return h;
        h.Seed(*rtt, *retrans);
        return h;
      },
      deadline);
  return result ? std::move(*result) : ClientHistory();
}

void JudgeClientsAgainstHistory(const SocketTrafficFacts& sockets, const ClientHistory& history,
                                int64_t now_unix_s, const Thresholds& t,
                                std::vector<Finding>& findings) {
  if (!t.Enabled(kId)) return;
  for (const Finding& f : findings) {
    if (f.id == kId) return;  // the networks were compared with each other already
  }
  const double factor = t.Get(kId, "history_rtt_factor");
  const double margin_ms = t.Get(kId, "history_rtt_margin_ms");
  const double retrans_pts = t.Get(kId, "history_retrans_pct");
  const int min_samples = static_cast<int>(t.Get(kId, "history_min_samples"));
  const int64_t since = now_unix_s - static_cast<int64_t>(t.Get(kId, "history_days") * 86400);
  const int64_t before = now_unix_s - kRecentExcludedS;
  int judged = 0;
  std::string worst;
  int degraded = 0;
  for (const ClientNetworkFacts& g : sockets.client_networks) {
    if (!g.rtt_median_ms && !g.retrans_pct) continue;
    std::optional<ClientBaseline> b = history.Baseline(g.network, since, before, min_samples);
    if (!b) continue;
    ++judged;
    bool slow = g.rtt_median_ms && b->rtt_ms && *g.rtt_median_ms >= *b->rtt_ms * factor &&
                *g.rtt_median_ms >= *b->rtt_ms + margin_ms;
    bool lossy = g.retrans_pct && b->retrans_pct && *g.retrans_pct >= *b->retrans_pct + retrans_pts;
    if (!slow && !lossy) continue;
    if (++degraded > 5) continue;
    if (!worst.empty()) worst += ", ";
    worst += g.network;
    if (slow) {
      worst += " rtt " + FormatDouble(*g.rtt_median_ms, 0) + " ms (usually " +
               FormatDouble(*b->rtt_ms, 0) + " ms)";
    }
    if (lossy) {
      worst += " retrans " + FormatDouble(*g.retrans_pct, 1) + "% (usually " +
               FormatDouble(*b->retrans_pct, 1) + "%)";
    }
  }
  if (degraded == 0) return;
  Finding f = MakeFinding(kId, Severity::kWarn,
                          std::to_string(degraded) + " of " + std::to_string(judged) +
                              " client networks see the server slower than usual: " + worst);
  f.Add("degraded_networks", static_cast<int64_t>(degraded))
      .Add("client_networks", static_cast<int64_t>(judged))
      .Add("worst", worst)
      .Add("baseline_days", t.Get(kId, "history_days"))
      .Add("verdict", "own_history");
  KeepStepsFor(f, "own_history");
  if (auto name = t.ActionOverride(kId); name && FindCatalogueEntry(kId) != nullptr) {
    if (auto a = ParseAction(*name))
      f.action = ActionAtSeverity(*a, f.severity, *FindCatalogueEntry(kId));
  }
  findings.push_back(std::move(f));
}

void ClientHistorySink::Judge(std::vector<Finding>& findings, TickResult& tick) {
  const auto& sockets = tick.report.snapshot.network.sockets;
  if (!sockets) return;
  JudgeClientsAgainstHistory(*sockets, history_, tick.unix_ms / 1000, thresholds_, findings);
}

void ClientHistorySink::OnTick(const std::shared_ptr<const TickResult>& tick) {
  const auto& sockets = tick->report.snapshot.network.sockets;
  if (!sockets) return;
  // The same networks the store keeps (the first 8 with a measurement), so a restart seeds
  // what the running daemon knew.
  size_t n = 0;
  for (const ClientNetworkFacts& g : sockets->client_networks) {
    if (n >= 8) break;
    if (!g.rtt_median_ms && !g.retrans_pct) continue;
    ++n;
    history_.Observe(g.network, tick->unix_ms / 1000, g.rtt_median_ms, g.retrans_pct);
  }
}

}  // namespace gpudoctor
