// Parsers of the non-NVIDIA kernel messages gpudoctor reads (signals.md §10-§11): PCIe AER
// reports, the hung-task detector, the OOM killer, machine checks and APEI hardware errors, NIC
// link changes and NETDEV WATCHDOG transmit timeouts, CPU thermal throttling, CPU stalls (soft and
// hard lockups, RCU stalls). Input is the message
// text after the kernel prefix. Each parser returns an event delta (count 1) that the aggregator
// folds into the event with the same key. Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "facts/kernel_facts.h"

namespace gpudoctor {

enum class SignalVerdict {
  kNoMatch,     // not this parser's line
  kEvent,       // a new occurrence: fold `event` in and count it
  kAttach,      // detail of the previous event of the same kind and subject (AER device/bit
                // lines): merge fields, do not count
  kRecognized,  // a known companion line with nothing to record
  kGarbled,     // the line's keywords matched but numbers/fields did not parse
};

struct SignalResult {
  SignalVerdict verdict = SignalVerdict::kNoMatch;
  KernelEvent event;
};

SignalResult ParseAerLine(std::string_view message);
SignalResult ParseHungTaskLine(std::string_view message);
// memcg: the preceding "oom-kill:constraint=" line said CONSTRAINT_MEMCG.
SignalResult ParseOomLine(std::string_view message, bool memcg);
SignalResult ParseMceLine(std::string_view message);
SignalResult ParseNetLinkLine(std::string_view message);
SignalResult ParseCpuThermalLine(std::string_view message);
// CPUs the kernel found stuck: soft lockups ("BUG: soft lockup - CPU#N stuck for Ns! [comm:pid]",
// subject "soft lockup", the task in `processes`, the seconds in max_blocked_s, the CPU in `ids`),
// hard lockups ("Watchdog detected hard LOCKUP on cpu N") and RCU stall reports (subject
// "RCU stall (rcu_sched)").
SignalResult ParseCpuStallLine(std::string_view message);

// The NVSwitch driver's error record, three lines per error (open-gpu-kernel-modules
// src/common/nvswitch: NVSWITCH_PRINT_SXID): "nvidia-nvswitch1: SXid (PCI:0000:aa:00.0): 24007,
// Fatal, Link 12 sourcetrack timeout error (First)" (also "Non-fatal, ...", "Correctable, ...",
// device-level "Fatal, <unit>, instance=..."), then "..., Severity 1 Engine instance 12 Sub-engine
// instance 00" (0 non-fatal, 1 fatal) and "..., Data {0x...}". The description line is kEvent
// (subject the switch's bus id, `xid` the SXid, nvlink_fatal, the link in `ids`, the text in
// error_names); the Severity line is kAttach (the caller counts it as the error when no
// description line of that switch and code came before it); the Data line is kRecognized.
SignalResult ParseSxidLine(std::string_view message);

// True for names of NVIDIA user-space tools and driver threads (nvidia-smi, nvidia-persistenced,
// nv-hostengine, dcgm*, nv_queue, nvc, the interrupt thread irq/NNN-nvidia).
bool IsNvidiaTaskName(std::string_view comm);

}  // namespace gpudoctor
