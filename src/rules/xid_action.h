// What an Xid asks the operator to do: the Action of NVIDIA's Xid Catalog bucket for the code
// (xid_table.cc, catalog edition cited there), refined by what the kernel line itself says where
// the catalog makes the resolution conditional:
//   - Xid 94/95 containment tails "RST: Yes|No, D-RST: Yes|No": D-RST: Yes → drain_reset,
//     RST: Yes → reset_gpu; 94 without either → restart_app; 95 without D-RST → reset_gpu with
//     MIG (the error is contained to the GPU), drain_reset without MIG.
//   - Xid 154 "GPU recovery action changed from 0x0 (None) to 0xN (TEXT)": TEXT decides.
//   - Xid 144-150 (NVLink5) "<UNIT> Fatal|Nonfatal ...": Fatal → reset_gpu (BER events: watch);
//     Nonfatal → watch (TREX 147 / NVLPW_CTRL 148: none); 150 (MSE watchdog) → reset_gpu.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "facts/kernel_facts.h"
#include "findings/finding.h"

namespace gpudoctor {

// The catalog action of a code when nothing else is known (NVML events, fleet verdicts).
Action XidDefaultAction(int code);

// Xid 154's recovery-action text ("GPU Reset Required", "Node Reboot Required", "Drain and
// Reset", "Drain P2P", "None", "PF FLR", "OS Reboot"); nullopt for a text we do not know.
std::optional<Action> RecoveryActionFromText(std::string_view text);

struct XidDecision {
  Action action = Action::kWatch;
  std::string reason;  // one line: which bucket or which part of the line decided
};

// The action for one aggregated Xid event (kind kXid), its conditional cases decoded.
XidDecision DecideXidAction(const KernelEvent& e);

}  // namespace gpudoctor
