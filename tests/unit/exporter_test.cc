#include "serve/exporter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "core/version.h"
#include "metrics/metric_table.h"
#include "test_util.h"
#include "watch_tick_util.h"

namespace gpudoctor {
namespace {

using testing::MakeTick;

TEST(ExporterTest, EscapesAndFormats) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  // Well-formed UTF-8 stays; every byte of anything else becomes U+FFFD (Prometheus refuses
  // the whole page for one label value that is not UTF-8): a lone 0xFF, a cut sequence, a
  // surrogate, an overlong form.
  EXPECT_EQ(EscapeLabelValue("/mnt/\xc3\xa9t\xc3\xa9 \xe2\x9c\x93"),
            "/mnt/\xc3\xa9t\xc3\xa9 \xe2\x9c\x93");
  EXPECT_EQ(EscapeLabelValue("a\xff"), "a\xef\xbf\xbd");
  EXPECT_EQ(EscapeLabelValue("\xe2\x9c"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(EscapeLabelValue("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(EscapeLabelValue("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(EscapeHelp("a\\b\nc\""), "a\\\\b\\nc\"");
  EXPECT_EQ(FormatSampleValue(3), "3");
  EXPECT_EQ(FormatSampleValue(0.25), "0.25");
  EXPECT_EQ(FormatSampleValue(1.98e9), "1980000000");
  EXPECT_EQ(FormatSampleValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
}

TEST(ExporterTest, EveryFamilyHasHelpAndTypeOnceAndBeforeSamples) {
  auto tick = MakeTick();
  std::string text = RenderMetrics(*tick, {.dcgm_compat = true, .hostname = ""});
  std::istringstream in(text);
  std::string line;
  std::set<std::string> help, type;
  while (std::getline(in, line)) {
    ASSERT_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(help.insert(name).second) << name;
    } else if (line.rfind("# TYPE ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(type.insert(name).second) << name;
    } else {
      std::string name = line.substr(0, line.find_first_of("{ "));
      EXPECT_TRUE(help.count(name) && type.count(name)) << line;
    }
  }
}

TEST(ExporterTest, GpuIdentityLabelsAndFindings) {
  auto tick = MakeTick();
  std::string text = RenderMetrics(*tick, {});
  EXPECT_NE(text.find("gpudoctor_gpu_temperature_celsius{gpu=\"1\",uuid=\"GPU-1\",pci_bus_id="
                      "\"0000:3b:00.1\",model=\"NVIDIA H100 80GB HBM3\",hostname=\"node1\"} 61\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpudoctor_gpu_power_watts{gpu=\"0\""), std::string::npos);
  EXPECT_NE(text.find("gpudoctor_gpu_sm_clock_hertz{gpu=\"0\""), std::string::npos);
  EXPECT_NE(text.find("gpudoctor_gpu_xid_errors_total{gpu=\"1\",uuid=\"GPU-1\",pci_bus_id="
                      "\"0000:3b:00.1\",model=\"NVIDIA H100 80GB HBM3\",hostname=\"node1\",xid="
                      "\"79\"} 2\n"),
            std::string::npos);
  // Open findings only; escaped subject.
  EXPECT_NE(text.find("gpudoctor_finding_active{id=\"gpu.ecc.dbe\",severity=\"crit\",layer="
                      "\"hardware\",action=\"none\",gpu=\"1\""),
            std::string::npos);
  EXPECT_NE(text.find("subject=\"/var \\\"log\\\"\"} 1"), std::string::npos);
  EXPECT_EQ(text.find("gpu.thermal"), std::string::npos);  // pending
  EXPECT_EQ(text.find("gpu.pcie"), std::string::npos);     // resolved
  EXPECT_NE(text.find("gpudoctor_probe_success{hostname=\"node1\",probe=\"disk\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("gpudoctor_probe_duration_seconds{hostname=\"node1\",probe=\"nvml\"} 0.0125"),
            std::string::npos);
  EXPECT_EQ(text.find("DCGM_"), std::string::npos);
}

// Issue 20 items 5-6: ack and silence reach Prometheus, the severity has a series that survives a
// warn/crit flip, and a stuck daemon can be told from a dead one.
TEST(ExporterTest, FindingStateBuildInfoAndTickTime) {
  auto tick = MakeTick(1764000300000);
  tick->findings[1].acked = true;                                   // host.disk.full
  tick->findings[0].silenced_until_ms = tick->unix_ms + 60 * 1000;  // gpu.ecc.dbe
  tick->report.snapshot.gpu.driver.driver_version = "570.148.08";
  ExporterOptions o;
  o.interval_s = 10;
  std::string text = RenderMetrics(*tick, o);
  const std::string dbe =
      "{id=\"gpu.ecc.dbe\",layer=\"hardware\",gpu=\"1\",uuid=\"GPU-1\",pci_bus_id=\"0000:3b:00.1\","
      "model=\"NVIDIA H100 80GB HBM3\",hostname=\"node1\",serial=\"SN1\"}";
  EXPECT_NE(text.find("gpudoctor_finding_severity" + dbe + " 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpudoctor_finding_silenced" + dbe + " 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpudoctor_finding_acknowledged" + dbe + " 0\n"), std::string::npos);
  const std::string disk =
      "{id=\"host.disk.full\",layer=\"hardware\",hostname=\"node1\",subject=\"/var \\\"log\\\"\"}";
  EXPECT_NE(text.find("gpudoctor_finding_severity" + disk + " 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpudoctor_finding_acknowledged" + disk + " 1\n"), std::string::npos);
  // Pending and resolved findings have no state series.
  EXPECT_EQ(text.find("gpudoctor_finding_severity{id=\"gpu.thermal\""), std::string::npos);
  EXPECT_NE(text.find("gpudoctor_build_info{version=\"" + std::string(GpudoctorVersion()) +
                      "\",revision=\"" + GpudoctorRevision() +
                      "\",driver_version=\"570.148.08\",hostname=\"node1\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpudoctor_last_tick_timestamp_seconds{hostname=\"node1\"} 1764000300\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpudoctor_tick_interval_seconds{hostname=\"node1\"} 10\n"),
            std::string::npos);
  // The silence has run out an hour later.
  tick->unix_ms += 3600 * 1000;
  EXPECT_NE(RenderMetrics(*tick, o).find("gpudoctor_finding_silenced" + dbe + " 0\n"),
            std::string::npos);
}

// Issue 20 item 9: every gpudoctor family lints clean with promtool on a host with NICs and
// InfiniBand ports too (speeds in bytes per second, not bits: Prometheus names base units).
TEST(ExporterTest, PromtoolLintsEveryOwnFamilyClean) {
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/promtool"))
      << "promtool missing: scripts/install-deps.sh installs Debian's prometheus";
  auto tick = MakeTick(1764000300000);
  for (const MetricInfo* m : AllMetrics()) {
    MetricPoint p;
    p.info = m;
    std::string labels(m->labels);
    for (size_t from = 0; !labels.empty() && from <= labels.size();) {
      size_t comma = labels.find(',', from);
      std::string key = labels.substr(from, comma == std::string::npos ? comma : comma - from);
      if (!key.empty()) p.labels.emplace_back(key, "x");
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    p.value = 1;
    tick->points.push_back(std::move(p));
  }
  ExporterOptions o;
  o.interval_s = 10;
  auto r = testing::RunProgram({"/usr/bin/promtool", "check", "metrics"}, std::chrono::seconds(30),
                               {}, RenderMetrics(*tick, o));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out + r.err, "") << "promtool complaints";
  EXPECT_EQ(FindMetric("gpudoctor_nic_speed_bits_per_second"), nullptr);
  ASSERT_NE(FindMetric("gpudoctor_nic_speed_bytes_per_second"), nullptr);
}

TEST(ExporterTest, FindingActiveFamilyPresentWithNoFindings) {
  auto tick = MakeTick();
  tick->findings.clear();
  std::string text = RenderMetrics(*tick, {});
  EXPECT_NE(text.find("# TYPE gpudoctor_finding_active gauge"), std::string::npos);
}

TEST(ExporterTest, DcgmCompatNamesUnitsAndLabels) {
  auto tick = MakeTick();
  tick->report.snapshot.gpu.driver.driver_version = "580.95.05";
  std::string text = RenderMetrics(*tick, {.dcgm_compat = true, .hostname = "override"});
  // dcgm-exporter's labels in its order; the bus id in DCGM's spelling.
  const std::string labels0 =
      "{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:3B:00.0\",device=\"nvidia0\","
      "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"override\","
      "DCGM_FI_DRIVER_VERSION=\"580.95.05\"}";
  EXPECT_NE(text.find("DCGM_FI_DEV_GPU_TEMP" + labels0 + " 60\n"), std::string::npos) << text;
  EXPECT_NE(text.find("DCGM_FI_DEV_POWER_USAGE" + labels0 + " 250\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_SM_CLOCK" + labels0 + " 1980\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_MEM_CLOCK" + labels0 + " 2619\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_GPU_UTIL" + labels0 + " 50\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_FB_USED" + labels0 + " 1024\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_FB_FREE" + labels0 + " 80896\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_XID_ERRORS" + labels0 + " 0\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_XID_ERRORS{gpu=\"1\""), std::string::npos);
  EXPECT_NE(text.find("pci_bus_id=\"00000000:3B:00.1\""), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DRIVER_VERSION=\"580.95.05\"} 79\n"), std::string::npos);
  EXPECT_NE(text.find("gpudoctor_gpu_temperature_celsius{gpu=\"0\",uuid=\"GPU-0\",pci_bus_id="
                      "\"0000:3b:00.0\",model=\"NVIDIA H100 80GB HBM3\",hostname=\"override\"}"),
            std::string::npos);
  // HELP in dcgm-exporter's units: percent, not "(0-1)".
  EXPECT_NE(text.find("# HELP DCGM_FI_DEV_GPU_UTIL Share of time a kernel ran on the GPU over "
                      "the driver's sample period (in %).\n"),
            std::string::npos);
  EXPECT_NE(text.find("# HELP DCGM_FI_DEV_FB_USED Device memory in use (in MiB).\n"),
            std::string::npos);
  EXPECT_NE(text.find("# HELP DCGM_FI_DEV_SM_CLOCK SM clock (in MHz).\n"), std::string::npos);
  for (size_t at = text.find("# HELP DCGM_"); at != std::string::npos;
       at = text.find("# HELP DCGM_", at + 1)) {
    std::string line = text.substr(at, text.find('\n', at) - at);
    EXPECT_EQ(line.find("0-1"), std::string::npos) << line;
  }
}

// dcgm-exporter's default counters file (tests/fixtures/dcgm_exporter/default-counters.csv, a
// copy of its etc/default-counters.csv): name -> type ("gauge", "counter", "label"), the last
// uncommented line of a name winning as in dcgm-exporter's own parser.
std::map<std::string, std::string> DcgmDefaultCounters() {
  std::ifstream in(testing::FixturePath("dcgm_exporter/default-counters.csv"));
  std::map<std::string, std::string> out;
  std::string line;
  auto trim = [](std::string v) {
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t\r") + 1);
    return v;
  };
  while (std::getline(in, line)) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    size_t c1 = line.find(',');
    size_t c2 = line.find(',', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    out[trim(line.substr(0, c1))] = trim(line.substr(c1 + 1, c2 - c1 - 1));
  }
  return out;
}

// Counters of the default set NVML cannot provide: DCGM's profiling counters (DCGM_FI_PROF_*,
// from the GPU's performance monitors through DCGM's own module; PCIe bytes excepted, which
// NVML measures) and the vGPU licence state (a vGPU guest's, not a bare-metal node's).
const std::set<std::string> kDcgmOnly = {
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS"};

// Issue 20 item 8: every counter of dcgm-exporter's default set that NVML provides is written,
// typed as its counters file types it (DCGM_FI_DRIVER_VERSION as a label), with the value in
// dcgm-exporter's unit; and both names of the clock event reasons field.
TEST(ExporterTest, DcgmCompatParityWithDefaultCounters) {
  auto tick = MakeTick();
  Snapshot& s = tick->report.snapshot;
  s.gpu.driver.driver_version = "580.95.05";
  GpuFacts& g = s.gpu.gpus[0];
  g.memory_reserved_bytes = uint64_t{512} << 20;
  g.energy_mj = 123456789;
  g.pcie_tx_bytes_per_s = 2048000;
  g.pcie_rx_bytes_per_s = 3072000;
  g.util_memory_pct = 7;
  g.encoder_util_pct = 3;
  g.decoder_util_pct = 12;
  g.retired_pages_sbe = 2;
  g.retired_pages_dbe = 1;
  g.retired_pages_pending = false;
  g.remapped_rows_correctable = 3;
  g.remapped_rows_uncorrectable = 1;
  g.remap_failed = false;
  g.memory_temp_c = 45;
  g.first.pcie_replays = 7;
  g.first.ecc_dbe_volatile = 0;
  g.first.clock_event_reasons = 0x4;
  g.first.nvlink_tx_kib = 1000000;
  g.first.nvlink_rx_kib = 1000000;
  g.second = g.first;
  // 4,000,000 KiB both ways in 2 s: DCGM's bandwidth is 2,000,000 KiB/s / 1000 = 2000.
  g.second.nvlink_tx_kib = 3000000;
  g.second.nvlink_rx_kib = 3000000;
  g.window_s = 2.0;
  std::vector<MetricPoint> xids;
  for (const MetricPoint& p : tick->points) {
    if (p.info == &kGpuXidErrorsTotal) xids.push_back(p);
  }
  tick->points = FlattenSnapshot(s);
  tick->points.insert(tick->points.end(), xids.begin(), xids.end());
  std::string text = RenderMetrics(*tick, {.dcgm_compat = true, .hostname = ""});
  auto type_of = [&](const std::string& name) {
    std::string head = "# TYPE " + name + " ";
    size_t at = text.find(head);
    if (at == std::string::npos) return std::string("absent");
    at += head.size();
    return text.substr(at, text.find('\n', at) - at);
  };
  auto value_of = [&](const std::string& name) {
    size_t at = text.find("\n" + name + "{gpu=\"0\"");
    if (at == std::string::npos) return std::string("absent");
    size_t end = text.find('\n', at + 1);
    size_t sp = text.rfind(' ', end);
    return text.substr(sp + 1, end - sp - 1);
  };
  // Every counter of the file, NVML's and DCGM's alike, is accounted for.
  std::map<std::string, std::string> csv = DcgmDefaultCounters();
  ASSERT_GE(csv.size(), 20u) << "default-counters.csv not read";
  for (const auto& [name, type] : csv) {
    if (kDcgmOnly.count(name)) {
      EXPECT_EQ(type_of(name), "absent") << name << " is DCGM's: never made up";
      continue;
    }
    if (type == "label") {
      EXPECT_NE(text.find("," + name + "=\"580.95.05\"}"), std::string::npos) << name;
      continue;
    }
    EXPECT_EQ(type_of(name), type) << name << " typed as dcgm-exporter's default-counters.csv";
    EXPECT_NE(value_of(name), "absent") << name;
  }
  // Values in dcgm-exporter's units; the opt-in counters (commented out in its file) typed as
  // the commented lines type them.
  const std::vector<std::tuple<std::string, std::string, std::string>> want = {
      {"DCGM_FI_DEV_SM_CLOCK", "gauge", "1980"},
      {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "2619"},
      {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "45"},
      {"DCGM_FI_DEV_GPU_TEMP", "gauge", "60"},
      {"DCGM_FI_DEV_POWER_USAGE", "gauge", "250"},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "123456789"},
      {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "2048000"},
      {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "3072000"},
      {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "7"},
      {"DCGM_FI_DEV_GPU_UTIL", "gauge", "50"},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "7"},
      {"DCGM_FI_DEV_ENC_UTIL", "gauge", "3"},
      {"DCGM_FI_DEV_DEC_UTIL", "gauge", "12"},
      {"DCGM_FI_DEV_XID_ERRORS", "gauge", "0"},
      {"DCGM_FI_DEV_FB_FREE", "gauge", "80896"},
      {"DCGM_FI_DEV_FB_USED", "gauge", "1024"},
      {"DCGM_FI_DEV_FB_RESERVED", "gauge", "512"},
      {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "2000"},
      {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "1"},
      {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "3"},
      {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "0"},
      {"DCGM_FI_DEV_RETIRED_SBE", "counter", "2"},
      {"DCGM_FI_DEV_RETIRED_DBE", "counter", "1"},
      {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "0"},
      {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "4"},
      {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge", "4"},
  };
  for (const auto& [name, type, value] : want) {
    EXPECT_EQ(type_of(name), type) << name;
    EXPECT_EQ(value_of(name), value) << name;
  }
  EXPECT_NE(text.find("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Energy the GPU consumed since "
                      "the driver loaded (NVML total energy consumption) (in mJ).\n"),
            std::string::npos);
  EXPECT_NE(text.find("# HELP DCGM_FI_DEV_ENC_UTIL Share of time the video encoder was busy over "
                      "the driver's sample period (in %).\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# HELP DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL NVLink data sent and received, "
                      "all links, per second between the last two counter reads (NVML throughput "
                      "counters) (in KiB/s / 1000).\n"),
            std::string::npos);
  // gpudoctor's own: energy in joules, the NVLink data counters in bytes, their rate, the video
  // engines as ratios.
  EXPECT_NE(text.find("gpudoctor_gpu_energy_joules_total{gpu=\"0\""), std::string::npos);
  EXPECT_EQ(value_of("gpudoctor_gpu_nvlink_transmit_bytes_total"), "3072000000");
  EXPECT_EQ(value_of("gpudoctor_gpu_nvlink_receive_bytes_total"), "3072000000");
  EXPECT_EQ(type_of("gpudoctor_gpu_nvlink_transmit_bytes_total"), "counter");
  EXPECT_EQ(value_of("gpudoctor_gpu_nvlink_data_bytes_per_second"), "2048000000");
  EXPECT_EQ(value_of("gpudoctor_gpu_encoder_utilization_ratio"), "0.03");
  EXPECT_EQ(value_of("gpudoctor_gpu_decoder_utilization_ratio"), "0.12");
}

// Without the NVLink data counters (no nvmlDeviceGetFieldValues, no NVLink) or without a second
// read, DCGM's NVLink bandwidth and gpudoctor's NVLink series are absent, never 0; the same for
// the video engines where NVML has no answer.
TEST(ExporterTest, DcgmCompatNvLinkAndCodecsAbsentWhenUnknown) {
  auto tick = MakeTick();
  Snapshot& s = tick->report.snapshot;
  GpuFacts& g = s.gpu.gpus[0];
  g.first.nvlink_tx_kib = 1000;  // one read only: no rate
  g.first.nvlink_rx_kib = 1000;
  g.window_s.reset();
  tick->points = FlattenSnapshot(s);
  std::string text = RenderMetrics(*tick, {.dcgm_compat = true, .hostname = ""});
  EXPECT_EQ(text.find("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpudoctor_gpu_nvlink_data_bytes_per_second"), std::string::npos);
  EXPECT_EQ(text.find("DCGM_FI_DEV_ENC_UTIL"), std::string::npos);
  EXPECT_EQ(text.find("DCGM_FI_DEV_DEC_UTIL"), std::string::npos);
  EXPECT_NE(text.find("gpudoctor_gpu_nvlink_transmit_bytes_total{gpu=\"0\""), std::string::npos);
  // A counter that went backwards (driver reload between the reads) gives no rate either.
  g.second = g.first;
  g.second.nvlink_tx_kib = 10;
  g.window_s = 1.0;
  tick->points = FlattenSnapshot(s);
  text = RenderMetrics(*tick, {.dcgm_compat = true, .hostname = ""});
  EXPECT_EQ(text.find("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"), std::string::npos) << text;
}

TEST(ExporterTest, DcgmBusIdSpelling) {
  EXPECT_EQ(DcgmBusId("0000:2a:00.0"), "00000000:2A:00.0");
  EXPECT_EQ(DcgmBusId("00000000:2A:00.0"), "00000000:2A:00.0");
  EXPECT_EQ(DcgmBusId("0001:c1:00.0"), "00000001:C1:00.0");
  EXPECT_EQ(DcgmBusId("3b:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(DcgmBusId(""), "");
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

TEST(MetricsDocTest, DocsMetricsMdIsInSync) {
  std::string path = std::string(GPUDOCTOR_SOURCE_DIR) + "/docs/metrics.md";
  std::string want = MetricsMarkdown();
  if (std::getenv("GPUDOCTOR_UPDATE_GOLDEN")) {
    std::ofstream(path) << want;
  }
  std::ifstream in(path);
  std::string have((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(have, want) << "docs/metrics.md is stale: GPUDOCTOR_UPDATE_GOLDEN=1 unit_tests "
                           "--gtest_filter=MetricsDocTest.*";
}

}  // namespace
}  // namespace gpudoctor
