#include "fleet_gen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/time_spec.h"
#include "fleet/fleet_model.h"

namespace gpudoctor::fleet::testing {
namespace {

constexpr int kGpus = 8;
constexpr int kBuses[kGpus] = {0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB};
constexpr const char* kModel = "NVIDIA H100 80GB HBM3";

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {  // SplitMix64
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * (Next() >> 11) * 0x1.0p-53; }
  int Int(int lo, int hi) { return lo + static_cast<int>(Next() % uint64_t(hi - lo + 1)); }

 private:
  uint64_t s_;
};

std::string Bus(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "0000:%02X:00.0", kBuses[i]);
  return b;
}

struct GpuState {
  std::string serial;
  double util = 97, clock = 1980, power_w = 560, temp = 62, limit_w = 700;
  uint32_t reasons = 0;
  // Raw JSON overrides for out-of-range values ("" = the number above).
  std::string clock_raw, power_raw, temp_raw;
};

struct FindingSpec {
  int gpu = -1;  // -1: not about a GPU
  std::string id, severity = "crit", layer = "hardware";
  int xid = 0;
  int copies = 1;
};

enum class Role {
  kNormal,
  kHardware,
  kHardwareJob,
  kJobVictim,
  kCapped,
  kLowLimit,
  kIdleNode,
  kIdleGpu,
  kWorkload,
  kLemon,
  kNonLemon,
  kBadCardX,
  kBadCardY,
  kBadSlotZ,
  kBadSlotV,
  kPlaceholder,
  kCloned,
  kBad1971,
  kBadFuture,
  kBadOld,
  kBadRange,
  kBadRepeat,
};

struct Node {
  std::string name;
  Role role = Role::kNormal;
  int variant = 0;   // which flavour of the role
  int gpu = 0;       // the GPU the role is about
  int partner = -1;  // swaps: the other node
  int64_t jitter_s = 0;
  std::string job;  // the report's "job" label
  std::string serials[kGpus];
  // Noise on ordinary nodes: (report, gpu, xid).
  std::vector<std::tuple<int, int, int>> noise;
};

std::string Num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string ReportJson(const std::string& host, int64_t t, const std::vector<GpuState>& gpus,
                       const std::vector<FindingSpec>& findings, const std::string& job = "") {
  std::string j =
      "{\"verdict\":\"ok\",\"host\":\"" + host + "\",\"time\":\"" + FormatUtc(t) + "\",";
  if (!job.empty()) j += "\"job\":\"" + job + "\",";
  j += "\"findings\":[";
  bool first = true;
  for (const auto& f : findings) {
    for (int c = 0; c < f.copies; ++c) {
      if (!first) j += ",";
      first = false;
      j += "{\"id\":\"" + f.id + "\",\"layer\":\"" + f.layer + "\",\"severity\":\"" + f.severity +
           "\",\"summary\":\"" + f.id + (f.xid ? " " + std::to_string(f.xid) : "") + "\"";
      if (f.xid) j += ",\"evidence\":{\"xid\":" + std::to_string(f.xid) + "}";
      if (f.gpu >= 0) {
        j += ",\"gpu\":{\"index\":" + std::to_string(f.gpu) + ",\"pci_bus_id\":\"" + Bus(f.gpu) +
             "\",\"uuid\":\"GPU-" + host + "-" + std::to_string(f.gpu) + "\"}";
      }
      j += "}";
    }
  }
  j += "],\"probes\":[],\"gpus\":[";
  for (int i = 0; i < static_cast<int>(gpus.size()); ++i) {
    const GpuState& g = gpus[i];
    if (i) j += ",";
    j += "{\"index\":" + std::to_string(i) + ",\"uuid\":\"GPU-" + host + "-" + std::to_string(i) +
         "\",\"serial\":\"" + g.serial + "\",\"pci_bus_id\":\"" + Bus(i) + "\",\"name\":\"" +
         kModel + "\",\"util_gpu_pct\":" + Num(g.util) +
         ",\"sm_clock_mhz\":" + (g.clock_raw.empty() ? Num(g.clock) : g.clock_raw) +
         ",\"max_sm_clock_mhz\":1980,\"power_mw\":" +
         (g.power_raw.empty() ? Num(g.power_w * 1000) : g.power_raw) +
         ",\"power_limit_mw\":" + Num(g.limit_w * 1000) +
         ",\"temp_c\":" + (g.temp_raw.empty() ? Num(g.temp) : g.temp_raw) +
         ",\"counters_first\":{\"clock_event_reasons\":" + std::to_string(g.reasons) +
         ",\"ecc_sbe_volatile\":0,\"ecc_dbe_volatile\":0,\"pcie_replays\":0}}";
  }
  j += "]}";
  return j;
}

}  // namespace

GeneratedFleet GenerateFleet(const FleetGenOptions& opt, int64_t window_s) {
  GeneratedFleet out;
  FleetTruth& truth = out.truth;
  Rng rng(opt.seed);
  const int n = std::max(opt.nodes, 120);
  const int r = std::max(opt.reports, 12);
  std::vector<Node> nodes(n);
  for (int i = 0; i < n; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "node%05d", i);
    nodes[i].name = name;
    nodes[i].jitter_s = rng.Int(1, 120);
    for (int g = 0; g < kGpus; ++g) {
      char sn[32];
      std::snprintf(sn, sizeof sn, "165%07d", i * kGpus + g);
      nodes[i].serials[g] = sn;
    }
  }
  // Roles on disjoint, shuffled nodes.
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  for (int i = n - 1; i > 0; --i) std::swap(order[i], order[rng.Int(0, i)]);
  size_t next = 0;
  auto count = [&](double frac, int min) {
    return std::max(min, static_cast<int>(std::lround(frac * n)));
  };
  auto take = [&](Role role, int k) {
    std::vector<int> got;
    for (int i = 0; i < k && next < order.size(); ++i) {
      Node& nd = nodes[order[next++]];
      nd.role = role;
      nd.variant = i;
      nd.gpu = rng.Int(0, kGpus - 1);
      got.push_back(order[next - 1]);
    }
    return got;
  };
  take(Role::kHardware, count(0.01, 3));
  {
    // Multi-node jobs: a hardware straggler's node and another node of its job, whose GPUs all
    // wait on it at collectives (victims across nodes).
    std::vector<int> hw = take(Role::kHardwareJob, count(0.01, 3));
    std::vector<int> partners = take(Role::kJobVictim, static_cast<int>(hw.size()));
    for (size_t k = 0; k < hw.size() && k < partners.size(); ++k) {
      nodes[partners[k]].partner = hw[k];
      nodes[hw[k]].job = nodes[partners[k]].job = "slurm:" + std::to_string(700000 + k);
    }
  }
  take(Role::kCapped, count(0.04, 6));
  take(Role::kLowLimit, count(0.01, 2));
  take(Role::kIdleNode, count(0.03, 5));
  take(Role::kIdleGpu, count(0.02, 4));
  take(Role::kWorkload, count(0.02, 4));
  take(Role::kLemon, count(0.02, 4));
  take(Role::kNonLemon, count(0.03, 5));
  for (Role a : {Role::kBadCardX, Role::kBadSlotZ}) {
    Role b = a == Role::kBadCardX ? Role::kBadCardY : Role::kBadSlotV;
    int pairs = count(0.015, 3);
    std::vector<int> xs = take(a, pairs), ys = take(b, pairs);
    for (size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
      nodes[xs[i]].partner = ys[i];
      nodes[ys[i]].partner = xs[i];
    }
  }
  take(Role::kPlaceholder, count(0.02, 3));
  {
    int groups = std::max(1, n / 200);
    for (int gi = 0; gi < groups; ++gi) {
      char sn[32];
      std::snprintf(sn, sizeof sn, "13200%05d", gi);
      for (int node : take(Role::kCloned, 3)) {
        nodes[node].gpu = 2;
        nodes[node].serials[2] = sn;
      }
      truth.cloned_serials.insert(sn);
    }
  }
  take(Role::kBad1971, count(0.01, 2));
  take(Role::kBadFuture, count(0.005, 1));
  take(Role::kBadOld, count(0.005, 1));
  take(Role::kBadRange, count(0.01, 2));
  take(Role::kBadRepeat, count(0.01, 2));
  // Job labels elsewhere: ordinary nodes in 4-node jobs (a workload straggler among them must
  // not become a victim of anything), every other role in a job of its own.
  {
    int k = 0;
    for (auto& nd : nodes) {
      if (!nd.job.empty()) continue;
      nd.job = nd.role == Role::kNormal || nd.role == Role::kWorkload
                   ? "slurm:" + std::to_string(100000 + k++ / 4)
                   : "slurm:solo-" + nd.name;
    }
  }
  // Noise on ordinary nodes: application Xids and one-off hardware Xid 79.
  for (auto& nd : nodes) {
    if (nd.role != Role::kNormal) continue;
    if (rng.Uniform(0, 1) < 0.05) {
      static const int kAppXids[] = {13, 31, 43, 45};
      nd.noise.push_back({rng.Int(0, r - 1), rng.Int(0, kGpus - 1), kAppXids[rng.Int(0, 3)]});
    }
    if (rng.Uniform(0, 1) < 0.02) nd.noise.push_back({rng.Int(0, r - 1), rng.Int(0, 7), 79});
  }
  // The reports spell bus ids as NVML does ("0000:2A:00.0"); the truth names slots as the
  // readers store them (CanonicalBusId).
  auto slot = [&](int node, int gpu) { return nodes[node].name + ":" + CanonicalBusId(Bus(gpu)); };
  // Truth.
  const int swap_at = r / 2;
  for (int i = 0; i < n; ++i) {
    Node& nd = nodes[i];
    switch (nd.role) {
      case Role::kHardware:
        truth.hardware.insert(slot(i, nd.gpu));
        break;
      case Role::kHardwareJob:
        truth.hardware.insert(slot(i, nd.gpu));
        for (int g = 0; g < kGpus; ++g) {
          if (g != nd.gpu) truth.victims[slot(i, g)] = slot(i, nd.gpu);
        }
        break;
      case Role::kJobVictim:
        for (int g = 0; g < kGpus; ++g) {
          truth.victims[slot(i, g)] = slot(nd.partner, nodes[nd.partner].gpu);
        }
        break;
      case Role::kCapped:
      case Role::kLowLimit:
        for (int g = 0; g < kGpus; ++g) truth.capped.insert(slot(i, g));
        break;
      case Role::kIdleNode:
        truth.idle_nodes.insert(nd.name);
        for (int g = 0; g < kGpus; ++g) truth.idle.insert(slot(i, g));
        break;
      case Role::kIdleGpu:
        truth.idle.insert(slot(i, nd.gpu));
        break;
      case Role::kWorkload:
        truth.workload.insert(slot(i, nd.gpu));
        break;
      case Role::kLemon:
        truth.lemon_nodes.insert(nd.name);
        truth.lemon_cards.insert(nd.serials[nd.gpu]);
        break;
      case Role::kBadCardX: {
        const Node& y = nodes[nd.partner];
        truth.card_verdicts[nd.serials[nd.gpu]] = "card";
        truth.lemon_cards.insert(nd.serials[nd.gpu]);
        truth.slot_verdicts[slot(i, nd.gpu)] = "card";
        truth.slot_verdicts[slot(nd.partner, y.gpu)] = "card";
        break;
      }
      case Role::kBadSlotZ: {
        const Node& v = nodes[nd.partner];
        truth.slot_verdicts[slot(i, nd.gpu)] = "slot";
        truth.card_verdicts[nd.serials[nd.gpu]] = "slot";
        truth.card_verdicts[v.serials[v.gpu]] = "slot";
        truth.lemon_nodes.insert(nd.name);  // four incidents in one slot: the node keeps breaking
        break;
      }
      case Role::kBad1971:
        truth.bad_sources.insert(nd.name + "-1971");
        break;
      case Role::kBadFuture:
        truth.bad_sources.insert(nd.name + "-future");
        break;
      case Role::kBadOld:
        truth.bad_sources.insert(nd.name + "-2023");
        break;
      case Role::kBadRange:
        truth.bad_sources.insert(nd.name + "-w4");
        break;
      case Role::kBadRepeat:
        truth.bad_sources.insert(nd.name + "-w6");
        break;
      default:
        break;
    }
  }
  for (const auto& nd : nodes) {
    if (nd.role == Role::kPlaceholder) continue;
    for (const auto& s : nd.serials) truth.serials.insert(s);
  }
  truth.gpu_days = double(n) * kGpus * double((r - 1) * opt.step_s + window_s) / 86400.0;
  out.now_s = opt.t0_s + r * opt.step_s;

  // Reports.
  for (int w = 0; w < r; ++w) {
    for (int i = 0; i < n; ++i) {
      Node& nd = nodes[i];
      const int64_t t = opt.t0_s + w * opt.step_s + nd.jitter_s;
      std::vector<GpuState> gpus(kGpus);
      for (int g = 0; g < kGpus; ++g) {
        GpuState& s = gpus[g];
        s.serial = nd.serials[g];
        s.util = rng.Uniform(94, 99.5);
        s.clock = 1980 - rng.Int(0, 15);
        s.power_w = rng.Uniform(540, 580);
        s.temp = rng.Uniform(58, 66);
        s.reasons = rng.Uniform(0, 1) < 0.3 ? 0x4 : 0;
      }
      std::vector<FindingSpec> findings;
      auto hw = [&](int gpu, const char* id, int xid = 0, const char* sev = "crit") {
        findings.push_back({gpu, id, sev, "hardware", xid, 1});
      };
      const bool after_swap = w >= swap_at;
      switch (nd.role) {
        case Role::kHardware:
        case Role::kHardwareJob: {
          if (w == 0) break;
          GpuState& s = gpus[nd.gpu];
          switch (nd.variant % 3) {
            case 0:  // HW slowdown
              s.clock = rng.Uniform(1300, 1400);
              s.power_w = rng.Uniform(380, 420);
              s.reasons = 0x8;
              break;
            case 1:  // HW thermal: hot and slow
              s.clock = rng.Uniform(1450, 1550);
              s.temp = rng.Uniform(86, 90);
              s.reasons = 0x40;
              break;
            default:  // a clock deficit at the same power, SW power cap set like its peers'
              s.clock = rng.Uniform(1580, 1640);
              s.reasons = 0x4;
              break;
          }
          if (nd.role == Role::kHardwareJob) {
            for (int g = 0; g < kGpus; ++g) {
              if (g == nd.gpu) continue;
              gpus[g].util = rng.Uniform(62, 74);
              gpus[g].power_w = rng.Uniform(400, 440);
            }
          }
          break;
        }
        case Role::kJobVictim:
          if (w == 0) break;
          for (auto& s : gpus) {  // waiting at collectives: busy less, drawing less
            s.util = rng.Uniform(62, 74);
            s.power_w = rng.Uniform(400, 440);
          }
          break;
        case Role::kCapped:
          if (w < 2) break;
          for (auto& s : gpus) {
            s.power_w = rng.Uniform(695, 700);
            s.clock = rng.Uniform(1620, 1700);
            s.temp = rng.Uniform(70, 75);
            s.reasons = 0x4;
          }
          break;
        case Role::kLowLimit:
          for (auto& s : gpus) {
            s.limit_w = 400;
            s.power_w = rng.Uniform(395, 400);
            s.clock = rng.Uniform(1480, 1520);
            s.reasons = 0x4;
          }
          break;
        case Role::kIdleNode:
          for (auto& s : gpus) {
            s.util = 0;
            s.clock = 210;
            s.power_w = rng.Uniform(60, 70);
            s.temp = rng.Uniform(30, 36);
            s.reasons = 0x1;
          }
          break;
        case Role::kIdleGpu:
          gpus[nd.gpu].util = 0;
          gpus[nd.gpu].clock = 210;
          gpus[nd.gpu].power_w = 65;
          gpus[nd.gpu].reasons = 0x1;
          break;
        case Role::kWorkload:
          gpus[nd.gpu].util = rng.Uniform(25, 35);
          gpus[nd.gpu].power_w = rng.Uniform(280, 320);
          break;
        case Role::kLemon:
          // Three incidents two hours apart; the second raises two findings (Xid 48 and the ECC
          // finding), the third flaps (present, absent, present).
          if (w == 1) hw(nd.gpu, "gpu.xid", 79);
          if (w == 5) {
            hw(nd.gpu, "gpu.xid", 48);
            hw(nd.gpu, "gpu.ecc.dbe");
          }
          if (w == 9 || w == 11) hw(nd.gpu, "gpu.nvlink.down");
          break;
        case Role::kNonLemon:
          if (w == 3 || w == 4) hw(nd.gpu, "gpu.thermal", 0, "warn");
          if (w == 7) findings.push_back({-1, "host.load.high", "warn", "resources", 0, 1});
          if (w == 1) hw(nd.gpu, "gpu.xid", 13, "warn");
          if (w == 5) hw((nd.gpu + 1) % kGpus, "gpu.xid", 31, "warn");
          if (w == 9) {
            hw(nd.gpu, "gpu.xid", 48);
            hw(nd.gpu, "gpu.ecc.dbe");
          }
          break;
        case Role::kBadCardX:
        case Role::kBadSlotZ: {
          // The suspect sits in slot gpu of this node until swap_at, then swaps with the
          // partner's slot. Bad card: faults follow the serial; bad slot: faults stay here.
          Node& p = nodes[nd.partner];
          std::string mine = nd.serials[nd.gpu], theirs = p.serials[p.gpu];
          if (after_swap) gpus[nd.gpu].serial = theirs;
          // Faults three steps apart: separate incidents.
          bool fault_w = w == 1 || w == 4 || w == swap_at + 1 || w == swap_at + 4;
          if (fault_w && (nd.role == Role::kBadSlotZ || !after_swap)) hw(nd.gpu, "gpu.xid", 79);
          // The healthy partner card, wherever it is, gets application Xids in both slots.
          if (nd.role == Role::kBadCardX && w == swap_at + 3) hw(nd.gpu, "gpu.xid", 13, "warn");
          break;
        }
        case Role::kBadCardY:
        case Role::kBadSlotV: {
          Node& p = nodes[nd.partner];
          std::string suspect = p.serials[p.gpu];
          if (after_swap) gpus[nd.gpu].serial = suspect;
          bool fault_w = w == swap_at + 1 || w == swap_at + 4;
          if (fault_w && nd.role == Role::kBadCardY) hw(nd.gpu, "gpu.xid", 79);
          if (nd.role == Role::kBadCardY && w == 2) hw(nd.gpu, "gpu.xid", 13, "warn");
          break;
        }
        case Role::kPlaceholder: {
          static const char* kPlaceholders[] = {"0", "N/A", ""};
          for (auto& s : gpus) s.serial = kPlaceholders[nd.variant % 3];
          if (w == 2) hw(0, "gpu.xid", 79);
          if (w == 8) hw(1, "gpu.xid", 79);
          break;
        }
        case Role::kCloned:
          if (w == 2 + 3 * nd.variant) hw(2, "gpu.xid", 79);
          break;
        case Role::kBadRange:
          if (w == 4) {
            gpus[3].clock_raw = "1e300";
            gpus[3].power_raw = "-1e9";
            gpus[3].temp_raw = "1e9";
          }
          break;
        case Role::kBadRepeat:
          if (w == 6) findings.push_back({1, "gpu.xid", "crit", "hardware", 79, 3});
          break;
        default:
          break;
      }
      for (const auto& [nw, gpu, xid] : nd.noise) {
        if (nw == w) hw(gpu, "gpu.xid", xid, xid == 79 ? "crit" : "warn");
      }
      // Truth: each report with a crit hardware fault starts one interruption, except the first
      // report (start unknown) and the lemon's flap back at w 11 (the same incident as w 9).
      if (w > 0 && !(nd.role == Role::kLemon && w == 11)) {
        std::string category;
        for (const auto& f : findings) {
          if (f.severity != "crit" || f.layer != "hardware") continue;
          if (f.id == "gpu.ecc.dbe") category = "gpu_memory";
          if (f.id == "gpu.nvlink.down") category = "nvlink_pcie";
          if (f.id == "gpu.xid" && category.empty()) category = "gpu";
        }
        if (!category.empty())
          out.truth.interruptions[nd.name + "@" + std::to_string(w)] = category;
      }
      out.reports.push_back(
          {nd.name + "-w" + std::to_string(w), ReportJson(nd.name, t, gpus, findings, nd.job)});
      if (w == r - 1) {
        // Bad clocks: the report of another instant, written by a clock that was wrong.
        auto extra = [&](const char* tag, int64_t when) {
          out.reports.push_back({nd.name + "-" + tag, ReportJson(nd.name, when, gpus, {}, nd.job)});
        };
        if (nd.role == Role::kBad1971) extra("1971", 31536000 + 86400 * 40);
        if (nd.role == Role::kBadFuture) extra("future", out.now_s + 2 * 86400);
        if (nd.role == Role::kBadOld) extra("2023", 1690000000);
      }
    }
  }
  return out;
}

}  // namespace gpudoctor::fleet::testing
