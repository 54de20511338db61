// The metric descriptor tables: one name per fact, Prometheus naming rules, base units, and
// FlattenSnapshot's points for a known snapshot.
#include "metrics/metric_table.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

namespace gpudoctor {
namespace {

TEST(MetricTableTest, NamesAreUniqueAndFollowTheConvention) {
  std::regex name_re("^gpudoctor_[a-z0-9_]+$");
  std::set<std::string_view> seen;
  for (const MetricInfo* m : AllMetrics()) {
    EXPECT_TRUE(seen.insert(m->name).second) << "duplicate " << m->name;
    EXPECT_TRUE(std::regex_match(std::string(m->name), name_re)) << m->name;
    EXPECT_FALSE(m->help.empty()) << m->name;
    bool total = m->name.size() > 6 && m->name.substr(m->name.size() - 6) == "_total";
    EXPECT_EQ(total, m->type == MetricType::kCounter) << m->name << ": counters end in _total";
    EXPECT_EQ(m->name.find("_pct"), std::string_view::npos) << m->name << ": use ratios";
    EXPECT_EQ(m->name.find("_mhz"), std::string_view::npos) << m->name << ": use hertz";
  }
  EXPECT_GT(seen.size(), 60u);
  EXPECT_NE(FindMetric("gpudoctor_gpu_temperature_celsius"), nullptr);
  EXPECT_EQ(FindMetric("gpudoctor_no_such_metric"), nullptr);
}

double ValueOf(const std::vector<MetricPoint>& points, std::string_view name, int gpu = -1,
               const MetricLabels& labels = {}) {
  for (const auto& p : points) {
    if (p.info->name == name && p.gpu == gpu && p.labels == labels) return p.value;
  }
  ADD_FAILURE() << "no point " << name << " gpu " << gpu;
  return -1;
}

TEST(MetricTableTest, FlattenConvertsToBaseUnitsAndSkipsUnknownFacts) {
  Snapshot snap;
  GpuFacts g;
  g.index = 3;
  g.pci_bus_id = "0000:3b:00.0";
  g.power_mw = 250500;
  g.util_gpu_pct = 87;
  g.sm_clock_mhz = 1980;
  g.memory_used_bytes = 70ull << 30;
  g.memory_total_bytes = 80ull << 30;
  g.first.ecc_sbe_volatile = 10;
  g.second.ecc_sbe_volatile = 12;
  g.second.clock_event_reasons = 0x40;  // HW thermal slowdown
  snap.gpu.gpus.push_back(g);
  KernelEvent x;
  x.kind = KernelEventKind::kXid;
  x.xid = 79;
  x.pci = PciAddress{0, 0x3b, 0, 0};
  x.count = 2;
  snap.kernel.events.push_back(x);
  CpuFacts cpu;
  cpu.busy_pct = 42.5;
  snap.host.cpu = cpu;
  ProbeRecord rec;
  rec.name = "nvml";
  rec.state = ProbeState::kFailed;
  rec.ms = 1500;
  snap.probes.push_back(rec);

  auto points = FlattenSnapshot(snap);
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_gpu_power_watts", 3), 250.5);
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_gpu_utilization_ratio", 3), 0.87);
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_gpu_sm_clock_hertz", 3), 1.98e9);
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_gpu_memory_free_bytes", 3), 10.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_gpu_ecc_sbe_volatile_total", 3), 12);  // later read
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_gpu_throttle_active", 3, {{"reason", "hw_thermal"}}),
                   1);
  EXPECT_DOUBLE_EQ(
      ValueOf(points, "gpudoctor_gpu_throttle_active", 3, {{"reason", "sw_power_cap"}}), 0);
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_gpu_xid_errors_total", 3, {{"xid", "79"}}), 2);
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_host_cpu_busy_ratio"), 0.425);
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_probe_success", -1, {{"probe", "nvml"}}), 0);
  EXPECT_DOUBLE_EQ(ValueOf(points, "gpudoctor_probe_duration_seconds", -1, {{"probe", "nvml"}}),
                   1.5);
  for (const auto& p : points) {
    EXPECT_NE(p.info->name, "gpudoctor_gpu_temperature_celsius") << "unknown fact exported";
  }
}

TEST(MetricTableTest, JsonAndMetricsComeFromTheSameDescriptor) {
  GpuFacts g;
  g.power_mw = 300000;
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  PutFacts(j, GpuFieldTable(), g);
  EXPECT_EQ(j["power_mw"], 300000);  // JSON keeps the fact's own unit and type
  EXPECT_EQ(j.size(), 1u);           // unknown facts are left out
}

}  // namespace
}  // namespace gpudoctor
