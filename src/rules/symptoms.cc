// Symptom table (data). Order matters: the first match wins, so specific symptoms come first.
// Phrases are in English and in Chinese as users say them (掉卡, 爆显存, 网页打不开, ...); the
// titles and reasoning are translated in po/zh_CN.po.
#include "rules/symptoms.h"

#include <cctype>

namespace gpudoctor {

const std::vector<Symptom>& Symptoms() {
  static const std::vector<Symptom> symptoms = {
      {"nvidia-smi-hangs",
       "nvidia-smi is slow or hangs",
       {"nvidia-smi", "nvidia smi", "smi", "命令卡住", "卡死不返回"},
       "A hung driver (GSP timeout, Xid 119/120, a lost GPU) leaves nvidia-smi in D state; without "
       "persistence mode every call re-initialises the GPUs and takes seconds.",
       {"driver.nvml_hang", "driver.nvml_slow", "proc.dstate", "kernel.hung_task",
        "kernel.cpu_stall", "driver.gsp_timeout", "gpu.xid", "gpu.lost", "driver.init_failed",
        "gpu.readings_failed", "driver.persistence_off"},
       {"gpudoctor check --probes nvml,processes,kmsg", "dmesg -T | grep -i -e xid -e nvrm",
        "ps -eo state,pid,wchan:32,comm | grep ^D"}},
      {"gpu-lost",
       "A GPU is missing or fell off the bus",
       {"lost", "missing", "fallen", "fell off", "card gone", "only 7", "fewer gpus", "掉卡",
        "卡掉了", "少了一张卡", "少卡", "识别不到", "找不到显卡", "显卡不见"},
       "The card stopped answering on PCIe (Xid 79, AER errors: power, riser, seating, heat) or "
       "the "
       "driver could not initialise it.",
       {"gpu.lost", "gpu.missing", "gpu.xid", "pcie.aer", "driver.init_failed", "gpu.nvml_error",
        "driver.module.kernel_mismatch", "driver.not_loaded"},
       {"gpudoctor check --probes nvml,pci_gpu,kmsg",
        "lspci -d 10de:", "dmesg -T | grep -i -e 'fallen off' -e AER -e xid"}},
      {"vram-full",
       "GPU memory (VRAM) is full / CUDA out of memory",
       {"vram", "out of memory", "cuda oom", "gpu memory", "memory full", "爆显存", "显存满",
        "显存不足", "显存不够", "显存溢出", "显存占满"},
       "Caching allocators and preallocating frameworks hold memory on purpose; leftover processes "
       "and long contexts (KV cache) fill the rest.",
       {"gpu.memory.full", "gpu.memory.thrashing", "gpu.util.low", "host.oom"},
       {"gpudoctor check --probes nvml",
        "nvidia-smi --query-compute-apps=pid,used_memory --format=csv"}},
      {"training-slow",
       "Training got slow (2 hours became 2 days)",
       {"training", "train", "epoch", "throughput", "slow job", "训练变慢", "训练慢", "训练",
        "跑得慢"},
       "Check in the expert's order: network (storage, peers), hardware (throttled, degraded "
       "PCIe/NVLink, Xids), software (stuck tasks), resources (CPU, I/O, memory starving the "
       "loaders).",
       {"net.localize",      "net.loss",           "net.ib.port",
        "net.ib.errors",     "gpu.thermal",        "gpu.power.brake",
        "gpu.hw_slowdown",   "gpu.clocks.low",     "gpu.pcie.degraded",
        "gpu.pcie.replays",  "gpu.nvlink.down",    "nvswitch.sxid",
        "kernel.cpu_stall",  "gpu.util.low",       "gpu.util.imbalance",
        "gpu.util.sawtooth", "gpu.util.underused", "gpu.memory.thrashing",
        "proc.dstate",       "host.cpu.saturated", "host.iowait.high",
        "host.pressure.io",  "host.swap.active",   "host.disk.unresponsive"},
       {"gpudoctor check", "nvidia-smi dmon -s pucvmet -c 10", "iostat -x 1 5"}},
      {"web-page-wont-open",
       "A web page or service will not open",
       {"web", "page", "website", "http", "won't open", "cannot open", "can't open", "unreachable",
        "网页打不开", "网站打不开", "打不开", "访问不了", "无法访问", "连不上"},
       "Name resolution, a lost path or a saturated uplink; compare the target with a reference "
       "site to tell this host from the far end.",
       {"net.target.unresolved", "net.http.failing", "net.http.slow", "net.target.unfinished",
        "net.loss", "net.latency.high", "net.localize", "net.link", "net.nic.saturated",
        "net.clients.degraded"},
       {"gpudoctor netcheck HOST:443  (run by the user on their own machine: own network, path "
        "or server?)",
        "gpudoctor check --probes reachability,nic --target HOST:443 --reference 1.1.1.1:443",
        "getent hosts HOST", "mtr -rwc 20 HOST"}},
      {"game-lag",
       "Game or interactive service lags / stutters",
       {"game", "lag", "stutter", "jitter", "游戏卡", "卡顿", "掉帧", "延迟高", "延迟大", "ping高",
        "抖动"},
       "Latency spikes come from a saturated link (bufferbloat), packet loss, a throttled GPU or "
       "a CPU-starved host.",
       {"net.latency.high", "net.target.jitter", "net.loss", "net.clients.degraded",
        "net.nic.saturated", "gpu.thermal", "gpu.clocks.low", "host.cpu.saturated",
        "host.pressure.cpu"},
       {"gpudoctor netcheck HOST:PORT  (run by the player on their own machine: own network, "
        "path or server?)",
        "gpudoctor check --target HOST", "mtr -rwc 50 HOST"}},
      {"server-compromised",
       "The server is compromised (malware, a miner, sending packets out)",
       {"malware", "miner", "mining", "virus", "hacked", "compromised", "poison", "中毒", "挖矿",
        "病毒", "木马", "被黑", "入侵", "往外发包", "矿机"},
       "A miner or bot shows as a process with a miner's name or pool port, a deleted or /tmp "
       "executable, busy CPUs or GPUs nobody scheduled, and heavy outbound traffic; unpatched "
       "packages are how it usually got in.",
       {"proc.suspicious", "net.outbound.heavy", "net.outbound.udp", "scan.malware",
        "scan.packages.changed", "scan.ssh_keys.changed", "scan.cron.changed", "net.nic.saturated",
        "host.cpu.saturated", "gpu.util.low", "host.updates.security"},
       {"gpudoctor check --probes suspicious,sockets,nic,boot", "gpudoctor scan --since 30d",
        "ss -tunap", "ls -l /proc/*/exe 2>/dev/null | grep -e deleted -e /tmp -e /dev/shm"}},
      {"bandwidth-full",
       "The bandwidth is full",
       {"bandwidth", "network full", "link full", "saturated", "uplink", "带宽跑满", "带宽满",
        "带宽", "网络跑满", "流量跑满", "跑满"},
       "This host's own NIC at its link speed: find who sends (a job, a backup, or malware).",
       {"net.nic.saturated", "net.outbound.heavy", "net.outbound.udp", "net.clients.degraded",
        "net.nic.errors", "net.nic.capacity_unknown", "net.localize", "proc.suspicious"},
       {"gpudoctor check --probes nic,sockets,suspicious", "ss -tinp", "iftop -i IFACE"}},
      {"server-hot",
       "The server runs hot",
       {"hot", "temperature", "overheat", "thermal", "fan", "heat", "过热", "温度高", "太热",
        "发烫", "风扇"},
       "GPU or CPU thermal throttling: blocked airflow, dust, failing fans, a hot room or inlet.",
       {"gpu.thermal", "gpu.temp.absolute", "gpu.fan", "gpu.hw_slowdown", "gpu.power.brake",
        "host.thermal", "host.inlet.temperature"},
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
