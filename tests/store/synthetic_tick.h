// A realistic tick for store tests and the size bench: 8 GPUs with every GPU metric, host, 4 NICs,
// 3 mounts, 20 probes (~480 series). About a third of the series change every second
// (temperatures, power, utilisation, PCIe and NIC throughput, probe durations, CPU); the rest are
// constant or step rarely, as on a real node. Deterministic for a given time. Test-only code.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "metrics/metric_table.h"
#include "watch/watch_types.h"

namespace gpudoctor::testing {

inline double Noise(uint64_t x) {  // splitmix64 -> [0, 1)
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / 9007199254740992.0;
}

inline std::shared_ptr<TickResult> SyntheticTick(int64_t unix_s, int gpus = 8) {
  auto t = std::make_shared<TickResult>();
  t->unix_ms = unix_s * 1000;
  t->boot_id = "synthetic-boot";
  uint64_t salt = 0;
  auto add = [&](const MetricInfo* m, int gpu, MetricLabels labels, double v) {
    if (m != nullptr) t->points.push_back({m, gpu, std::move(labels), v});
  };
  auto noisy = [&](double base, double spread) {
    return base + spread * Noise(static_cast<uint64_t>(unix_s) * 7919 + ++salt);
  };
  for (const MetricInfo* m : AllMetrics()) {
    std::string name(m->name);
    bool gpu_metric = name.rfind("gpudoctor_gpu_", 0) == 0;
    bool is_noisy =
        name.find("temperature_celsius") != std::string::npos ||
        name.find("power_watts") != std::string::npos ||
        name.find("utilization") != std::string::npos ||
        name.find("per_second") != std::string::npos || name.find("busy") != std::string::npos ||
        name.find("iowait") != std::string::npos ||
        name.find("available_bytes") != std::string::npos ||
        name.find("used_bytes") != std::string::npos ||
        name.find("free_bytes") != std::string::npos ||
        name.find("duration_seconds") != std::string::npos || name.find("rtt") != std::string::npos;
    bool stepping =
        name.find("clock_hertz") != std::string::npos || name.find("fan") != std::string::npos;
    auto value = [&](int subject) -> double {
      if (is_noisy) {
        if (name.find("temperature") != std::string::npos) {
          return std::floor(noisy(60 + subject, 3));  // integer degrees
        }
        if (name.find("power_watts") != std::string::npos) {
          return std::round(noisy(450, 250)) / 1000 * 1000 + noisy(0, 1);  // mW resolution
        }
        if (name.find("ratio") != std::string::npos) return std::round(noisy(0, 100)) / 100;
        return std::round(noisy(1e9, 5e8));
      }
      if (stepping) return 1.41e9 + 1.5e8 * static_cast<double>((unix_s / 300) % 3);
      if (m->type == MetricType::kCounter) return static_cast<double>(subject * 3 + unix_s / 3600);
      return 1 + subject;
    };
    if (name == "gpudoctor_gpu_throttle_active") {
      for (int g = 0; g < gpus; ++g) {
        for (const char* r : {"hw_slowdown", "sw_thermal", "sw_power_cap", "hw_power_brake"}) {
          add(m, g, {{"reason", r}}, 0);
        }
      }
    } else if (name == "gpudoctor_gpu_xid_errors_total" || name == "gpudoctor_gpu_info") {
      for (int g = 0; g < gpus; ++g) add(m, g, {}, 0);
    } else if (gpu_metric) {
      for (int g = 0; g < gpus; ++g) add(m, g, {}, value(g));
    } else if (name.rfind("gpudoctor_nic_", 0) == 0) {
      for (int n = 0; n < 4; ++n) add(m, -1, {{"nic", "ib" + std::to_string(n)}}, value(n));
    } else if (name.find("filesystem") != std::string::npos) {
      for (const char* mount : {"/", "/scratch", "/home"}) add(m, -1, {{"mount", mount}}, value(1));
    } else if (name.rfind("gpudoctor_probe_", 0) == 0) {
      for (int p = 0; p < 20; ++p) add(m, -1, {{"probe", "p" + std::to_string(p)}}, value(p));
    } else if (name.rfind("gpudoctor_net_target_", 0) == 0) {
      for (int n = 0; n < 2; ++n) add(m, -1, {{"target", "10.0.0." + std::to_string(n)}}, value(n));
    } else if (name.find("pressure") != std::string::npos) {
      for (const char* r : {"cpu", "memory", "io"}) add(m, -1, {{"resource", r}}, value(1));
    } else if (name != "gpudoctor_finding_active") {
      add(m, -1, {}, value(0));
    }
  }
  for (int g = 0; g < gpus; ++g) {
    GpuFacts f;
    f.index = g;
    f.serial = "16501234567" + std::to_string(g);
    f.uuid = "GPU-0000000" + std::to_string(g);
    f.pci_bus_id = "0000:" + std::to_string(10 + g) + ":00.0";
    f.name = "NVIDIA H100 80GB HBM3";
    t->report.snapshot.gpu.gpus.push_back(f);
  }
  return t;
}

}  // namespace gpudoctor::testing
