// Pressure probe. Source: /proc/pressure/{cpu,memory,io} (PSI, kernel >= 4.20 with CONFIG_PSI
// and not booted with psi=0). Units: percent of wall time over 10/60/300 s, total stall in µs.
// Failure modes: no /proc/pressure → skipped("PSI not available"); a resource whose file is
// unreadable (EOPNOTSUPP when PSI is compiled in but disabled) or garbled is left absent; all
// three unusable → skipped with the first reason.
// References: Documentation/accounting/psi.rst.
#include <memory>

#include "parsers/pressure.h"
#include "probes/kept_proc_files.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {

ProbeOutput RunPressureProbe(const ProbeContext& ctx) {
  // Under watch the three files stay open from tick to tick.
  if (dynamic_cast<KeptFilesCarry*>(ctx.previous.get()) == nullptr &&
      !RootFs::Exists(ctx.fs().ProcPath("pressure"))) {
    return ProbeSkipped("PSI not available");
  }
  std::shared_ptr<KeptProcFiles> files =
      KeptProcFiles::ForRun(ctx, {"pressure/cpu", "pressure/memory", "pressure/io"});
  PressureFacts facts;
  std::string first_error;
  int parsed = 0;
  std::optional<PressureResource>* slots[] = {&facts.cpu, &facts.memory, &facts.io};
  for (size_t i = 0; i < files->size(); ++i) {
    auto text = files->Read(i, 64 << 10);
    if (!text.ok()) {
      if (first_error.empty()) first_error = text.status().ToString();
      continue;
    }
    auto res = ParsePressure(*text);
    if (!res.ok()) {
      if (first_error.empty()) first_error = files->path(i) + ": " + res.status().message();
      continue;
    }
    *slots[i] = *res;
    ++parsed;
  }
  if (parsed == 0) return ProbeSkipped("PSI not available: " + first_error);
  ProbeOutput out = ProbeOk([facts](Snapshot& s) { s.host.pressure = facts; });
  if (ctx.continuous) out.next = std::make_shared<KeptFilesCarry>(std::move(files));
  return out;
}

}  // namespace gpudoctor
