// Text and JSON of `gpudoctor report bandwidth` (bandwidth_report.h).
#include <cmath>
#include <cstdio>

#include "bandwidth/bandwidth_report.h"
#include "core/strings.h"
#include "core/time_spec.h"

namespace gpudoctor {
namespace {

double Round(double v, int digits) {
  double m = std::pow(10, digits);
  return std::round(v * m) / m;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  return buf;
}

std::string Duration(int64_t s) {
  if (s >= 86400) return Num(s / 86400.0) + " d";
  if (s >= 3600) return Num(s / 3600.0) + " h";
  return std::to_string(s / 60) + " min";
}

void DirectionText(const BandwidthDirection& d, double plan, std::string& out) {
  out += std::string("  ") + (d.direction == "tx" ? "sent    " : "received") + "  ";
  if (d.buckets == 0) {
    out += "no data\n";
    return;
  }
  out += "95th percentile " + Num(d.p95_mbps) + " Mb/s, peak " + Num(d.peak_mbps) + " Mb/s (" +
         FormatUtc(d.peak_at_s) + "), mean " + Num(d.mean_mbps) + " Mb/s";
  if (d.above_80_pct) {
    out += ", above 80% of the plan " + Num(*d.above_80_pct) + "% of the time";
  }
  out += "\n";
  if (plan <= 0 || d.full_buckets == 0) return;
  if (d.top.empty()) {
    out += "            while full: no sockets sample names a " +
           std::string(d.direction == "tx" ? "sender" : "receiver") + "\n";
    return;
  }
  out += std::string("            while full, top ") +
         (d.direction == "tx" ? "senders" : "receivers") + ":";
  for (size_t i = 0; i < d.top.size(); ++i) {
    out += (i ? ", " : " ") + Sanitize(d.top[i].process, 64) + " " + Num(d.top[i].share_pct) + "%";
  }
  out += " (" + std::to_string(d.full_buckets_with_senders) + " of " +
         std::to_string(d.full_buckets) + " full 5-minute periods sampled)\n";
}

nlohmann::ordered_json DirectionJson(const BandwidthDirection& d) {
  nlohmann::ordered_json j;
  j["buckets"] = d.buckets;
  j["p95_mbps"] = Round(d.p95_mbps, 3);
  j["peak_mbps"] = Round(d.peak_mbps, 3);
  j["peak_at"] = d.buckets ? nlohmann::ordered_json(FormatUtc(d.peak_at_s)) : nullptr;
  j["mean_mbps"] = Round(d.mean_mbps, 3);
  j["above_80_pct"] = d.above_80_pct ? nlohmann::ordered_json(Round(*d.above_80_pct, 3)) : nullptr;
  j["full_buckets"] = d.full_buckets;
  j["full_buckets_with_senders"] = d.full_buckets_with_senders;
  nlohmann::ordered_json top = nlohmann::ordered_json::array();
  for (const auto& s : d.top) {
    top.push_back({{"process", s.process},
                   {"bytes", std::llround(s.bytes)},
                   {"share_pct", Round(s.share_pct, 3)}});
  }
  j["top"] = std::move(top);
  return j;
}

}  // namespace

std::string BandwidthReportText(const BandwidthReport& r) {
  std::string out = "Bandwidth " + FormatUtc(r.since_unix_s) + " .. " + FormatUtc(r.until_unix_s) +
                    " (5-minute averages; 95th percentile billing)\n";
  if (r.nics.empty()) return out + "\n" + r.note + "\n";
  for (const NicBandwidth& n : r.nics) {
    out += "\n" + Sanitize(n.nic, 64) + ": plan ";
    out += n.plan_mbps > 0 ? Num(n.plan_mbps) + " Mb/s (" + n.plan_source + ")" : "unknown";
    if (n.link_mbps && n.plan_source != "link speed")
      out += ", link " + Num(*n.link_mbps) + " Mb/s";
    out += "\n";
    out += "  recorded  " + FormatUtc(n.first_s) + " .. " + FormatUtc(n.last_s + kBandwidthBucketS);
    if (n.gap_buckets > 0) {
      out += ", " + std::to_string(n.gap_buckets) + " 5-minute periods missing (longest gap " +
             Duration(n.longest_gap_s) + ")";
    }
    out += "\n";
    DirectionText(n.tx, n.plan_mbps, out);
    DirectionText(n.rx, n.plan_mbps, out);
    out += "  advice    " + n.advice.text + "\n";
  }
  return out;
}

nlohmann::ordered_json BandwidthReportJson(const BandwidthReport& r, bool with_points) {
  nlohmann::ordered_json j;
  j["since"] = FormatUtc(r.since_unix_s);
  j["until"] = FormatUtc(r.until_unix_s);
  j["bucket_s"] = kBandwidthBucketS;
  nlohmann::ordered_json nics = nlohmann::ordered_json::array();
  for (const NicBandwidth& n : r.nics) {
    nlohmann::ordered_json x;
    x["nic"] = n.nic;
    x["plan_mbps"] = n.plan_mbps > 0 ? nlohmann::ordered_json(n.plan_mbps) : nullptr;
    x["plan_source"] = n.plan_source;
    x["link_mbps"] = n.link_mbps ? nlohmann::ordered_json(*n.link_mbps) : nullptr;
    x["first"] = FormatUtc(n.first_s);
    x["last"] = FormatUtc(n.last_s + kBandwidthBucketS);
    x["gap_buckets"] = n.gap_buckets;
    x["longest_gap_s"] = n.longest_gap_s;
    x["tx"] = DirectionJson(n.tx);
    x["rx"] = DirectionJson(n.rx);
    nlohmann::ordered_json a;
    a["kind"] = n.advice.kind;
    if (n.advice.kind != "none") a["need_mbps"] = Round(n.advice.need_mbps, 3);
    a["upgrade_to_mbps"] =
        n.advice.upgrade_to_mbps ? nlohmann::ordered_json(*n.advice.upgrade_to_mbps) : nullptr;
    if (n.advice.kind == "split") {
      a["sender"] = n.advice.sender;
      a["sender_share_pct"] = Round(n.advice.sender_share_pct, 3);
    }
    a["text"] = n.advice.text;
    x["advice"] = std::move(a);
    if (with_points) {
      nlohmann::ordered_json pts = nlohmann::ordered_json::array();
      auto num = [](double v) {
        return std::isfinite(v) ? nlohmann::ordered_json(Round(v, 3)) : nlohmann::ordered_json();
      };
      for (const auto& row : n.buckets_mbps) {
        pts.push_back({static_cast<int64_t>(row[0]), num(row[1]), num(row[2])});
      }
      x["points"] = std::move(pts);
    }
    nics.push_back(std::move(x));
  }
  j["nics"] = std::move(nics);
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

}  // namespace gpudoctor
