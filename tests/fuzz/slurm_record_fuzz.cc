// Fuzzes the Slurm drain record parser (sched/slurm_record.h): a record read back from the state
// directory may be torn, hand-edited or planted; it must parse or fail cleanly, and whatever
// parses must format to a record that parses to the same fields.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sched/slurm_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = gpudoctor::ParseSlurmDrainRecord(text);
  if (!r.ok()) return 0;
  if (r->node.empty() || r->reason.empty() || r->drained_at_unix_s < 0) __builtin_trap();
  auto again = gpudoctor::ParseSlurmDrainRecord(gpudoctor::FormatSlurmDrainRecord(*r));
  if (!again.ok() || again->node != r->node || again->reason != r->reason ||
      again->drained_at_unix_s != r->drained_at_unix_s) {
    __builtin_trap();
  }
  return 0;
}
