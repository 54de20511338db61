#include "fleet/health_table.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gpudoctor::fleet {
namespace {

int Rank(const std::string& worst) { return worst == "crit" ? 3 : worst == "warn" ? 2 : 0; }

}  // namespace

std::vector<NodeRow> BuildHealthTable(const FleetData& data, const std::vector<size_t>& onsets,
                                      const std::vector<Straggler>& stragglers) {
  std::map<std::string, NodeRow> rows;
  // rows[node], remembering the last node: reports and cards come grouped by node, so most
  // lookups are the previous one's (100k GPUs: 750,000 reports, 100,000 cards).
  std::map<std::string, NodeRow>::iterator last_row = rows.end();
  auto row_of = [&](const std::string& node) -> NodeRow& {
    if (last_row == rows.end() || last_row->first != node) {
      last_row = rows.try_emplace(node).first;
    }
    return last_row->second;
  };
  for (const auto& r : data.reports) {
    NodeRow& row = row_of(r.node);
    row.node = r.node;
    ++row.reports;
    row.last_report_s = std::max(row.last_report_s, r.time_s);
  }
  for (size_t i : onsets) ++rows[data.findings[i].node].onsets;
  std::unordered_map<uint32_t, const Straggler*> strag;
  for (const auto& s : stragglers) strag[s.card] = &s;
  // Latest sample per card, only from the node's latest report.
  std::vector<const GpuSample*> latest(data.cards.size(), nullptr);
  std::vector<bool> seen(data.cards.size(), false);
  std::vector<int64_t> last_of_card(data.cards.size(), 0);
  for (size_t c = 0; c < data.cards.size(); ++c) {
    last_of_card[c] = row_of(data.cards[c].node).last_report_s;
  }
  for (const auto& s : data.samples) {
    seen[s.card] = true;
    if (s.time_s == last_of_card[s.card]) latest[s.card] = &s;
  }
  for (uint32_t c = 0; c < latest.size(); ++c) {
    if (seen[c] && latest[c] == nullptr) rows[data.cards[c].node].missing_cards.push_back(c);
  }
  std::map<std::string, std::vector<uint32_t>> cards_of;
  std::vector<uint32_t>* last_cards = nullptr;
  const std::string* last_node = nullptr;
  for (uint32_t c = 0; c < latest.size(); ++c) {
    if (!latest[c]) continue;
    if (last_node == nullptr || *last_node != data.cards[c].node) {
      auto it = cards_of.try_emplace(data.cards[c].node).first;
      last_node = &it->first;
      last_cards = &it->second;
    }
    last_cards->push_back(c);
  }
  for (auto& [node, row] : rows) {
    for (uint32_t c : cards_of[node]) {
      GpuRow g;
      g.card = c;
      g.worst = "ok";
      const GpuSample& s = *latest[c];
      g.sm_clock_mhz = s.sm_clock_mhz;
      g.power_w = s.power_w;
      g.util_pct = s.util_pct;
      g.temp_c = s.temp_c;
      if (auto it = strag.find(c); it != strag.end()) {
        g.straggler = it->second->kind;
        ++row.stragglers;
      }
      row.gpu_rows.push_back(g);
    }
    row.gpus = static_cast<int>(row.gpu_rows.size());
  }
  for (const auto& e : data.findings) {
    NodeRow& row = rows[e.node];
    if (e.time_s != row.last_report_s || e.severity == Severity::kInfo) continue;
    std::string sev = SeverityName(e.severity);
    if (Rank(sev) > Rank(row.worst)) {
      row.worst = sev;
      row.worst_id = e.id;
      row.worst_summary = e.summary;
    }
    for (auto& g : row.gpu_rows) {
      const Card& c = data.cards[g.card];
      bool same = (!e.gpu.pci_bus_id.empty() && e.gpu.pci_bus_id == c.pci_bus_id) ||
                  (!e.gpu.uuid.empty() && e.gpu.uuid == c.uuid);
      if (same && Rank(sev) > Rank(g.worst)) {
        g.worst = sev;
        g.worst_id = e.id;
      }
    }
  }
  std::vector<NodeRow> out;
  for (auto& [node, row] : rows) {
    std::stable_sort(row.gpu_rows.begin(), row.gpu_rows.end(),
                     [](const GpuRow& a, const GpuRow& b) {
                       int ra = Rank(a.worst) + (a.straggler.empty() ? 0 : 1);
                       int rb = Rank(b.worst) + (b.straggler.empty() ? 0 : 1);
                       return ra > rb;
                     });
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const NodeRow& a, const NodeRow& b) {
    int ra = Rank(a.worst) + (a.stragglers > 0 || !a.missing_cards.empty() ? 1 : 0);
    int rb = Rank(b.worst) + (b.stragglers > 0 || !b.missing_cards.empty() ? 1 : 0);
    if (ra != rb) return ra > rb;
    return a.onsets > b.onsets;
  });
  return out;
}

}  // namespace gpudoctor::fleet
