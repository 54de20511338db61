// Symptom table (data). Order matters: the first match wins, so specific symptoms come first.
#include "rules/symptoms.h"

#include <cctype>

namespace gpudoctor {

const std::vector<Symptom>& Symptoms() {
  static const std::vector<Symptom> symptoms = {
      {"nvidia-smi-hangs",
       "nvidia-smi is slow or hangs",
       {"nvidia-smi", "nvidia smi", "smi"},
       "A hung driver (GSP timeout, Xid 119/120, a lost GPU) leaves nvidia-smi in D state; without "
       "persistence mode every call re-initialises the GPUs and takes seconds.",
       {"driver.nvml_hang", "proc.dstate", "kernel.hung_task", "driver.gsp_timeout", "gpu.xid",
        "gpu.lost", "driver.persistence_off"},
       {"gpudoctor check --probes nvml,processes,kmsg", "dmesg -T | grep -i -e xid -e nvrm",
        "ps -eo state,pid,wchan:32,comm | grep ^D"}},
      {"gpu-lost",
       "A GPU is missing or fell off the bus",
       {"lost", "missing", "fallen", "fell off", "card gone", "only 7", "fewer gpus"},
       "The card stopped answering on PCIe (Xid 79, AER errors: power, riser, seating, heat) or "
       "the "
       "driver could not initialise it.",
       {"gpu.lost", "gpu.missing", "gpu.xid", "pcie.aer", "driver.init_failed", "gpu.nvml_error"},
       {"gpudoctor check --probes nvml,pci_gpu,kmsg",
        "lspci -d 10de:", "dmesg -T | grep -i -e 'fallen off' -e AER -e xid"}},
      {"vram-full",
       "GPU memory (VRAM) is full / CUDA out of memory",
       {"vram", "out of memory", "cuda oom", "gpu memory", "memory full"},
       "Caching allocators and preallocating frameworks hold memory on purpose; leftover processes "
       "and long contexts (KV cache) fill the rest.",
       {"gpu.memory.full", "gpu.util.low", "host.oom"},
       {"gpudoctor check --probes nvml",
        "nvidia-smi --query-compute-apps=pid,used_memory --format=csv"}},
      {"training-slow",
       "Training got slow (2 hours became 2 days)",
       {"training", "train", "epoch", "throughput", "slow job"},
       "Check in the expert's order: network (storage, peers), hardware (throttled, degraded "
       "PCIe/NVLink, Xids), software (stuck tasks), resources (CPU, I/O, memory starving the "
       "loaders).",
       {"net.localize", "net.loss", "gpu.thermal", "gpu.power.brake", "gpu.hw_slowdown",
        "gpu.clocks.low", "gpu.pcie.degraded", "gpu.nvlink.down", "gpu.util.low",
        "gpu.util.imbalance", "proc.dstate", "host.cpu.saturated", "host.iowait.high",
        "host.swap.active", "host.disk.unresponsive"},
       {"gpudoctor check", "nvidia-smi dmon -s pucvmet -c 10", "iostat -x 1 5"}},
      {"web-page-wont-open",
       "A web page or service will not open",
       {"web", "page", "website", "http", "won't open", "cannot open", "can't open", "unreachable"},
       "Name resolution, a lost path or a saturated uplink; compare the target with a reference "
       "site to tell this host from the far end.",
       {"net.target.unresolved", "net.loss", "net.latency.high", "net.localize", "net.link",
        "net.nic.saturated"},
       {"gpudoctor check --probes reachability,nic --target HOST:443 --reference 1.1.1.1:443",
        "getent hosts HOST", "mtr -rwc 20 HOST"}},
      {"game-lag",
       "Game or interactive service lags / stutters",
       {"game", "lag", "stutter", "jitter"},
       "Latency spikes come from a saturated link (bufferbloat), packet loss, a throttled GPU or "
       "a CPU-starved host.",
       {"net.latency.high", "net.loss", "net.nic.saturated", "gpu.thermal", "gpu.clocks.low",
        "host.cpu.saturated"},
       {"gpudoctor check --target HOST", "mtr -rwc 50 HOST"}},
      {"bandwidth-full",
       "The bandwidth is full",
       {"bandwidth", "network full", "link full", "saturated", "uplink"},
       "This host's own NIC at its link speed: find who sends (a job, a backup, or malware).",
       {"net.nic.saturated", "net.outbound.heavy", "net.localize", "proc.suspicious"},
       {"gpudoctor check --probes nic,sockets,suspicious", "ss -tinp", "iftop -i IFACE"}},
      {"server-hot",
       "The server runs hot",
       {"hot", "temperature", "overheat", "thermal", "fan", "heat"},
       "GPU or CPU thermal throttling: blocked airflow, dust, failing fans, a hot room or inlet.",
       {"gpu.thermal", "gpu.fan", "gpu.hw_slowdown", "host.thermal"},
       {"gpudoctor check --probes nvml,kmsg", "nvidia-smi -q -d TEMPERATURE,PERFORMANCE"}},
  };
  return symptoms;
}

const Symptom* FindSymptom(std::string_view query) {
  std::string q;
  for (char c : query) q += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& s : Symptoms()) {
    if (q == s.key) return &s;
  }
  for (const auto& s : Symptoms()) {
    for (std::string_view p : s.phrases) {
      if (q.find(p) != std::string::npos) return &s;
    }
  }
  return nullptr;
}

}  // namespace gpudoctor
