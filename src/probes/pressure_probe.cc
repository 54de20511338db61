// Pressure probe. Source: /proc/pressure/{cpu,memory,io} (PSI, kernel >= 4.20 with CONFIG_PSI
// and not booted with psi=0). Units: percent of wall time over 10/60/300 s, total stall in µs.
// Failure modes: no /proc/pressure → skipped("PSI not available"); a resource whose file is
// unreadable (EOPNOTSUPP when PSI is compiled in but disabled) or garbled is left absent; all
// three unusable → skipped with the first reason.
// References: Documentation/accounting/psi.rst.
#include <array>
#include <memory>

#include "core/kept_file.h"
#include "parsers/pressure.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {

namespace {

// Under watch the three files stay open from tick to tick (core/kept_file.h).
struct PressureCarry : ProbeCarry {
  PressureCarry(const RootFs& fs, bool keep)
      : files{KeptFile(fs.ProcPath("pressure/cpu"), keep),
              KeptFile(fs.ProcPath("pressure/memory"), keep),
              KeptFile(fs.ProcPath("pressure/io"), keep)} {}
  std::array<KeptFile, 3> files;
  std::string text;
};

}  // namespace

ProbeOutput RunPressureProbe(const ProbeContext& ctx) {
  std::shared_ptr<PressureCarry> carry;
  if (dynamic_cast<PressureCarry*>(ctx.previous.get()) != nullptr) {
    carry = std::static_pointer_cast<PressureCarry>(ctx.previous);
  } else {
    if (!RootFs::Exists(ctx.fs().ProcPath("pressure"))) return ProbeSkipped("PSI not available");
    carry = std::make_shared<PressureCarry>(ctx.fs(), ctx.continuous);
  }
  PressureFacts facts;
  std::string first_error;
  int parsed = 0;
  std::optional<PressureResource>* slots[] = {&facts.cpu, &facts.memory, &facts.io};
  for (size_t i = 0; i < carry->files.size(); ++i) {
    KeptFile& file = carry->files[i];
    if (Status s = file.Read(&carry->text, 64 << 10); !s.ok()) {
      if (first_error.empty()) first_error = s.ToString();
      continue;
    }
    auto res = ParsePressure(carry->text);
    if (!res.ok()) {
      if (first_error.empty()) first_error = file.path() + ": " + res.status().message();
      continue;
    }
    *slots[i] = *res;
    ++parsed;
  }
  if (parsed == 0) return ProbeSkipped("PSI not available: " + first_error);
  ProbeOutput out = ProbeOk([facts](Snapshot& s) { s.host.pressure = facts; });
  if (ctx.continuous) out.next = std::move(carry);
  return out;
}

}  // namespace gpudoctor
