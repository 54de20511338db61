// Pressure probe. Source: /proc/pressure/{cpu,memory,io} (PSI, kernel >= 4.20 with CONFIG_PSI
// and not booted with psi=0). Units: percent of wall time over 10/60/300 s, total stall in µs.
// Failure modes: no /proc/pressure → skipped("PSI not available"); a resource whose file is
// unreadable (EOPNOTSUPP when PSI is compiled in but disabled) or garbled is left absent; all
// three unusable → skipped with the first reason.
// References: Documentation/accounting/psi.rst.
#include "parsers/pressure.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {

ProbeOutput RunPressureProbe(const ProbeContext& ctx) {
  if (!RootFs::Exists(ctx.fs().ProcPath("pressure"))) return ProbeSkipped("PSI not available");
  PressureFacts facts;
  std::string first_error;
  int parsed = 0;
  struct Resource {
    const char* file;
    std::optional<PressureResource>* slot;
  };
  for (Resource r :
       {Resource{"pressure/cpu", &facts.cpu}, Resource{"pressure/memory", &facts.memory},
        Resource{"pressure/io", &facts.io}}) {
    auto text = ctx.fs().ReadProc(r.file);
    if (!text.ok()) {
      if (first_error.empty()) first_error = text.status().ToString();
      continue;
    }
    auto res = ParsePressure(*text);
    if (!res.ok()) {
      if (first_error.empty())
        first_error = ctx.fs().ProcPath(r.file) + ": " + res.status().message();
      continue;
    }
    *r.slot = *res;
    ++parsed;
  }
  if (parsed == 0) return ProbeSkipped("PSI not available: " + first_error);
  return ProbeOk([facts](Snapshot& s) { s.host.pressure = facts; });
}

}  // namespace gpudoctor
